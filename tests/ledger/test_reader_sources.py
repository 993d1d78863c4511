"""The reader on the real fixtures and on every source form."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import orjson
import pytest

from ledgerviz.ledger import LedgerError, UnreadableSourceError, read_sessions

DSH = Path(__file__).parents[1] / "data" / "dsh"
FIXTURES = sorted(DSH.glob("*.jsonl"))

EVENTS_AND_VERSION = {
    "goal-round-driver__session.expected.jsonl": (45, 2),
    "headless-profile__session.expected.jsonl": (23, 3),
    "semantic-checkpoint__session.expected.jsonl": (24, 2),
    "subagent-inheritance__child.expected.jsonl": (20, 2),
    "subagent-inheritance__parent.expected.jsonl": (31, 4),
    "subagent-settlement__child.replay.jsonl": (7, 0),
    "preview-architecture-review__session.v3.jsonl": (177, 3),
    "preview-follow-up-builder__session.v2.jsonl": (7, 2),
    "preview-showcase__session.v3.jsonl": (199, 3),
    "plain-turn__session.v3.jsonl": (5, 3),
}


def fixture(suffix: str) -> Path:
    (path,) = [p for p in FIXTURES if p.name.endswith(suffix)]
    return path


def test_every_fixture_is_covered() -> None:
    assert len(FIXTURES) == len(EVENTS_AND_VERSION) == 10
    for suffix in EVENTS_AND_VERSION:
        fixture(suffix)


@pytest.mark.parametrize("suffix", sorted(EVENTS_AND_VERSION))
def test_fixture_reads_without_diagnostics(suffix: str) -> None:
    path = fixture(suffix)
    (session,) = read_sessions(path, strict=True)
    events, version = EVENTS_AND_VERSION[suffix]
    assert (len(session.events), session.version) == (events, version)
    assert session.diagnostics == []
    assert session.lines_skipped == 0
    assert list(session.lines) == list(range(2, events + 2))


@pytest.mark.parametrize("suffix", sorted(EVENTS_AND_VERSION))
def test_events_are_exactly_what_orjson_decoded(suffix: str) -> None:
    path = fixture(suffix)
    (session,) = read_sessions(path)
    lines = path.read_bytes().splitlines()
    assert session.header == orjson.loads(lines[0])
    assert session.events == [orjson.loads(line) for line in lines[1:]]


def test_folder_reads_every_jsonl_recursively_in_sorted_order(tmp_path: Path) -> None:
    (tmp_path / "b" / "deep").mkdir(parents=True)
    (tmp_path / "a.jsonl").write_bytes(fixture("showcase__session.v3.jsonl").read_bytes())
    (tmp_path / "b" / "deep" / "c.jsonl").write_bytes(
        fixture("builder__session.v2.jsonl").read_bytes()
    )
    (tmp_path / "b" / "notes.txt").write_text("not a ledger")
    sessions = read_sessions(tmp_path)
    assert [s.key for s in sessions] == ["preview-showcase", "preview-follow-up-builder"]
    assert [len(s.events) for s in sessions] == [199, 7]


def test_folder_of_fixtures_gives_unique_keys() -> None:
    sessions = read_sessions(DSH)
    keys = [s.key for s in sessions]
    assert len(sessions) == 10
    assert len(set(keys)) == 10
    assert keys[0] == "{{sessionId}}"
    clashing = [s for s in sessions if s.header["id"] == "{{sessionId}}"]
    assert len(clashing) == 5
    assert [s.key for s in clashing[1:]] == [Path(s.path).name for s in clashing[1:]]


def test_same_file_twice_still_gets_unique_keys() -> None:
    path = fixture("showcase__session.v3.jsonl")
    keys = [s.key for s in read_sessions([path, path, path, path])]
    assert keys == ["preview-showcase", path.name, str(path), f"{path}#2"]


def test_glob_pattern() -> None:
    sessions = read_sessions(str(DSH / "*preview-*.jsonl"))
    assert sorted(s.key for s in sessions) == [
        "preview-architecture-review",
        "preview-follow-up-builder",
        "preview-showcase",
    ]


def test_list_of_sources_keeps_order() -> None:
    first, second = (
        fixture("plain-turn__session.v3.jsonl"),
        fixture("settlement__child.replay.jsonl"),
    )
    sessions = read_sessions([str(first), [second]])
    assert [s.path for s in sessions] == [str(first), str(second)]


def test_binary_file_objects() -> None:
    path = fixture("builder__session.v2.jsonl")
    with path.open("rb") as handle:
        (from_handle,) = read_sessions(handle)
    (from_bytes,) = read_sessions(io.BytesIO(path.read_bytes()))
    assert from_handle.path == str(path)
    assert from_bytes.path == "<stream>"
    assert from_handle.events == from_bytes.events
    assert len(from_bytes.events) == 7


def test_text_mode_file_object_is_refused() -> None:
    with (
        fixture("builder__session.v2.jsonl").open() as handle,
        pytest.raises(UnreadableSourceError, match="text mode"),
    ):
        read_sessions(handle)


@pytest.mark.parametrize("name", ["missing.jsonl", "nothing-*.jsonl"])
def test_unreadable_sources_raise(tmp_path: Path, name: str) -> None:
    with pytest.raises(UnreadableSourceError, match=name.replace("*", r"\*")):
        read_sessions(tmp_path / name)


def test_folder_without_ledgers_raises(tmp_path: Path) -> None:
    with pytest.raises(UnreadableSourceError, match=r"no \*\.jsonl"):
        read_sessions(tmp_path)


def test_unsupported_source_type() -> None:
    with pytest.raises(TypeError):
        read_sessions(42)  # type: ignore[arg-type]


def test_strict_raises_at_the_first_error_with_path_and_line(tmp_path: Path) -> None:
    lines = fixture("builder__session.v2.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"".join([*lines[:3], b"{oops\n", *lines[3:5], b"[]\n"]))
    with pytest.raises(LedgerError, match=rf"^{path}:4: error \[invalid_json\]"):
        read_sessions(path, strict=True)
    (lenient,) = read_sessions(path)
    assert [(d.line, d.kind) for d in lenient.diagnostics] == [
        (4, "invalid_json"),
        (7, "invalid_event"),
    ]
    assert len(lenient.events) == 4


def test_strict_accepts_warnings(tmp_path: Path) -> None:
    content = fixture("builder__session.v2.jsonl").read_bytes()
    path = tmp_path / "torn.jsonl"
    path.write_bytes(content + b'{"type":"turn/st')
    (session,) = read_sessions(path, strict=True)
    assert [d.kind for d in session.diagnostics] == ["torn_tail"]
    assert len(session.events) == 7


def test_ledger_files_are_never_modified() -> None:
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in FIXTURES}
    stats = {p: p.stat().st_mtime_ns for p in FIXTURES}
    read_sessions(DSH)
    read_sessions(DSH, strict=True)
    assert before == {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in FIXTURES}
    assert stats == {p: p.stat().st_mtime_ns for p in FIXTURES}
