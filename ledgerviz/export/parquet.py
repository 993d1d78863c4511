"""The frames as Parquet: one Arrow schema per frame, one file per session partition.

A dataset is a folder per frame with one hive partition per session::

    DIR/calls/session=<key, percent-encoded>/part-0.parquet

The ``session`` column lives in the folder name (hive partitioning), every other
column in the file, typed by :func:`file_schema`: the schema is derived from the
typed empty frames (``build_frames([])``), so a session with no rows still writes a
file with every column typed. pyarrow is optional (``pip install "ledgerviz[parquet]"``);
:func:`require_pyarrow` checks for it once and names the extra.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from ledgerviz.frames import FRAME_NAMES, build_frames
from ledgerviz.frames.columns import category_column

if TYPE_CHECKING:
    import pyarrow as pa

PARQUET_HINT = 'pip install "ledgerviz[parquet]"'
"""How to install what Parquet export needs."""

PART_NAME = "part-0.parquet"
"""The one file of each session partition."""

_STRINGS = pd.Index([], dtype=str).dtype  # the dtype of string categories the frames make
_MAX_FOLDER_NAME = 255  # bytes in one path component on common file systems


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
def file_schema(name: str) -> pa.Schema:
    """Return the Arrow schema of a ``name`` partition file (every column but ``session``)."""
    pa = require_pyarrow()
    dtypes = empty_frames()[name].dtypes.drop("session")
    fields = [pa.field(column, _arrow_type(dtype)) for column, dtype in dtypes.items()]
    return pa.schema(fields, metadata={"ledgerviz.frame": name})


def dataset_schema(name: str) -> pa.Schema:
    """Return the schema of the ``name`` dataset: ``session`` (from the folders) first."""
    pa = require_pyarrow()
    return pa.schema([pa.field("session", pa.string()), *file_schema(name)])


def partition_folder(key: str) -> str:
    """Return the hive folder name of session ``key`` (``session=`` + the key, URI-encoded)."""
    folder = "session=" + quote(key, safe="")
    if len(folder.encode()) > _MAX_FOLDER_NAME:
        raise ValueError(f"session key {key[:60]!r}... is too long for a partition folder name")
    return folder


def frame_table(frame: pd.DataFrame, name: str) -> pa.Table:
    """Return ``frame`` (one of the ``name`` frames) as an Arrow table without ``session``."""
    pa = require_pyarrow()
    columns = string_categories(frame.drop(columns="session"))
    return pa.Table.from_pandas(columns, schema=file_schema(name), preserve_index=False)


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


def session_slices(frame: pd.DataFrame) -> list[tuple[str, int, int]]:
    """Return ``(key, offset, length)`` of each session's rows (frames keep sessions together)."""
    codes = frame["session"].cat.codes.to_numpy()
    lengths = np.bincount(codes, minlength=len(frame["session"].cat.categories))
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    keys = frame["session"].cat.categories
    return [(str(keys[i]), int(offsets[i]), int(lengths[i])) for i in range(len(keys))]


def write_partitions(frame: pd.DataFrame, name: str, root: Path,
                     step: Callable[[int], Any] | None = None) -> None:
    """Write one ``name`` partition file per session of ``frame`` under ``root/name``.

    Each file is written beside its target under a dot name (which readers skip),
    then renamed over it, so a reader sees the old file or the new one, never half.
    ``step``, if given, is called with 1 for each file written.
    """
    pq = require_pyarrow().parquet
    table = frame_table(frame, name)
    for key, offset, length in session_slices(frame):
        folder = root / name / partition_folder(key)
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{PART_NAME}.tmp"
        pq.write_table(table.slice(offset, length), temporary)
        os.replace(temporary, folder / PART_NAME)
        if step is not None:
            step(1)


def read_frame(root: Path, name: str, sessions: Sequence[str]) -> pd.DataFrame:
    """Return the ``name`` frame of ``sessions`` (in that order) from the dataset at ``root``."""
    pa = require_pyarrow()
    import pyarrow.dataset as ds

    base = root / name
    files = [str(base / partition_folder(key) / PART_NAME) for key in sessions]
    schema = dataset_schema(name)
    partitioning = ds.partitioning(pa.schema([schema.field("session")]), flavor="hive")
    dataset = ds.dataset(
        files, schema=schema, format="parquet", partitioning=partitioning,
        partition_base_dir=str(base),
    )
    frame = dataset.to_table().to_pandas(types_mapper=_pandas_types().get)
    frame["session"] = frame["session"].astype("category")
    return restore_categories(frame, name, sessions)


def read_frames(root: Path, sessions: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Return every frame of ``sessions`` from the dataset at ``root``, by name."""
    return {name: read_frame(root, name, sessions) for name in FRAME_NAMES}


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
    "file_schema",
    "read_frame",
    "read_frames",
    "require_pyarrow",
    "restore_categories",
    "string_categories",
    "write_partitions",
]
