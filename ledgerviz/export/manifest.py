"""The manifest of an export folder, ``ledgerviz-export.json``: read, checked, written.

A manifest is only ever written whole (a temporary file renamed over the old one); one
that does not have the shape this module writes was edited or damaged, and reading it is
an :class:`ExportError` naming the file and the first field that is wrong, never a
traceback or a silent re-export.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import orjson

from ledgerviz.export.parts import PART_NAME
from ledgerviz.file_mode import replaced_atomically
from ledgerviz.frames import FRAME_NAMES

FORMAT = 3
"""Version of the export layout (3: size-bounded part files per frame, ``session`` a
column, each session's rows located by the manifest). A folder of an older format is
rewritten whole by the next export; ``read_export`` refuses it until then."""

MANIFEST_NAME = "ledgerviz-export.json"
"""The manifest file in an export folder."""

FILE_FIELDS: dict[str, type] = {
    "path": str, "size": int, "mtime_ns": int, "sha256": str, "natural_key": str, "key": str,
    "part": str, "rows": dict,
}
"""What the manifest records of each input file, and the JSON type of each field."""

INLINE_FIELDS: dict[str, type] = {"file": str, "key": str, "rows": dict}
"""What the manifest's ``inline`` records of each session a file holds inline (a Claude
Code sidechain; in the part of its ``file``, after that file's own rows)."""

_TOP_FIELDS: dict[str, type] = {
    "schema": str, "policy": str, "sessions": list, "files": list,
}
_SHA256 = re.compile(r"[0-9a-f]{64}")


class ExportError(Exception):
    """An export that must not or cannot run; ``str()`` is one line for the user."""


def read_manifest(root: Path) -> dict[str, Any] | None:
    """Return the checked manifest of the export at ``root``, or None when there is none."""
    path = root / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        manifest = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as error:
        raise ExportError(f"{path}: unreadable manifest: {error}") from error
    problem = manifest_problem(manifest)
    if problem is not None:
        raise ExportError(
            f"{path}: not a manifest ledgerviz wrote (edited or damaged): {problem}; "
            "export into a new folder, or empty this one"
        )
    return manifest  # type: ignore[no-any-return]


def manifest_problem(manifest: Any) -> str | None:
    """Return the first way ``manifest`` differs from what :func:`write_manifest` writes
    (one of an older export format is only checked for its ``format``)."""
    if not isinstance(manifest, dict):
        return f"the document is {_json_type(manifest)}, not an object"
    problem = _field_problem("format", manifest.get("format"), int)
    if problem or manifest["format"] < FORMAT:
        return problem
    if manifest["format"] > FORMAT:
        return (f"format {manifest['format']} is newer than this ledgerviz reads ({FORMAT}); "
                "upgrade ledgerviz")
    for name, kind in _TOP_FIELDS.items():
        problem = _field_problem(name, manifest.get(name), kind)
        if problem:
            return problem
    for i, row in enumerate(manifest["files"]):
        problem = _row_problem(f"files[{i}]", row)
        if problem:
            return problem
    problem = _inline_problem(manifest)
    if problem:
        return problem
    paths = [row["path"] for row in manifest["files"]]
    inline: dict[str, list[dict[str, Any]]] = {path: [] for path in paths}
    for entry in manifest.get("inline", []):
        inline[entry["file"]].append(entry)
    placed = [(row["part"], session) for row in manifest["files"]
              for session in (row, *inline[row["path"]])]
    keys = [session["key"] for _, session in placed]
    if manifest["sessions"] != keys:
        return "'sessions' is not the list of the files' keys"
    for name, values in (("key", keys), ("path", paths)):
        if len(set(values)) != len(values):
            return f"two files have the same {name}"
    return _tiling_problem(placed)


def _inline_problem(manifest: dict[str, Any]) -> str | None:
    """Return what is wrong with the optional ``inline`` list (absent in a manifest written
    before inline sessions were exported), or None."""
    entries = manifest.get("inline", [])
    problem = _field_problem("inline", entries, list)
    if problem:
        return problem
    paths = {row["path"] for row in manifest["files"]}
    for i, entry in enumerate(entries):
        where = f"inline[{i}]"
        problem = _object_problem(where, entry, INLINE_FIELDS)
        if problem:
            return problem
        if entry["file"] not in paths:
            return f"{where}.file is not the path of one of the files"
        problem = _rows_problem(f"{where}.rows", entry["rows"])
        if problem:
            return problem
    return None


def _tiling_problem(placed: list[tuple[str, dict[str, Any]]]) -> str | None:
    """Return how the rows of the ``(part, session)`` sessions fail to tile each file of
    their part from row 0 (a gap or an overlap), or None."""
    ranges: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for part, session in placed:
        for name, (offset, length) in session["rows"].items():
            ranges.setdefault((part, name), []).append((offset, length))
    for (part, name), found in ranges.items():
        end = 0
        for offset, length in sorted(found):
            if offset != end:
                return f"the rows of part {part} in {name} do not follow on at row {end}"
            end = offset + length
    return None


def _object_problem(where: str, value: Any, fields: dict[str, type]) -> str | None:
    """Return what is wrong with ``value``, an object that must hold exactly ``fields``, each
    of its kind, or None."""
    if not isinstance(value, dict):
        return f"{where} is {_json_type(value)}, not an object"
    if set(value) != set(fields):
        return f"{where} has the fields {sorted(value)}, not {sorted(fields)}"
    for name, kind in fields.items():
        problem = _field_problem(f"{where}.{name}", value[name], kind)
        if problem:
            return problem
    return None


def _row_problem(where: str, row: Any) -> str | None:
    """Return what is wrong with one row of ``files``, or None."""
    problem = _object_problem(where, row, FILE_FIELDS)
    if problem:
        return problem
    if row["size"] < 0:
        return f"{where}.size is negative"
    if not _SHA256.fullmatch(row["sha256"]):
        return f"{where}.sha256 is not 64 lowercase hex digits"
    if not os.path.isabs(row["path"]):
        return f"{where}.path is not an absolute path"
    if not PART_NAME.fullmatch(row["part"]):
        return f"{where}.part is not a part name (part-<12 hex digits>-<number>)"
    return _rows_problem(f"{where}.rows", row["rows"])


def _rows_problem(where: str, rows: dict[str, Any]) -> str | None:
    """Return what is wrong with a file's ``rows`` (frame -> [offset, length]), or None."""
    if list(rows) != list(FRAME_NAMES):
        return f"{where} names the frames {list(rows)}, not {list(FRAME_NAMES)}"
    for name, pair in rows.items():
        if not (isinstance(pair, list) and len(pair) == 2
                and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                        for n in pair)):
            return f"{where}.{name} is not [offset, length] of two integers >= 0"
    return None


def _field_problem(where: str, value: Any, kind: type) -> str | None:
    """Return why ``value`` is not a JSON ``kind`` (a boolean is no integer), or None."""
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return None
    if value is None:
        return f"{where} is missing"
    return f"{where} is {_json_type(value)}, not {_json_type(kind())}"


def _json_type(value: Any) -> str:
    """Return the JSON name of a decoded value's type, with its article."""
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "a list", str: "a string", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def write_manifest(root: Path, document: dict[str, Any]) -> None:
    """Write the manifest atomically (a temporary file of a name of its own renamed over the
    old one, ``replaced_atomically``), as one line of JSON (10,000 sessions: 4.2 MB;
    indented it was 7.5 MB)."""
    with replaced_atomically(root / MANIFEST_NAME) as stream:
        stream.write(orjson.dumps(document))
