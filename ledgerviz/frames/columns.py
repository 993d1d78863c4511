"""Typed pandas columns from plain Python lists, built in bulk (no per-row DataFrame work)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

_NONE_TYPE = type(None)
_NAT = np.iinfo(np.int64).min


def _int_values(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(int64 values, missing mask)``; anything that is not an int counts as missing."""
    if not set(map(type, values)) <= {int, _NONE_TYPE}:
        values = [v if type(v) is int else None for v in values]
    objects = np.array(values, dtype=object)
    missing = np.equal(objects, None)
    return np.where(missing, 0, objects).astype(np.int64), missing


def int_column(values: Sequence[Any]) -> pd.arrays.IntegerArray:
    """Return a nullable ``Int64`` array; None and non-integers become <NA>."""
    numbers, missing = _int_values(values)
    return pd.arrays.IntegerArray(numbers, missing)


def time_column(values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    """Return ``datetime64[ms, UTC]`` from epoch milliseconds; None becomes NaT."""
    numbers, missing = _int_values(values)
    numbers[missing] = _NAT
    return pd.array(numbers.view("datetime64[ms]")).tz_localize("UTC")


def category_column(
    values: Sequence[Any], categories: Sequence[str] | None = None
) -> pd.Categorical:
    """Return a categorical (``categories`` fixes the order and the allowed values)."""
    return pd.Categorical(values, categories=categories)


def string_column(values: Sequence[Any]) -> pd.arrays.StringArray:
    """Return a ``string`` array; None becomes <NA>."""
    return pd.array(values, dtype="string")


def bool_column(values: Sequence[Any]) -> np.ndarray:
    """Return a numpy bool array."""
    return np.array(values, dtype=bool)


def session_column(keys: Sequence[str], lengths: Sequence[int]) -> pd.Categorical:
    """Return the ``session`` categorical: ``keys[i]`` repeated ``lengths[i]`` times."""
    codes = np.repeat(np.arange(len(keys), dtype=np.int32), lengths)
    return pd.Categorical.from_codes(codes, categories=pd.Index(keys, dtype=object))


Converter = Any
"""A function turning one column's Python list into a pandas/numpy array."""


def assemble(
    parts: Sequence[tuple[str, dict[str, list[Any]]]], schema: dict[str, Converter]
) -> pd.DataFrame:
    """Return one DataFrame from per-session column lists, ``session`` first, typed per schema."""
    keys = [key for key, _ in parts]
    first = next(iter(schema))
    lengths = [len(columns[first]) for _, columns in parts]
    frame: dict[str, Any] = {"session": session_column(keys, lengths)}
    for name, convert in schema.items():
        if len(parts) == 1:
            merged = parts[0][1][name]
        else:
            merged = [value for _, columns in parts for value in columns[name]]
        frame[name] = convert(merged)
    return pd.DataFrame(frame)


def duration_column(values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    """Return ``timedelta64[ms]`` from millisecond counts; None becomes NaT."""
    numbers, missing = _int_values(values)
    numbers[missing] = _NAT
    return pd.array(numbers.view("timedelta64[ms]"))


def elapsed(starts: Sequence[Any], ends: Sequence[Any]) -> list[Any]:
    """Return ``end - start`` per row (None where either side is not an integer)."""
    return [
        end - start if type(start) is int and type(end) is int else None
        for start, end in zip(starts, ends, strict=True)
    ]
