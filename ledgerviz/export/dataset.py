"""Incremental Parquet export of ledger files: one dataset per frame, in size-bounded parts.

``export(paths, out_dir, policy)`` writes every frame of every session under ``policy``
into part files (``export.parts``: many sessions per file, ``session`` a column) and a
manifest, ``ledgerviz-export.json``, that records each input file's size, modification
time, SHA-256, and the part and rows its session lives in. The next run into the same
folder skips every file whose size and mtime are unchanged (without reading it) or whose
content hash is unchanged. Changed and new files are read and written to new parts; a
part that held a changed or removed session is rewritten from its own Parquet rows
(its other sessions are not read again), so the dataset always mirrors the inputs of the
last run. Each file is read, recovered and written on its own terms (its frames do not
depend on which other files are exported with it).

A run is all or nothing: its parts are staged and published only once all are written
(``export.staging``); the manifest then names the new parts, and the parts it no longer
names are removed. A file found in a folder that is no regular file or cannot be read is
skipped with its problem (``ExportSummary.skipped``); the others are exported.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np
import pandas as pd

from ledgerviz.api import Ledger, load
from ledgerviz.export.manifest import (
    FORMAT,
    MANIFEST_NAME,
    ExportError,
    read_manifest,
    write_manifest,
)
from ledgerviz.export.parquet import (
    dataset_schema,
    frame_table,
    pandas_frame,
    require_pyarrow,
    restore_categories,
    session_lengths,
)
from ledgerviz.export.parts import (
    PART_BYTES,
    PART_SUFFIX,
    PartWriter,
    Rows,
    gather,
    part_file,
    run_stem,
)
from ledgerviz.export.staging import STAGING_NAME, publish, staged
from ledgerviz.frames import FRAME_NAMES, build_frames
from ledgerviz.ledger import SessionLog, UnreadableSourceError, read_session
from ledgerviz.ledger.reader import unique_keys
from ledgerviz.ledger.sources import (
    Found,
    SourceProblem,
    expand_found,
    open_input,
    read_error_text,
)
from ledgerviz.progress import FILES_THRESHOLD, progress
from ledgerviz.recovery.analysis import POLICIES, Policy

_BATCH_BYTES = 64 * 2**20  # files are loaded together up to this many bytes of input
_BATCH_FILES = 2000
_CHUNK = 2**20
_CATALOG = "subagent/catalog"
_SMALL_PARTS = 4  # more small parts than this (under a quarter of PART_BYTES) are merged


@dataclass(frozen=True, slots=True)
class FileState:
    """What the manifest records of one input file."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    natural_key: str
    """The key the reader gives the file alone (header id, else file stem)."""
    key: str = ""
    """The session key in the dataset (``natural_key`` made unique, as a load does)."""
    part: str = ""
    """The part its rows are in ("" until written)."""
    rows: Rows = ()
    """Where its rows are in each of the part's files."""
    inline: tuple[tuple[str, Rows], ...] = ()
    """The key and rows of each session the file holds inline (Claude Code sidechains),
    in the same part, after its own rows."""

    def places(self) -> list[tuple[str, str, Rows]]:
        """Return ``(key, part, rows)`` of every session of the file: its own, then inline."""
        return [(key, self.part, rows) for key, rows in ((self.key, self.rows), *self.inline)]


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What one export run did."""

    root: Path
    policy: Policy
    sessions: list[str]
    """Every session key of the dataset, in input order."""
    written: list[str]
    """Input files (re)exported in this run."""
    unchanged: list[str]
    """Input files skipped: unchanged since the last run."""
    removed: list[str]
    """Files of the last run no longer given: their partitions were removed."""
    error_sessions: list[str]
    """Written sessions with error-level diagnostics (``ledgerviz check`` lists them)."""
    skipped: list[tuple[str, str]]
    """``(path, problem)`` of each file found in a folder that could not be exported."""


def input_files(paths: Iterable[str | os.PathLike[str]]) -> list[Found]:
    """Return every ledger file ``paths`` names, once each, in order, by absolute path
    (one found with a problem by the path it was found at, which that problem is about)."""
    files: dict[str, Found] = {}
    for path in paths:
        for found in expand_found(os.fspath(path)):
            real = os.path.realpath(found.path)
            files.setdefault(real, found if found.problem else found._replace(path=real))
    return list(files.values())


def check_output_dir(
    out_dir: str | os.PathLike[str], paths: Iterable[str | os.PathLike[str]],
    files: Sequence[Found],
) -> Path:
    """Return ``out_dir`` resolved; raise ``ExportError`` if exporting there is unsafe.

    Refused: a folder that is an input, lies inside an input folder or holds an input
    file; a path that is not a folder; a non-empty folder that holds no manifest (it
    is not an export, and stale partitions would be deleted from it).
    """
    root = Path(os.path.realpath(out_dir))
    if root.exists() and not root.is_dir():
        raise ExportError(f"{out_dir} is not a folder")
    folders = [Path(os.path.realpath(p)) for p in paths if Path(p).is_dir()]
    for folder in folders:
        if root == folder or folder in root.parents:
            raise ExportError(f"{out_dir} is inside the input folder {folder}; choose another")
    for file in (found.path for found in files):
        if root in Path(file).parents or root == Path(file):
            raise ExportError(f"{out_dir} holds the input {file}; choose another folder")
    held = [p for p in root.iterdir() if p.name != STAGING_NAME] if root.is_dir() else []
    if held and not (root / MANIFEST_NAME).is_file():
        raise ExportError(
            f"{out_dir} is not empty and holds no {MANIFEST_NAME}: not a ledgerviz export "
            "folder; give a new or empty folder"
        )
    return root


def known_states(manifest: dict[str, Any] | None, policy: Policy, read_format: str | None = None
                 ) -> dict[str, FileState]:
    """Return the manifest's files by path; none when its format, schema, policy or the
    format the files were read in (``read_format``, None: each file's own) differs, or
    when it has no ``inline`` list (written before inline sessions were exported: its
    Claude Code files' sidechains are log-only events of the main session)."""
    if manifest is None or manifest["format"] != FORMAT or "inline" not in manifest:
        return {}
    same = (manifest["schema"], manifest["policy"], manifest.get("read_format"))
    if same != (schema_id(), policy, read_format):
        return {}
    return {state.path: state for state in manifest_states(manifest)}


def schema_id() -> str:
    """Return a short hash of every frame's Parquet schema (a change means a full re-export)."""
    text = "\n".join(f"{name}: {dataset_schema(name)}" for name in FRAME_NAMES)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprint(
    found: Found, known: FileState | None
) -> tuple[FileState, bool] | SourceProblem:
    """Return the file's state and whether it changed since ``known``.

    Same size and mtime as ``known``: unchanged, the file is not read. Otherwise the
    content is hashed; the same hash is unchanged too (a touched file). A file found in
    a folder that is no regular file or cannot be read gives its problem; one named
    directly raises ``UnreadableSourceError``.
    """
    path = found.path
    try:
        if found.problem:
            return found.problem
        with open_input(path) as stream:
            info = os.fstat(stream.fileno())
            if known is not None and (known.size, known.mtime_ns) == (
                    info.st_size, info.st_mtime_ns):
                return known, False
            digest, head = hashlib.sha256(), Head()
            while chunk := stream.read(_CHUNK):
                head.take(chunk)
                digest.update(chunk)
    except OSError as error:
        if found.walked:
            return SourceProblem.of(error)
        raise UnreadableSourceError(f"{path}: {read_error_text(error)}") from error
    sha = digest.hexdigest()
    if known is not None and known.sha256 == sha:
        return replace(known, size=info.st_size, mtime_ns=info.st_mtime_ns), False
    natural_key = key_of_head(path, head.bytes)
    return FileState(path, info.st_size, info.st_mtime_ns, sha, natural_key), True


class Head:
    """The start of a file, taken chunk by chunk, up to the end of its first line that is
    not blank (the line a reader takes a file's key from)."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._line_start = 0
        self.complete = False
        """Whether the head ends with the newline of a line that is not blank."""

    @property
    def bytes(self) -> bytes:
        """Return the head taken so far."""
        return bytes(self._data)

    def take(self, chunk: bytes) -> None:
        """Add what ``chunk`` holds of the head (nothing once it is complete)."""
        start = 0
        while not self.complete and start < len(chunk):
            newline = chunk.find(b"\n", start)
            stop = len(chunk) if newline < 0 else newline + 1
            self._data += chunk[start:stop]
            start = stop
            if newline >= 0:
                self.complete = bool(self._data[self._line_start:].strip())
                self._line_start = len(self._data)


def key_of_head(path: str, head: bytes) -> str:
    """Return the key the reader gives the file at ``path`` alone, from its ``head``: its
    lines up to its first one that is not blank (``Head``).

    Every format takes a file's key from its first record, the line that ends the head:
    a dsh header on line 1 (after a blank line: none), a Codex ``session_meta``, a Gemini
    header, else the file stem (a Claude Code file is keyed by its stem). A head without
    its newline is the whole file: its last line, which the dsh reader drops as a torn
    tail and the other formats read when it is a whole record (``docs/formats.md``).
    """
    return read_session(path, head).key


def frame_of(ledger: Ledger, policy: Policy, name: str) -> pd.DataFrame:
    """Return the ``name`` frame of ``ledger``'s sessions under ``policy``.

    No row depends on which other files are in ``ledger``: in a load, one session's
    ``subagent/catalog`` event can name another session's parent in ``lineage``, so
    when a session has such an event, ``lineage`` is built file by file (a file's own
    session anchors the sessions it holds inline, which follow it in ``ledger``).
    """
    view = ledger.recovery(policy)
    if name != "lineage" or not any(_catalogs(log) for log in ledger.sessions):
        return getattr(view.frames, name)
    files = groupby(ledger.sessions, key=lambda log: log.path)
    pieces = [build_frames([(log.key, log, view.analyses[log.key]) for log in logs]).lineage
              for _, logs in files]
    return restore_categories(pd.concat(pieces, ignore_index=True), name, ledger.keys)


def _catalogs(log: SessionLog) -> bool:
    """Return True when the session holds a ``subagent/catalog`` event (read from its typed
    table: the events' dicts, decoded on demand, are not decoded for it)."""
    table = log.event_table()
    return _CATALOG in table.type_names and table.type_names.index(_CATALOG) in table.type_code


def remove_unlisted(root: Path, parts: Iterable[str]) -> None:
    """Remove every entry of each frame's folder under ``root`` that is no file of
    ``parts`` (parts of earlier runs, and the session folders of export formats 1 and 2)."""
    wanted = {f"{part}{PART_SUFFIX}" for part in parts}
    for name in FRAME_NAMES:
        base = root / name
        if not base.is_dir():
            continue
        for entry in base.iterdir():
            if entry.name not in wanted and not entry.name.startswith("."):
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def write_sessions(states: Sequence[FileState], writer: PartWriter, policy: Policy,
                   format: str | None = None) -> tuple[list[str], list[FileState]]:
    """Read, recover and write ``states``' files with ``writer``; return the sessions with
    errors, and the states with the part and rows each was written to.

    The files are loaded together (frames across sessions are built in one pass), in
    ``format`` (None: each file's own); every session of a file is written, its own and
    those it holds inline (see :func:`inline_key`).
    """
    loaded = load([state.path for state in states], format=format)  # a bar for large files
    files = [[replace(log, key=state.key), *(replace(child, key=inline_key(state, child))
                                             for child in children)]
             for (log, *children), state in zip(_by_file(loaded), states, strict=True)]
    ledger = Ledger([log for file in files for log in file])
    frames = {name: frame_of(ledger, policy, name) for name in FRAME_NAMES}
    placed = writer.add([frame_table(frame, name) for name, frame in frames.items()],
                        [session_lengths(frame) for frame in frames.values()])
    errors = [log.key for log in ledger.sessions if log.has_errors]
    return errors, _placed_states(states, [[log.key for log in file] for file in files],
                                  iter(placed))


def _by_file(loaded: Ledger) -> list[list[SessionLog]]:
    """Return the sessions of ``loaded`` by file: each file's own, then those it holds
    inline (a load lists them after it)."""
    files: list[list[SessionLog]] = []
    for log in loaded.sessions:
        if files and log.path == files[-1][0].path:
            files[-1].append(log)
        else:
            files.append([log])
    return files


def inline_key(state: FileState, child: SessionLog) -> str:
    """Return the dataset key of ``child``, a session ``state``'s file holds inline: its
    own key (its header id), prefixed with ``<file key>/`` when the file's key is not its
    natural one (another file has it, e.g. a copy, whose inline sessions have the same
    ids). It depends on the file and the dataset's file keys alone, not on what else a
    run reads, so an incremental run gives the keys a full one does."""
    own = str(child.header.get("id") or child.key)
    return own if state.key == state.natural_key else f"{state.key}/{own}"


def _placed_states(states: Sequence[FileState], keys: Sequence[Sequence[str]],
                   placed: Iterator[tuple[str, Rows]]) -> list[FileState]:
    """Return ``states`` with the part and rows ``placed`` gives each of their sessions,
    in order (``keys``: each file's session keys, its own first)."""
    moved = []
    for state, file_keys in zip(states, keys, strict=True):
        part, rows = next(placed)
        inline = tuple((key, next(placed)[1]) for key in file_keys[1:])
        moved.append(replace(state, part=part, rows=rows, inline=inline))
    return moved


def copy_sessions(root: Path, states: Sequence[FileState], writer: PartWriter
                  ) -> list[FileState]:
    """Copy the rows of ``states`` from their parts at ``root`` with ``writer`` (one part
    at a time, no ledger read); return the states with their new part and rows."""
    by_part: dict[str, list[FileState]] = defaultdict(list)
    for state in states:
        by_part[state.part].append(state)
    moved = []
    for group in by_part.values():
        places = [place for state in group for place in state.places()]
        tables = [session_rows(root, name, group) for name in FRAME_NAMES]
        lengths = [[rows[i][1] for _, _, rows in places] for i in range(len(FRAME_NAMES))]
        placed = writer.add(tables, lengths)
        moved += _placed_states(group, [[key for key, _, _ in state.places()]
                                        for state in group], iter(placed))
    return moved


class Sized(Protocol):
    """A file with its size in bytes (a ``FileState``, or any file to read in batches)."""

    @property
    def size(self) -> int: ...


SizedFile = TypeVar("SizedFile", bound=Sized)


def batches(states: Sequence[SizedFile]) -> list[list[SizedFile]]:
    """Return ``states`` in groups of at most 64 MiB of input or 2,000 files (one if larger)."""
    groups: list[list[SizedFile]] = []
    size = 0
    for state in states:
        if not groups or size + state.size > _BATCH_BYTES or len(groups[-1]) >= _BATCH_FILES:
            groups.append([])
            size = 0
        groups[-1].append(state)
        size += state.size
    return groups


def manifest_document(policy: Policy, states: Sequence[FileState],
                      read_format: str | None = None) -> dict[str, Any]:
    """Return the manifest of a dataset of ``states`` under ``policy``, read in
    ``read_format`` (None: each file's own)."""
    return {
        "format": FORMAT,
        "schema": schema_id(),
        "policy": policy,
        "read_format": read_format,
        "sessions": dataset_keys(states),
        "files": [_row(state) for state in states],
        "inline": [{"file": state.path, "key": key, "rows": _rows_of(rows)}
                   for state in states for key, rows in state.inline],
    }


def dataset_keys(states: Sequence[FileState]) -> list[str]:
    """Return the key of every session of ``states``' files: each file's, then its inline."""
    return [key for state in states for key, _, _ in state.places()]


def _row(state: FileState) -> dict[str, Any]:
    """Return the manifest row of one file (``rows`` by frame name; its inline sessions
    are rows of the manifest's ``inline``)."""
    row = {name: getattr(state, name) for name in FileState.__slots__ if name != "inline"}
    row["rows"] = _rows_of(state.rows)
    return row


def _rows_of(rows: Rows) -> dict[str, list[int]]:
    """Return ``rows`` as the manifest records them: ``[offset, length]`` by frame name."""
    return {name: list(pair) for name, pair in zip(FRAME_NAMES, rows, strict=True)}


def _rows_in(recorded: dict[str, list[int]]) -> Rows:
    """Return the rows a (checked) manifest records as ``[offset, length]`` by frame."""
    return tuple((offset, length) for offset, length in recorded.values())


def manifest_states(manifest: dict[str, Any]) -> list[FileState]:
    """Return the state of every file a (checked) manifest records, with its inline
    sessions (``inline``: none in a manifest written before they were exported)."""
    inline: dict[str, list[tuple[str, Rows]]] = defaultdict(list)
    for entry in manifest.get("inline", []):
        inline[entry["file"]].append((entry["key"], _rows_in(entry["rows"])))
    return [FileState(**{**row, "rows": _rows_in(row["rows"]),
                         "inline": tuple(inline[row["path"]])}) for row in manifest["files"]]


Fingerprints = Callable[[list[tuple[Found, FileState | None]]],
                        list[tuple[FileState, bool] | SourceProblem]]
"""Maps :func:`fingerprint` over ``(path, known state)`` pairs, in order."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What an export run has to do, decided before any partition is written."""

    root: Path
    policy: Policy
    states: list[FileState]
    """Every input file, in input order, with its dataset key (and its part, if kept)."""
    to_write: list[FileState]
    """Files to read and write."""
    to_copy: list[FileState]
    """Unchanged files whose part is rewritten: their rows are copied to a new part."""
    removed: list[str]
    skipped: list[tuple[str, str]]
    """``(path, problem)`` of each file found in a folder that cannot be exported."""
    read_format: str | None = None
    """The format every file is read in (None: each file's own)."""

    @property
    def staging(self) -> Path:
        """Return the folder this run's parts are written to before they are published."""
        return self.root / STAGING_NAME


def plan_export(
    paths: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    policy: Policy,
    fingerprints: Fingerprints | None = None,
    read_format: str | None = None,
) -> Plan:
    """Return the plan of exporting ``paths`` into ``out_dir`` under ``policy``.

    ``fingerprints(items)`` maps :func:`fingerprint` over ``(file, known)`` pairs
    (default: one after another; the Dask entry runs them on a cluster). A file skipped
    with its problem is no input of the dataset: its rows from a run before are removed
    as those of a file no longer given. Parts that hold a changed or removed session are
    rewritten, and so are the small parts once there are more than four of them.
    """
    if policy not in POLICIES:
        raise ExportError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    require_pyarrow()
    files = input_files(paths)
    root = check_output_dir(out_dir, paths, files)
    manifest = read_manifest(root)
    known = known_states(manifest, policy, read_format)
    items = [(file, known.get(file.path)) for file in files]
    results = fingerprints(items) if fingerprints else [fingerprint(*item) for item in items]
    skipped = [(file.path, result.message) for file, result in zip(files, results, strict=True)
               if isinstance(result, SourceProblem)]
    found = [result for result in results if not isinstance(result, SourceProblem)]
    found_states = [state for state, _ in found]
    keys = unique_keys([s.path for s in found_states], [s.natural_key for s in found_states])
    states = [replace(state, key=key) for (state, _), key in zip(found, keys, strict=True)]
    to_write = [
        state
        for state, (_, changed) in zip(states, found, strict=True)
        if changed or known[state.path].key != state.key or not _has_part(root, state.part)
    ]
    given = {state.path for state in states}
    last_run = [row["path"] for row in manifest["files"]] if manifest and known else []
    removed = [path for path in last_run if path not in given]
    dirty = {known[state.path].part for state in to_write if state.path in known}
    dirty |= {known[path].part for path in removed}
    dirty |= _small_parts(root, {state.part for state in states} - dirty)
    written = {state.path for state in to_write}
    to_copy = [state for state in states if state.path not in written and state.part in dirty]
    return Plan(root, policy, states, to_write, to_copy, removed, skipped, read_format)


def _has_part(root: Path, part: str) -> bool:
    """Return True when ``part`` is a part with a file in every frame."""
    return bool(part) and all(part_file(root, name, part).is_file() for name in FRAME_NAMES)


def _small_parts(root: Path, parts: set[str]) -> set[str]:
    """Return the parts (of ``parts``) under a quarter of :data:`PART_BYTES` when there
    are more than four of them (they are then merged), else none."""
    small = {part for part in parts if part and max(
        part_file(root, name, part).stat().st_size for name in FRAME_NAMES) < PART_BYTES // 4}
    return small if len(small) > _SMALL_PARTS else set()


def export(
    paths: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    policy: Policy = "recorded",
    *,
    format: str | None = None,
) -> ExportSummary:
    """Export every frame of the ledger files in ``paths`` under ``policy`` into ``out_dir``,
    each file read in ``format`` (None: its own, see ``ledgerviz.ledger.formats``).

    Incremental: see the module docstring. Raises ``ExportError`` for an unsafe or
    unusable output folder, ``UnreadableSourceError`` for a path that names no file and
    ``ImportError`` (with a pip hint) without pyarrow.
    """
    plan = plan_export(paths, out_dir, policy, read_format=format)
    errors: list[str] = []
    placed: list[FileState] = []
    with staged(plan.root) as staging:  # the folder held until the manifest is written
        with progress(len(plan.to_write), FILES_THRESHOLD, "writing Parquet",
                      unit="file") as step, PartWriter(staging, run_stem()) as writer:
            for group in batches(plan.to_write):
                group_errors, group_placed = write_sessions(group, writer, policy, format)
                errors += group_errors
                placed += group_placed
                if step is not None:
                    step(len(group))
            placed += copy_sessions(plan.root, plan.to_copy, writer)
        return finish_export(plan, placed, errors)


def finish_export(plan: Plan, placed: Sequence[FileState], error_sessions: list[str]
                  ) -> ExportSummary:
    """Publish the staged parts, write the manifest (with the new places of ``placed``),
    remove the parts it no longer names, and return the run's summary."""
    moved = {state.path: state for state in placed}
    states = [moved.get(state.path, state) for state in plan.states]
    try:
        _check_unique_keys(states)
    except ExportError:
        shutil.rmtree(plan.staging, ignore_errors=True)  # nothing of this run is published
        raise
    publish(plan.staging, plan.root, FRAME_NAMES)
    write_manifest(plan.root, manifest_document(plan.policy, states, plan.read_format))
    remove_unlisted(plan.root, {state.part for state in states})
    written = {state.path for state in plan.to_write}
    return ExportSummary(
        plan.root,
        plan.policy,
        dataset_keys(states),
        [state.path for state in plan.to_write],
        [state.path for state in plan.states if state.path not in written],
        plan.removed,
        error_sessions,
        plan.skipped,
    )


def _check_unique_keys(states: Sequence[FileState]) -> None:
    """Raise ``ExportError`` (nothing published) when two sessions of the dataset have one
    key: an inline session's id that is another file's key (see :func:`inline_key`)."""
    holder: dict[str, str] = {}
    for state in states:
        for key, _, _ in state.places():
            if key in holder:
                raise ExportError(
                    f"{state.path}: session key {key!r} is also a session of {holder[key]}; "
                    f"export these files into separate folders")
            holder[key] = state.path


def read_export(out_dir: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Return every frame of the export at ``out_dir``, typed as in-process frames."""
    root = Path(out_dir)
    manifest = read_manifest(root)
    if manifest is None:
        raise ExportError(f"{out_dir} holds no {MANIFEST_NAME}: not a ledgerviz export")
    if manifest["format"] != FORMAT:
        raise ExportError(
            f"{root / MANIFEST_NAME}: an export of format {manifest['format']}, an older "
            f"layout; this ledgerviz reads format {FORMAT}: run `ledgerviz export` into "
            "this folder again to rewrite it")
    states = manifest_states(manifest)
    keys = dataset_keys(states)
    return {name: pandas_frame(session_rows(root, name, states), name, keys)
            for name in FRAME_NAMES}


def session_rows(root: Path, name: str, states: Sequence[FileState]) -> Any:
    """Return the ``name`` rows of every session of ``states``' files from their parts at
    ``root``, in order, as an Arrow table; raise ``ExportError`` unless every row is of the
    session the manifest says (a changed part file, or rows edited consistently in the
    manifest)."""
    pa = require_pyarrow()
    import pyarrow.compute as pc

    places = [place for state in states for place in state.places()]
    table = gather(root, name, [(part, rows) for _, part, rows in places])
    frame = FRAME_NAMES.index(name)
    keys = pa.array([key for key, _, _ in places], pa.string())
    found = pc.index_in(table.column("session"), value_set=keys).to_numpy(
        zero_copy_only=False)  # each row's position in ``places`` (NaN: no such key)
    expected = np.repeat(np.arange(len(places)), [rows[frame][1] for _, _, rows in places])
    if len(found) != len(expected) or not np.array_equal(found, expected):
        wrong = np.flatnonzero(found[: len(expected)] != expected[: len(found)])
        at = int(wrong[0]) if len(wrong) else min(len(found), len(expected))
        raise ExportError(
            f"{root / name}: row {at} of the manifest's rows is not the session the manifest "
            "says (a part file or the manifest was changed); export into a new folder")
    return table


__all__ = [
    "MANIFEST_NAME",
    "ExportError",
    "ExportSummary",
    "FileState",
    "Plan",
    "check_output_dir",
    "export",
    "fingerprint",
    "frame_of",
    "plan_export",
    "read_export",
    "write_sessions",
]
