"""Part files: the rows of a group of sessions, one size-bounded Parquet file per frame.

A part is named once (``part-<run>-<n>``) and has one file of that name in every frame's
folder, ``<frame>/<part>.parquet``. A :class:`PartWriter` appends groups of sessions to
the open part, one row group per group (never one per session: see docs/export.md,
"Why row groups per batch"), and starts the next part once the largest of its files
holds :data:`PART_BYTES`. Where each session's rows are is returned as :data:`Rows`, one
``(offset, length)`` per frame in ``FRAME_NAMES`` order, for the manifest.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ledgerviz.export.parquet import dataset_schema, require_pyarrow
from ledgerviz.frames import FRAME_NAMES

if TYPE_CHECKING:
    import pyarrow as pa

PART_BYTES = 128 * 2**20
"""A part is closed once its largest frame file holds this many bytes."""

PART_SUFFIX = ".parquet"

PART_NAME = re.compile(r"part-[0-9a-f]{12}(-[0-9]{1,9}){1,2}")
"""What every part name is (the manifest is checked against it)."""

Rows = tuple[tuple[int, int], ...]
"""``(offset, length)`` of one session's rows in each frame's file, in ``FRAME_NAMES`` order."""


def run_stem() -> str:
    """Return a fresh ``part-<12 hex digits>`` stem: parts of different runs never clash."""
    return f"part-{uuid.uuid4().hex[:12]}"


def part_file(root: Path, name: str, part: str) -> Path:
    """Return the ``name`` frame's file of ``part`` in the dataset (or staging) at ``root``."""
    return root / name / f"{part}{PART_SUFFIX}"


class PartWriter:
    """Writes groups of sessions into parts ``<stem>-0``, ``<stem>-1``, ... under ``root``."""

    def __init__(self, root: Path, stem: str, limit: int = PART_BYTES) -> None:
        self._root, self._stem, self._limit = root, stem, limit
        self._count = 0
        self._part = ""
        self._sinks: list[Any] = []
        self._writers: list[Any] = []
        self._offsets = [0] * len(FRAME_NAMES)

    def add(self, tables: Sequence[pa.Table], lengths: Sequence[Sequence[int]]) -> list[
            tuple[str, Rows]]:
        """Append one group of sessions; return ``(part, rows)`` of each, in order.

        ``tables`` are the group's frames in ``FRAME_NAMES`` order, each holding the
        sessions' rows together and in the same session order; ``lengths[i]`` are the
        row counts of each session in ``tables[i]``.
        """
        if not self._writers:
            self._open()
        placed: list[list[tuple[int, int]]] = [[] for _ in lengths[0]] if lengths else []
        for i, (table, counts) in enumerate(zip(tables, lengths, strict=True)):
            if table.num_rows != sum(counts):
                raise ValueError(f"{FRAME_NAMES[i]}: {table.num_rows} rows, not {sum(counts)}")
            if table.num_rows:
                self._writers[i].write_table(table, row_group_size=table.num_rows)
            offset = self._offsets[i]
            for session, count in zip(placed, counts, strict=True):
                session.append((offset, count))
                offset += count
            self._offsets[i] = offset
        part = self._part
        if max(sink.tell() for sink in self._sinks) >= self._limit:
            self._close_part()
        return [(part, tuple(rows)) for rows in placed]

    def _open(self) -> None:
        """Open the next part's file in every frame."""
        pa = require_pyarrow()
        self._part = f"{self._stem}-{self._count}"
        self._count += 1
        for name in FRAME_NAMES:
            path = part_file(self._root, name, self._part)
            path.parent.mkdir(parents=True, exist_ok=True)
            sink = pa.OSFile(str(path), "wb")
            self._sinks.append(sink)
            self._writers.append(pa.parquet.ParquetWriter(sink, dataset_schema(name)))
        self._offsets = [0] * len(FRAME_NAMES)

    def _close_part(self) -> None:
        """Finish the open part's files (footers written, files closed)."""
        try:
            for writer in self._writers:
                writer.close()
        finally:
            for sink in self._sinks:
                sink.close()
            self._writers, self._sinks = [], []

    def __enter__(self) -> PartWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._close_part()


def gather(root: Path, name: str, placed: Sequence[tuple[str, Rows]]) -> pa.Table:
    """Return the ``name`` rows of each ``(part, rows)`` session of the dataset at ``root``,
    together in that order (each part's file is read once, and sessions whose rows follow
    on are one slice: a table of many small chunks is slow to write)."""
    pa = require_pyarrow()
    frame = FRAME_NAMES.index(name)
    ranges: list[list[Any]] = []  # [part, offset, length], rows that follow on joined
    for part, rows in placed:
        offset, length = rows[frame]
        if ranges and ranges[-1][0] == part and sum(ranges[-1][1:]) == offset:
            ranges[-1][2] += length
        else:
            ranges.append([part, offset, length])
    tables: dict[str, pa.Table] = {}
    pieces = []
    for part, offset, length in ranges:
        if part not in tables:
            tables[part] = pa.parquet.read_table(part_file(root, name, part))
        pieces.append(tables[part].slice(offset, length))
    return pa.concat_tables(pieces) if pieces else dataset_schema(name).empty_table()


__all__ = ["PART_BYTES", "PART_NAME", "PartWriter", "Rows", "gather", "part_file", "run_stem"]
