"""Incremental Parquet export of ledger files: one dataset per frame, one partition per session.

``export(paths, out_dir, policy)`` writes every frame of every session under
``policy`` (format: ``ledgerviz.export.parquet``) and a manifest,
``ledgerviz-export.json``, that records each input file's size, modification time and
SHA-256. The next run into the same folder skips every file whose size and mtime are
unchanged (without reading it) or whose content hash is unchanged; it rewrites the
partitions of changed files and removes those of files no longer given, so the dataset
always mirrors the inputs of the last run. Each file is read, recovered and written on
its own terms (its frames do not depend on which other files are exported with it).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

from ledgerviz.api import Ledger, load
from ledgerviz.export.parquet import (
    PART_NAME,
    dataset_schema,
    partition_folder,
    read_frames,
    require_pyarrow,
    restore_categories,
    write_partitions,
)
from ledgerviz.frames import FRAME_NAMES, build_frames
from ledgerviz.ledger import SessionLog, UnreadableSourceError, read_session
from ledgerviz.ledger.reader import unique_keys
from ledgerviz.ledger.sources import expand_path
from ledgerviz.progress import FILES_THRESHOLD, progress
from ledgerviz.recovery.analysis import POLICIES, Policy

MANIFEST_NAME = "ledgerviz-export.json"
"""The manifest file in an export folder."""

FORMAT = 1
"""Version of the export layout; a manifest of another version means a full re-export."""

_BATCH_BYTES = 64 * 2**20  # files are loaded together up to this many bytes of input
_BATCH_FILES = 2000
_CHUNK = 2**20
_CATALOG = "subagent/catalog"


class ExportError(Exception):
    """An export that must not or cannot run; ``str()`` is one line for the user."""


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


def input_files(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Return the absolute paths of every ledger file ``paths`` names, once each, in order."""
    files: dict[str, None] = {}
    for path in paths:
        for file in expand_path(os.fspath(path)):
            files[os.path.realpath(file)] = None
    return list(files)


