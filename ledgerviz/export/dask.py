"""The frames as Dask DataFrames, and the Parquet export run on a Dask cluster.

Quick start (``pip install "ledgerviz[dask]"``)::

    >>> from dask.distributed import Client               # doctest: +SKIP
    >>> client = Client("tcp://scheduler:8786")           # doctest: +SKIP
    >>> import ledgerviz.export.dask as lvd                      # doctest: +SKIP
    >>> calls = lvd.frames("sessions/**/*.jsonl", policy="fork").calls  # doctest: +SKIP
    >>> calls.groupby("tool").size().compute()            # doctest: +SKIP

Every partition is the frame of a group of files of about :data:`PARTITION_BYTES` (or of
``files_per_partition`` files), built by ``ledgerviz`` on a worker; see
``docs/export.md`` for the ``session`` categorical and the other categoricals.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from ledgerviz.api import Ledger
from ledgerviz.export.dataset import (
    ExportSummary,
    FileState,
    Head,
    batches,
    copy_sessions,
    fingerprint,
    finish_export,
    frame_of,
    key_of_head,
    plan_export,
    write_sessions,
)
from ledgerviz.export.parquet import empty_frames, restore_categories, string_categories
from ledgerviz.export.parts import PartWriter, run_stem
from ledgerviz.export.staging import staged
from ledgerviz.frames import FRAME_NAMES
from ledgerviz.ledger import read_session
from ledgerviz.ledger.formats import SNIFF_BYTES, claude_code, detect_format
from ledgerviz.ledger.formats.claude_code_sidechains import may_hold_sidechains
from ledgerviz.ledger.read import file_sessions
from ledgerviz.ledger.reader import unique_keys
from ledgerviz.ledger.sources import Found, SourceProblem, expand_path, open_input
from ledgerviz.recovery.analysis import POLICIES, Policy
from ledgerviz.wording import counted

DASK_HINT = 'pip install "ledgerviz[dask]"'
"""How to install what this module needs."""

PARTITION_BYTES = 16 << 20
"""Input bytes one partition reads by default: small files share a partition."""
_GLOB_CHARS = frozenset("*?[")
_HEADER_TASK = 100  # files whose head (``dataset.Head``) one task reads
_HASH_TASK = 20  # files one task hashes in an export

Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _require_dask() -> Any:
    """Return ``dask.dataframe``; raise ImportError with a pip hint when Dask is missing."""
    try:
        import dask.dataframe
        import fsspec  # noqa: F401  (Dask's own file layer; checked here, used on workers)
    except ImportError as error:
        raise ImportError(f"ledgerviz.export.dask needs Dask: {DASK_HINT}") from error
    return dask.dataframe


def _is_url(text: str) -> bool:
    """Return True for an fsspec URL (``s3://...``, ``file://...``), not a local path."""
    return "://" in text


def ledger_paths(source: Paths, storage_options: dict[str, Any] | None = None) -> list[str]:
    """Return every ledger file ``source`` names, in the order ``ledgerviz.load`` reads them.

    Local paths, folders and globs expand as a load expands them; fsspec URLs expand
    through their file system (a folder gives every ``*.jsonl`` below it, sorted).
    """
    if isinstance(source, list | tuple):
        return [path for item in source for path in ledger_paths(item, storage_options)]
    text = os.fspath(source)
    if not _is_url(text):
        return [str(path) for path in expand_path(text)]
    import fsspec

    fs, path = fsspec.core.url_to_fs(text, **(storage_options or {}))
    if _GLOB_CHARS.intersection(path):
        found = sorted(fs.glob(path))
    elif fs.isdir(path):
        found = sorted(p for p in fs.find(path) if p.endswith(".jsonl"))
    else:
        found = [path]
    if not found:
        raise FileNotFoundError(f"{text}: no ledger file here")
    return [fs.unstrip_protocol(p) for p in found]


def _open(path: str, storage_options: dict[str, Any] | None) -> Any:
    """Return a binary stream of ``path``: an fsspec URL through fsspec, a local path as
    every input is opened (``sources.open_input``: never blocks, regular files only)."""
    if not _is_url(path):
        return open_input(path)
    import fsspec

    return fsspec.open(path, "rb", **(storage_options or {})).open()


def _content(path: str, storage_options: dict[str, Any] | None) -> Any:
    """Return the bytes of ``path``, or the problem of a file that is no regular file or
    cannot be read."""
    try:
        with _open(path, storage_options) as stream:
            return stream.read()
    except OSError as error:
        return SourceProblem.of(error)


def _head(path: str, storage_options: dict[str, Any] | None) -> tuple[bytes, bytes]:
    """Return the lines of ``path`` up to its first one that is not blank (where its key
    comes from, ``dataset.Head``) and its start as a load sniffs it (the first
    ``SNIFF_BYTES``, or those lines when longer); both empty when it cannot be read."""
    try:
        with _open(path, storage_options) as stream:
            head = Head()
            while not head.complete and (line := stream.readline()):
                head.take(line)
            return head.bytes, head.bytes + stream.read(max(0, SNIFF_BYTES - len(head.bytes)))
    except OSError:
        return b"", b""


def session_keys(paths: Sequence[str], storage_options: dict[str, Any] | None = None) -> list[str]:
    """Return the session keys of the files ``paths``, as ``ledgerviz.load(paths)`` gives
    them: each file's own, then those of the sessions it holds inline.

    Reads each file's lines up to its first one that is not blank (where its key comes
    from), and the whole of a Claude Code transcript whose bytes may hold inline
    sidechains, in tasks of 100 files on the active Dask scheduler (object storage
    answers many reads at once).
    """
    return [key for keys in _keys_and_sizes(paths, storage_options)[0] for key in keys]


def _keys_and_sizes(paths: Sequence[str], storage_options: dict[str, Any] | None
                    ) -> tuple[list[list[str]], list[int]]:
    """Return the session keys of each of ``paths`` (see :func:`session_keys`) and each
    file's size in bytes."""
    _require_dask()
    import dask

    chunks = [paths[i : i + _HEADER_TASK] for i in range(0, len(paths), _HEADER_TASK)]
    found = dask.compute(*[dask.delayed(_natural_keys)(c, storage_options) for c in chunks])
    pairs = [pair for chunk in found for pair in chunk]
    owners = [path for path, (keys, _) in zip(paths, pairs, strict=True) for _ in keys]
    unique = iter(unique_keys(owners, [key for keys, _ in pairs for key in keys]))
    return ([[next(unique) for _ in keys] for keys, _ in pairs], [size for _, size in pairs])


def _natural_keys(paths: Sequence[str], storage_options: dict[str, Any] | None
                  ) -> list[tuple[list[str], int]]:
    """Return the keys the reader gives each file alone (its own, from its head,
    then its inline sessions'), and its size."""
    found = []
    for path in paths:
        line, head = _head(path, storage_options)
        keys = [key_of_head(path, line)]
        if detect_format(head).name == claude_code.NAME:
            content = _content(path, storage_options)
            if isinstance(content, bytes) and may_hold_sidechains(content):
                keys += [child.key for child in read_session(path, content).children]
        found.append((keys, _size(path, storage_options)))
    return found


def _size(path: str, storage_options: dict[str, Any] | None) -> int:
    """Return the size of ``path`` in bytes (0 when it cannot be had: such a file's problem
    is reported where it is read)."""
    import fsspec

    try:
        fs, inner = fsspec.core.url_to_fs(path, **(storage_options or {}))
        return int(fs.size(inner) or 0)
    except OSError:
        return 0


def partition_groups(sizes: Sequence[int], limit: int = PARTITION_BYTES) -> list[range]:
    """Return consecutive groups of file positions, each of at most ``limit`` bytes of
    ``sizes`` (a larger file alone): ``partition_groups([5, 5, 5], 10)`` is
    ``[range(0, 2), range(2, 3)]``."""
    groups: list[range] = []
    start, total = 0, 0
    for i, size in enumerate(sizes):
        if i > start and total + size > limit:
            groups.append(range(start, i))
            start, total = i, 0
        total += size
    if len(sizes) > start:
        groups.append(range(start, len(sizes)))
    return groups


class DaskFrames(Mapping[str, Any]):
    """The Dask DataFrames :func:`frames` returns: by attribute like ``Ledger.frames``
    (``.calls``) or by name (``["calls"]``), in ``FRAME_NAMES`` order."""

    def __init__(self, frames: dict[str, Any]) -> None:
        self._frames = frames

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_frames"][name]
        except KeyError:
            raise AttributeError(f"no frame {name!r}; frames are {FRAME_NAMES}") from None

    def __getitem__(self, name: str) -> Any:
        return self._frames[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._frames)

    def __len__(self) -> int:
        return len(self._frames)

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._frames]


