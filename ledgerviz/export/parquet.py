"""The frames as Parquet: one Arrow schema per frame, and the conversions both ways.

Every column, ``session`` included, is in every file, typed by :func:`dataset_schema`:
the schema is derived from the typed empty frames (``build_frames([])``), so a file with
no rows still has every column typed. The session is a column (a string), so every key
reads back exactly, whatever it holds. pyarrow is optional (``pip install
"ledgerviz[parquet]"``); :func:`require_pyarrow` checks for it once and names the extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ledgerviz.frames import build_frames
from ledgerviz.frames.columns import category_column

if TYPE_CHECKING:
    import pyarrow as pa

PARQUET_HINT = 'pip install "ledgerviz[parquet]"'
"""How to install what Parquet export needs."""

_STRINGS = pd.Index([], dtype=str).dtype  # the dtype of string categories the frames make


@cache
def require_pyarrow() -> ModuleType:
    """Return ``pyarrow`` (with ``pyarrow.parquet`` loaded); raise ImportError with a pip hint."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError as error:
        raise ImportError(f"Parquet export needs pyarrow: {PARQUET_HINT}") from error
    return pyarrow


@cache
def empty_frames() -> dict[str, pd.DataFrame]:
    """Return the typed empty frames, by name: the source of every schema below."""
    return build_frames([]).all()


def _arrow_type(dtype: Any) -> pa.DataType:
    """Return the Arrow type a frame column of pandas ``dtype`` is stored as."""
    pa = require_pyarrow()
    if isinstance(dtype, pd.CategoricalDtype):
        return pa.dictionary(pa.int32(), pa.string())
    if isinstance(dtype, pd.StringDtype):
        return pa.large_string()
    if isinstance(dtype, pd.Int64Dtype):
        return pa.int64()
    if isinstance(dtype, pd.DatetimeTZDtype):
        return pa.timestamp(dtype.unit, tz="UTC")
    if dtype.kind == "m":
        return pa.duration(np.datetime_data(dtype)[0])
    if dtype.kind == "b":
        return pa.bool_()
    raise TypeError(f"no Parquet type for frame dtype {dtype}")


@cache
def dataset_schema(name: str) -> pa.Schema:
    """Return the Arrow schema of the ``name`` dataset and of each of its files:
    ``session`` (a string) first, then every other column of the frame."""
    pa = require_pyarrow()
    dtypes = empty_frames()[name].dtypes.drop("session")
    fields = [pa.field(column, _arrow_type(dtype)) for column, dtype in dtypes.items()]
    return pa.schema([pa.field("session", pa.string()), *fields],
                     metadata={"ledgerviz.frame": name})


def frame_table(frame: pd.DataFrame, name: str) -> pa.Table:
    """Return ``frame`` (one of the ``name`` frames) as an Arrow table, ``session`` a string."""
    pa = require_pyarrow()
    columns = string_categories(frame.drop(columns="session"))
    columns.insert(0, "session", frame["session"].astype(object))
    return pa.Table.from_pandas(columns, schema=dataset_schema(name), preserve_index=False)


def string_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with string categories in every categorical column.

    The frames type a categorical with no value by pandas' inference (object or float
    categories) and one with a non-string value (hostile input) by that value's type;
    pieces of a frame stored or concatenated apart (Parquet files, Dask partitions)
    need one categories type, so such categories become their ``str()``.
    """
    uniform = frame.copy(deep=False)
    for column, dtype in frame.dtypes.items():
        if isinstance(dtype, pd.CategoricalDtype) and dtype.categories.dtype != _STRINGS:
            categories = pd.Index([str(value) for value in dtype.categories], dtype=str)
            uniform[column] = frame[column].cat.rename_categories(categories)
    return uniform


def session_lengths(frame: pd.DataFrame) -> list[int]:
    """Return the row count of each session of ``frame``, in the order of its ``session``
    categories (the frames keep each session's rows together, in that order)."""
    codes = frame["session"].cat.codes.to_numpy()
    return np.bincount(codes, minlength=len(frame["session"].cat.categories)).tolist()


def pandas_frame(table: pa.Table, name: str, sessions: Sequence[str]) -> pd.DataFrame:
    """Return ``table`` (rows of the ``name`` dataset) as the in-process frame of ``sessions``."""
    frame = table.to_pandas(types_mapper=_pandas_types().get)
    frame["session"] = frame["session"].astype("category")
    return restore_categories(frame, name, sessions)


def restore_categories(frame: pd.DataFrame, name: str, sessions: Sequence[str]) -> pd.DataFrame:
    """Return ``frame`` with the categories an in-process ``name`` frame of ``sessions`` has.

    ``session``: the keys in load order; a fixed vocabulary (``status``, ``branch``,
    ``relation``): that vocabulary; every other categorical: its values, sorted. Frames
    put together from pieces (Parquet files, Dask partitions) need this, since each
    piece has categories of its own.
    """
    restored = frame.copy(deep=False)
    for column, dtype in empty_frames()[name].dtypes.items():
        if not isinstance(dtype, pd.CategoricalDtype):
            continue
        values = restored[column]
        if column == "session":
            keys = pd.Index(list(sessions), dtype=object)
            restored[column] = values.astype("category").cat.set_categories(keys)
        elif len(dtype.categories):
            restored[column] = values.astype("category").cat.set_categories(dtype.categories)
        else:  # typed as the frames type it: sorted strings (or pandas' own inference)
            present = values.astype(object).where(values.notna(), None)
            restored[column] = category_column(present.tolist())
    return restored[list(empty_frames()[name].columns)]


@cache
def _pandas_types() -> dict[Any, Any]:
    """Return the Arrow -> pandas dtypes that reading gives (the frames' own dtypes)."""
    pa = require_pyarrow()
    return {
        pa.int64(): pd.Int64Dtype(),
        pa.large_string(): pd.StringDtype(),
        pa.string(): pd.StringDtype(),
    }


__all__ = [
    "PARQUET_HINT",
    "dataset_schema",
    "frame_table",
    "pandas_frame",
    "require_pyarrow",
    "restore_categories",
    "session_lengths",
    "string_categories",
]