def check_output_dir(
    out_dir: str | os.PathLike[str], paths: Iterable[str | os.PathLike[str]], files: Sequence[str]
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
    for file in files:
        if root in Path(file).parents or root == Path(file):
            raise ExportError(f"{out_dir} holds the input {file}; choose another folder")
    if root.is_dir() and any(root.iterdir()) and not (root / MANIFEST_NAME).is_file():
        raise ExportError(
            f"{out_dir} is not empty and holds no {MANIFEST_NAME}: not a ledgerviz export "
            "folder; give a new or empty folder"
        )
    return root


def read_manifest(root: Path) -> dict[str, Any] | None:
    """Return the manifest of the export at ``root``, or None when there is none."""
    path = root / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        manifest = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as error:
        raise ExportError(f"{path}: unreadable manifest: {error}") from error
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise ExportError(f"{path}: not a ledgerviz export manifest")
    return manifest


def known_states(manifest: dict[str, Any] | None, policy: Policy) -> dict[str, FileState]:
    """Return the manifest's files by path; none when its format, schema or policy differs."""
    if manifest is None:
        return {}
    same = (manifest.get("format"), manifest.get("schema"), manifest.get("policy"))
    if same != (FORMAT, schema_id(), policy):
        return {}
    return {row["path"]: FileState(**row) for row in manifest["files"]}


def schema_id() -> str:
    """Return a short hash of every frame's Parquet schema (a change means a full re-export)."""
    text = "\n".join(f"{name}: {dataset_schema(name)}" for name in FRAME_NAMES)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprint(path: str, known: FileState | None) -> tuple[FileState, bool]:
    """Return the file's state and whether it changed since ``known``.

    Same size and mtime as ``known``: unchanged, the file is not read. Otherwise the
    content is hashed; the same hash is unchanged too (a touched file).
    """
    try:
        info = os.stat(path)
        if known is not None and (known.size, known.mtime_ns) == (info.st_size, info.st_mtime_ns):
            return known, False
        digest, first_line = hashlib.sha256(), b""
        with open(path, "rb") as stream:
            while chunk := stream.read(_CHUNK):
                if not first_line.endswith(b"\n"):
                    first_line += chunk[: chunk.find(b"\n") + 1 or len(chunk)]
                digest.update(chunk)
    except OSError as error:
        raise UnreadableSourceError(f"{path}: cannot read: {error.strerror or error}") from error
    sha = digest.hexdigest()
    if known is not None and known.sha256 == sha:
        return replace(known, size=info.st_size, mtime_ns=info.st_mtime_ns), False
    natural_key = key_of_first_line(path, first_line)
    return FileState(path, info.st_size, info.st_mtime_ns, sha, natural_key), True


def key_of_first_line(path: str, first_line: bytes) -> str:
    """Return the key the reader gives the file at ``path`` alone, from its first line.

    The key depends on line 1 only: the header id, else the file stem (also when the
    line has no newline yet, since the reader drops such a torn tail).
    """
    return read_session(path, first_line if first_line.endswith(b"\n") else b"").key


def frame_of(ledger: Ledger, policy: Policy, name: str) -> pd.DataFrame:
    """Return the ``name`` frame of ``ledger``'s sessions under ``policy``.

    No row depends on which other files are in ``ledger``: in a load, one session's
    ``subagent/catalog`` event can name another session's parent in ``lineage``, so
    when a session has such an event, ``lineage`` is built session by session.
    """
    view = ledger.recovery(policy)
    if name != "lineage" or not any(_catalogs(log) for log in ledger.sessions):
        return getattr(view.frames, name)
    triples = [(log.key, log, view.analyses[log.key]) for log in ledger.sessions]
    pieces = [build_frames([triple]).lineage for triple in triples]
    return restore_categories(pd.concat(pieces, ignore_index=True), name, ledger.keys)


def _catalogs(log: SessionLog) -> bool:
    """Return True when the session holds a ``subagent/catalog`` event."""
    return _CATALOG in log.event_fields().types


def remove_stale_partitions(root: Path, keys: Iterable[str]) -> None:
    """Remove every session partition under ``root`` whose key is not in ``keys``."""
    wanted = {partition_folder(key) for key in keys}
    for name in FRAME_NAMES:
        base = root / name
        if not base.is_dir():
            continue
        for folder in base.iterdir():
            if folder.name.startswith("session=") and folder.name not in wanted:
                shutil.rmtree(folder)


def write_sessions(states: Sequence[FileState], root: Path, policy: Policy,
                   step: Callable[[int], Any] | None = None) -> list[str]:
    """Read, recover and write the partitions of ``states``' files; return the error sessions.

    The files are loaded together (frames across sessions are built in one pass).
    ``step``, if given, is called with 1 for each partition file written.
    """
    loaded = load([state.path for state in states])  # a bar while large files are read
    ledger = Ledger([replace(log, key=state.key)
                     for log, state in zip(loaded.sessions, states, strict=True)])
    for name in FRAME_NAMES:
        write_partitions(frame_of(ledger, policy, name), name, root, step)
    return [log.key for log in ledger.sessions if log.has_errors]


def batches(states: Sequence[FileState]) -> list[list[FileState]]:
    """Return ``states`` in groups of at most 64 MiB of input or 2,000 files (one if larger)."""
    groups: list[list[FileState]] = []
    size = 0
    for state in states:
        if not groups or size + state.size > _BATCH_BYTES or len(groups[-1]) >= _BATCH_FILES:
            groups.append([])
            size = 0
        groups[-1].append(state)
        size += state.size
    return groups


def write_manifest(root: Path, policy: Policy, states: Sequence[FileState]) -> None:
    """Write the manifest atomically (a temporary file renamed over the old one)."""
    document = {
        "format": FORMAT,
        "schema": schema_id(),
        "policy": policy,
        "sessions": [state.key for state in states],
        "files": [_row(state) for state in states],
    }
    temporary = root / f".{MANIFEST_NAME}.tmp"
    temporary.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    os.replace(temporary, root / MANIFEST_NAME)


def _row(state: FileState) -> dict[str, Any]:
    """Return the manifest row of one file."""
    return {name: getattr(state, name) for name in FileState.__slots__}


Fingerprints = Callable[[list[tuple[str, FileState | None]]], list[tuple[FileState, bool]]]
"""Maps :func:`fingerprint` over ``(path, known state)`` pairs, in order."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What an export run has to do, decided before any partition is written."""

    root: Path
    policy: Policy
    states: list[FileState]
    """Every input file, in input order, with its dataset key."""
    to_write: list[FileState]
    removed: list[str]


def plan_export(
    paths: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    policy: Policy,
    fingerprints: Fingerprints | None = None,
) -> Plan:
    """Return the plan of exporting ``paths`` into ``out_dir`` under ``policy``.

    ``fingerprints(items)`` maps :func:`fingerprint` over ``(path, known)`` pairs
    (default: one after another; the Dask entry runs them on a cluster).
    """
    if policy not in POLICIES:
        raise ExportError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    require_pyarrow()
    files = input_files(paths)
    root = check_output_dir(out_dir, paths, files)
    manifest = read_manifest(root)
    known = known_states(manifest, policy)
    items = [(path, known.get(path)) for path in files]
    found = fingerprints(items) if fingerprints else [fingerprint(*item) for item in items]
    found_states = [state for state, _ in found]
    keys = unique_keys([s.path for s in found_states], [s.natural_key for s in found_states])
    states = [replace(state, key=key) for (state, _), key in zip(found, keys, strict=True)]
    before = {state.path: state.key for state in known.values()}
    to_write = [
        state
        for state, (_, changed) in zip(states, found, strict=True)
        if changed or before.get(state.path) != state.key or not _has_partition(root, state.key)
    ]
    given = set(files)
    last_run = [row.get("path") for row in manifest["files"]] if manifest else []
    removed = [path for path in last_run if path not in given]
    return Plan(root, policy, states, to_write, removed)


def _has_partition(root: Path, key: str) -> bool:
    """Return True when every frame of session ``key`` has its partition file."""
    folder = partition_folder(key)
    return all((root / name / folder / PART_NAME).is_file() for name in FRAME_NAMES)


def export(
    paths: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    policy: Policy = "recorded",
) -> ExportSummary:
    """Export every frame of the ledger files in ``paths`` under ``policy`` into ``out_dir``.

    Incremental: see the module docstring. Raises ``ExportError`` for an unsafe or
    unusable output folder, ``UnreadableSourceError`` for a path that names no file and
    ``ImportError`` (with a pip hint) without pyarrow.
    """
    plan = plan_export(paths, out_dir, policy)
    files = len(plan.to_write) * len(FRAME_NAMES)
    with progress(files, FILES_THRESHOLD, "writing Parquet", unit="file") as step:
        errors = [key for group in batches(plan.to_write)
                  for key in write_sessions(group, plan.root, policy, step)]
    return finish_export(plan, errors)


def finish_export(plan: Plan, error_sessions: list[str]) -> ExportSummary:
    """Remove stale partitions, write the manifest, and return the run's summary."""
    remove_stale_partitions(plan.root, [state.key for state in plan.states])
    write_manifest(plan.root, plan.policy, plan.states)
    written = {state.path for state in plan.to_write}
    return ExportSummary(
        plan.root,
        plan.policy,
        [state.key for state in plan.states],
        [state.path for state in plan.to_write],
        [state.path for state in plan.states if state.path not in written],
        plan.removed,
        error_sessions,
    )


def read_export(out_dir: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """Return every frame of the export at ``out_dir``, typed as in-process frames."""
    root = Path(out_dir)
    manifest = read_manifest(root)
    if manifest is None:
        raise ExportError(f"{out_dir} holds no {MANIFEST_NAME}: not a ledgerviz export")
    return read_frames(root, manifest["sessions"])


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