def _partition(
    group: Sequence[tuple[str, list[str]]],
    name: str,
    policy: Policy,
    keys: Sequence[str],
    storage_options: dict[str, Any] | None,
) -> pd.DataFrame:
    """Return the ``name`` frame of one group of files (runs on a worker), each given with
    the keys of its sessions (its own, then those it holds inline)."""
    logs = []
    for path, file_keys in group:
        content = _content(path, storage_options)
        sessions = file_sessions(read_session(path, content))
        if len(sessions) != len(file_keys):
            raise ValueError(f"{path}: holds {counted(len(sessions), 'session')}, but "
                             f"{len(file_keys)} when the Dask frames were made: it changed "
                             "since; make the frames again")
        logs += [replace(log, key=key) for log, key in zip(sessions, file_keys, strict=True)]
    frame = string_categories(frame_of(Ledger(logs), policy, name))
    frame["session"] = frame["session"].cat.set_categories(pd.Index(list(keys), dtype=object))
    return frame


def _meta(name: str, keys: Sequence[str]) -> pd.DataFrame:
    """Return the typed empty ``name`` frame Dask is told each partition looks like.

    ``session`` knows every key; a fixed vocabulary keeps its categories; every other
    categorical is marked unknown (each partition has categories of its own).
    """
    from dask.dataframe.utils import clear_known_categories

    meta = empty_frames()[name].copy()
    meta["session"] = meta["session"].cat.set_categories(pd.Index(list(keys), dtype=object))
    unknown = [
        column
        for column, dtype in meta.dtypes.items()
        if isinstance(dtype, pd.CategoricalDtype) and column != "session"
        and not len(dtype.categories)
    ]
    return clear_known_categories(meta, cols=unknown)


