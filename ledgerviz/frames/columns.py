"""Typed pandas columns from plain Python lists, built in bulk (no per-row DataFrame work)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

try:  # optional: it turns a list of ints and Nones into values and a mask in one pass
    import pyarrow as _pa
except ImportError:  # pragma: no cover - pyarrow is an optional dependency
    _pa = None

_NONE_TYPE = type(None)
_NAT = np.iinfo(np.int64).min
_INT64_MIN, _INT64_MAX = _NAT, np.iinfo(np.int64).max
_EXACT_IN_DOUBLE = 2.0**53


def int_values(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(int64 values, missing mask)``; anything that is not an int, or an int beyond
    int64 (a ledger may hold one), counts as missing."""
    try:
        return _int64_values(values)
    except OverflowError:
        return _int64_values([v if type(v) is int and _INT64_MIN <= v <= _INT64_MAX else None
                              for v in values])


def _int64_values(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Return ``_int_values`` of ``values``; raise OverflowError for an int beyond int64."""
    kinds = set(map(type, values))
    if kinds <= {int}:
        return _array(values, np.int64), np.zeros(len(values), dtype=bool)
    if kinds <= {int, _NONE_TYPE}:
        found = _ints_and_nones(values)
        if found is not None:
            return found
    else:
        values = [v if type(v) is int else None for v in values]
    objects = np.array(values, dtype=object)
    missing = np.equal(objects, None)
    return np.where(missing, 0, objects).astype(np.int64), missing


def _ints_and_nones(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """Return ``(int64 values, missing mask)`` of a list of ints and Nones, or None when a
    value is beyond the fast conversion (int64 with pyarrow, 2**53 without)."""
    if _pa is not None:
        try:
            ints = _pa.array(values, type=_pa.int64())
        except OverflowError:
            return None
        missing = ints.is_null().to_numpy(zero_copy_only=False, writable=True)
        return ints.fill_null(0).to_numpy(zero_copy_only=False, writable=True), missing
    # numpy turns None into NaN in a float array, far faster than object arrays;
    # the result is exact as long as every value is below 2**53 in magnitude.
    floats = np.array(values, dtype=float)
    missing = np.isnan(floats)
    numbers = np.where(missing, 0.0, floats)
    if np.abs(numbers).max(initial=0.0) < _EXACT_IN_DOUBLE:
        return numbers.astype(np.int64), missing
    return None


def _array(values: Sequence[Any], dtype: Any) -> np.ndarray:
    """Return ints or bools as a numpy array of ``dtype``; a list goes through ``np.fromiter``,
    which skips the shape discovery ``np.array`` does on every item of a list."""
    if isinstance(values, list):
        return np.fromiter(values, dtype=dtype, count=len(values))
    return np.array(values, dtype=dtype)


def int_column(values: Sequence[Any]) -> pd.arrays.IntegerArray:
    """Return a nullable ``Int64`` array; None and non-integers become <NA>."""
    numbers, missing = int_values(values)
    return pd.arrays.IntegerArray(numbers, missing)


def counts_column(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Return an int array of counts (none missing) as ``Int64``."""
    return pd.arrays.IntegerArray(values.astype(np.int64), np.zeros(len(values), dtype=bool))


def time_column(values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    """Return ``datetime64[ms, UTC]`` from epoch milliseconds; None becomes NaT."""
    numbers, missing = int_values(values)
    numbers[missing] = _NAT
    return pd.array(numbers.view("datetime64[ms]")).tz_localize("UTC")


def time_of(values: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Return ``datetime64[ms, UTC]`` from an int64 table column of epoch milliseconds (its
    missing value, int64's least, is NaT)."""
    return pd.array(values.view("datetime64[ms]")).tz_localize("UTC")


def category_column(
    values: Sequence[Any], categories: Sequence[str] | None = None
) -> pd.Categorical:
    """Return a categorical (``categories`` fixes the order and the allowed values).

    Without ``categories`` they are the sorted distinct values; None and values
    outside ``categories`` are missing.
    """
    if categories is None:
        return _inferred_category(values)
    code_of = {name: code for code, name in enumerate(categories)}
    codes = np.fromiter(map(code_of.get, values, repeat(-1)), dtype=np.int32, count=len(values))
    return pd.Categorical.from_codes(codes, categories=pd.Index(categories))


def _inferred_category(values: Sequence[Any]) -> pd.Categorical:
    """Return ``category_column`` of ``values`` without given categories: the sorted distinct
    values when there are some and all are strings (None: missing), else pandas' own
    inference. The values are numbered in one pass in C (``pandas.factorize``)."""
    objects = values if isinstance(values, np.ndarray) else np.fromiter(
        values, dtype=object, count=len(values))
    try:
        codes, distinct = pd.factorize(objects)
    except TypeError:  # an unhashable value (pandas is given a list, as it always was)
        return pd.Categorical(objects.tolist())
    names = distinct.tolist()
    absent = objects[codes < 0]  # factorize misses NaN and its kin as well as None
    if (not names or not all(type(name) is str for name in names)
            or absent.tolist().count(None) != len(absent)):
        return pd.Categorical(objects.tolist())
    ordered = sorted(names)
    code_of = {name: code for code, name in enumerate(ordered)}
    mapping = np.array([code_of[name] for name in names] + [-1],
                       dtype=_codes_type(len(ordered)))
    return pd.Categorical.from_codes(mapping[codes], categories=pd.Index(ordered))


def string_column(values: Sequence[Any]) -> pd.arrays.StringArray:
    """Return a ``string`` array; None becomes <NA>.

    When pandas keeps strings in pyarrow, a column of str and None is handed to pyarrow
    directly (several times faster than ``pd.array``, same array); anything else goes
    through ``pd.array``.
    """
    dtype = pd.StringDtype()
    if dtype.storage == "pyarrow":
        import pyarrow as pa

        try:  # an object array (a table column) is read without a list made of it
            strings = pa.chunked_array([pa.array(values, type=pa.large_string(),
                                                 from_pandas=isinstance(values, np.ndarray))])
        except (pa.ArrowException, TypeError, ValueError):
            strings = None  # a value that is no str: pd.array converts it
        if strings is not None:
            array = pd.arrays.ArrowStringArray(strings)
            if array.dtype == dtype:
                return array
    return pd.array(values, dtype=dtype)


def bool_column(values: Sequence[Any]) -> np.ndarray:
    """Return a numpy bool array."""
    return _array(values, bool)


def session_column(keys: Sequence[str], sessions: Sequence[int]) -> pd.Categorical:
    """Return the ``session`` categorical of rows whose session indices into ``keys`` are given."""
    codes = _array(sessions, np.int32)
    return pd.Categorical.from_codes(codes, categories=pd.Index(keys, dtype=object))


Converter = Any
"""A function turning one column's Python list into a pandas/numpy array."""

Column = list[Any] | pd.api.extensions.ExtensionArray
"""A column as a frame builder returns it: a Python list, or an array already typed."""


def assemble(
    keys: Sequence[str], columns: dict[str, Any], schema: dict[str, Converter]
) -> pd.DataFrame:
    """Return one DataFrame, ``session`` first, every other column typed per ``schema``.

    ``columns["session"]`` holds each row's session index into ``keys``; lists are
    converted by the schema, arrays a builder already typed are kept as they are.
    """
    frame: dict[str, Any] = {"session": session_column(keys, columns["session"])}
    for name, convert in schema.items():
        values = columns[name]
        frame[name] = convert(values) if isinstance(values, list) else values
    return pd.DataFrame(frame)


def transpose(rows: Sequence[Sequence[Any]], names: Sequence[str]) -> dict[str, list[Any]]:
    """Return equal-length rows as one list per column, the columns named ``names``.

    One pass over the rows per column (``zip(*rows)`` walks every row at once, for every
    column: two to three times slower over many rows).
    """
    return {name: list(map(itemgetter(slot), rows)) for slot, name in enumerate(names)}


def duration_column(values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    """Return ``timedelta64[ms]`` from millisecond counts; None becomes NaT."""
    numbers, missing = int_values(values)
    numbers[missing] = _NAT
    return pd.array(numbers.view("timedelta64[ms]"))


def typed(column: pd.Series) -> Any:
    """Return a frame column's values: its numpy array, or its pandas extension array."""
    return column.to_numpy() if isinstance(column.dtype, np.dtype) else column.array


def joined(head: Any, tail: Any) -> Any:
    """Return the typed column ``head`` followed by ``tail`` (numpy or pandas arrays of one
    type; categoricals of the same fixed categories)."""
    if isinstance(head, np.ndarray):
        return np.concatenate([head, tail])
    if isinstance(head, pd.Categorical):
        if not head.categories.equals(tail.categories):
            raise ValueError("only categoricals of the same categories join as they are")
        return pd.Categorical.from_codes(np.concatenate([head.codes, tail.codes]),
                                         categories=head.categories)
    return type(head)._concat_same_type([head, tail])


def joined_inferred(head: pd.Categorical, tail: pd.Categorical) -> pd.Categorical | None:
    """Return ``category_column`` of the values of ``head`` then ``tail``, two categoricals
    with inferred categories (each may hold categories its values no longer use), or None
    when a category is not a string."""
    head_used, tail_used = _used_categories(head), _used_categories(tail)
    if not head_used and not tail_used:  # no value, or missing ones only
        size = len(head) + len(tail)
        return pd.Categorical.from_codes(np.full(size, -1, dtype=np.int8),
                                         dtype=_INFERRED_EMPTY[size > 0])
    names = sorted({*head_used, *tail_used}) if all(
        type(name) is str for name in (*head_used, *tail_used)) else None
    if not names:
        return None
    code_of = {name: code for code, name in enumerate(names)}
    codes = [_recoded(part.codes, part.categories, code_of) for part in (head, tail)]
    return pd.Categorical.from_codes(np.concatenate(codes), categories=pd.Index(names))


_INFERRED_EMPTY = (pd.Categorical([]).dtype, pd.Categorical([None]).dtype)
"""The types ``category_column`` (pandas' inference) gives no values, and missing values
only."""


def coded_category_column(codes: np.ndarray, names: Sequence[Any]) -> pd.Categorical:
    """Return ``category_column`` of the values ``names[code]`` (code -1: None) without
    making them: the names some code uses, sorted, when they are strings."""
    used = np.bincount(codes[codes >= 0], minlength=len(names)) > 0
    held = [name for name, is_used in zip(names, used.tolist(), strict=True) if is_used]
    if not held:
        return pd.Categorical.from_codes(np.full(len(codes), -1, dtype=np.int8),
                                         dtype=_INFERRED_EMPTY[len(codes) > 0])
    if not all(name.__class__ is str for name in held):
        return category_column([None if code < 0 else names[code] for code in codes.tolist()])
    ordered = sorted(set(held))
    code_of = {name: code for code, name in enumerate(ordered)}
    mapping = np.array([code_of.get(name, -1) for name in names] + [-1],
                       dtype=_codes_type(len(ordered)))
    return pd.Categorical.from_codes(mapping[codes], categories=pd.Index(ordered))


def _codes_type(count: int) -> type:
    """Return the int type pandas keeps the codes of ``count`` categories in (the smallest
    that holds them and -1), so that codes made in it are not converted again."""
    return np.int8 if count < 127 else np.int16 if count < 32_767 else np.int32


def _used_categories(values: pd.Categorical) -> list[Any]:
    """Return the categories some value of ``values`` holds, in category order."""
    codes = values.codes.astype(np.intp) + 1  # -1 (missing) counts in the first slot
    held = np.bincount(codes, minlength=len(values.categories) + 1)[1:] > 0
    return values.categories[held].tolist()


def _recoded(codes: np.ndarray, categories: pd.Index, code_of: dict[str, int]) -> np.ndarray:
    """Return ``codes`` (into ``categories``) as codes into ``code_of``; -1 stays missing."""
    mapping = np.array([code_of.get(name, -1) for name in categories.tolist()] + [-1],
                       dtype=np.int32)
    return mapping[codes]  # code -1 picks the trailing -1