def frames(
    source: Paths,
    policy: Policy = "recorded",
    *,
    files_per_partition: int | None = None,
    storage_options: dict[str, Any] | None = None,
) -> DaskFrames:
    """Return every frame of the ledger files in ``source`` as a Dask DataFrame
    (``.calls`` or ``["calls"]``).

    One task per group of files (``dask.dataframe.from_map``), each building
    ``frames.<name>`` of its files under ``policy``: consecutive files of at most
    :data:`PARTITION_BYTES` together (a larger file alone), or ``files_per_partition``
    files when given. The session keys and sizes are read now (each file's head, and whole
    the Claude Code transcripts that may hold inline sessions: :func:`session_keys`);
    nothing else is read until a frame is computed. A file's inline sessions are in its
    partition, after its own.
    """
    dd = _require_dask()
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if files_per_partition is not None and files_per_partition < 1:
        raise ValueError(f"files_per_partition must be >= 1, not {files_per_partition}")
    paths = ledger_paths(source, storage_options)
    file_keys, sizes = _keys_and_sizes(paths, storage_options)
    keys = [key for found in file_keys for key in found]
    pairs = list(zip(paths, file_keys, strict=True))
    ranges = (partition_groups(sizes) if files_per_partition is None
              else [range(i, min(i + files_per_partition, len(pairs)))
                    for i in range(0, len(pairs), files_per_partition)])
    groups = [pairs[r.start : r.stop] for r in ranges]
    return DaskFrames({
        name: dd.from_map(
            _partition,
            groups,
            name=name,
            policy=policy,
            keys=keys,
            storage_options=storage_options,
            meta=_meta(name, keys),
            label=f"ledgerviz-{name}",
            enforce_metadata=False,
        )
        for name in FRAME_NAMES
    })


def in_process(frame: pd.DataFrame, name: str, keys: Sequence[str]) -> pd.DataFrame:
    """Return a computed ``name`` frame with the categories of the in-process frame.

    A computed Dask frame has the union of its partitions' categories, in the order
    they came; this gives every data-dependent categorical its sorted categories, as
    ``ledgerviz.load(paths).recovery(policy).frames.<name>`` has them, and a fresh index.
    """
    return restore_categories(frame.reset_index(drop=True), name, keys)


def _fingerprints(
    items: Sequence[tuple[Found, FileState | None]],
) -> list[tuple[FileState, bool] | SourceProblem]:
    """Return :func:`ledgerviz.export.dataset.fingerprint` of each ``(file, known)`` item."""
    return [fingerprint(found, known) for found, known in items]


def _write_part(states: Sequence[FileState], staging: Path, stem: str, policy: Policy
                ) -> tuple[list[str], list[FileState]]:
    """Write ``states``' files into parts ``<stem>-0``, ... (runs on a worker)."""
    with PartWriter(staging, stem) as writer:
        return write_sessions(states, writer, policy)


def export(
    source: Paths,
    out_dir: str | os.PathLike[str],
    policy: Policy = "recorded",
    *,
    files_per_task: int | None = None,
) -> ExportSummary:
    """Run ``ledgerviz export`` on the active Dask scheduler (a ``Client``'s cluster).

    The workers hash the files (``files_per_task`` or 20 per task) and write the changed
    ones into staged parts, one task per batch of ``ledgerviz export`` (64 MiB of input or
    2,000 files), or per ``files_per_task`` files when given: each task writes its own
    part, so fewer, larger tasks give fewer files. This process plans the run, copies the
    unchanged sessions of rewritten parts, publishes the staged parts and writes the
    manifest (all or nothing, as ``ledgerviz export``). ``source`` and ``out_dir`` are
    local paths that every worker sees at the same place.
    """
    _require_dask()
    import dask

    sources = list(source) if isinstance(source, list | tuple) else [source]

    def fingerprints(
        items: list[tuple[Found, FileState | None]],
    ) -> list[tuple[FileState, bool] | SourceProblem]:
        size = files_per_task or _HASH_TASK
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        results = dask.compute(*[dask.delayed(_fingerprints)(chunk) for chunk in chunks])
        return [found for chunk in results for found in chunk]

    plan = plan_export(sources, out_dir, policy, fingerprints)
    groups = (batches(plan.to_write) if files_per_task is None else
              [plan.to_write[i : i + files_per_task]
               for i in range(0, len(plan.to_write), files_per_task)])
    stem = run_stem()
    with staged(plan.root) as staging:  # the folder held until the manifest is written
        tasks = [dask.delayed(_write_part)(group, staging, f"{stem}-{i}", policy)
                 for i, group in enumerate(groups)]
        results = dask.compute(*tasks)
        with PartWriter(staging, f"{stem}-{len(groups)}") as writer:
            copied = copy_sessions(plan.root, plan.to_copy, writer)
        errors = [key for task_errors, _ in results for key in task_errors]
        placed = [state for _, task_placed in results for state in task_placed]
        return finish_export(plan, placed + copied, errors)


__all__ = ["DaskFrames", "export", "frames", "in_process", "ledger_paths", "partition_groups",
           "session_keys"]
