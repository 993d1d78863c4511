"""Small files read in runs (``ledger.runs``, ``ledger.typed_runs``, ``EventTable.split``).

A run is a fast path: its contract is that a load gives, for every file, the session the
reader gives reading that file alone (``read.read_file``, which never takes runs): key,
header, diagnostics, skipped lines, event lines, table and events. The reference is that
route; which files a run takes is written by hand.
"""

from __future__ import annotations

import random
from array import array
from pathlib import Path

import pytest
from ledger_lines import HEADER, assistant_calls, encode, mark, tool_result, turn_start

from ledgerviz.ledger import read_sessions
from ledgerviz.ledger import runs as runs_module
from ledgerviz.ledger.checks import CheckState
from ledgerviz.ledger.numbers import number_marks
from ledgerviz.ledger.read import file_sessions, read_file
from ledgerviz.ledger.reader import READ_BYTES, with_unique_keys
from ledgerviz.ledger.runs import RunReader
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.sources import iter_source_chunks
from ledgerviz.ledger.table import EventTable
from ledgerviz.ledger.typed import typed_block
from ledgerviz.ledger.typed_runs import typed_run
from ledgerviz.ledger.typed_schema import decoded, schema_of
from ledgerviz.ledger.typed_table import table_of
from ledgerviz.simulate import SCENARIOS, write_scenario


def dispatch(seq: int, call_id: str) -> dict:
    """Return a ``tool/call`` dispatching ``call_id``."""
    return {"type": "tool/call", "seq": seq, "time": 1000 + seq,
            "data": {"turn": 1, "step": 1, "callId": call_id, "name": "ls", "arguments": "{}"}}


def session(id: str, *, seqs_from: int = 0, answer: str = "c1") -> list:
    """Return the lines of a small session: a turn, a call requested, dispatched, answered."""
    step = {"type": "step/start", "seq": seqs_from + 1, "time": 1, "data": {"turn": 1, "step": 1}}
    return [{**HEADER, "id": id}, turn_start(seqs_from), step, assistant_calls(seqs_from + 2, "c1"),
            dispatch(seqs_from + 3, "c1"), tool_result(seqs_from + 4, answer), mark(seqs_from + 5)]


def alone(path: Path) -> list[SessionLog]:
    """Return the sessions of one file as the reader reads it alone (never in a run)."""
    ((name, chunks),) = iter_source_chunks(str(path), READ_BYTES)
    return file_sessions(read_file(name, chunks))


def read_in_runs(folder: Path, *, runs: bool = True) -> tuple[list[SessionLog], list[str]]:
    """Return the sessions a ``RunReader`` gives of ``folder``'s files, in the order it gives
    them, and the names of the files it read alone."""
    read_alone: list[str] = []

    def reading(path: str, chunks) -> list[SessionLog]:
        read_alone.append(Path(path).name)
        return file_sessions(read_file(path, chunks))

    reader = RunReader(reading, runs=runs)
    logs = [log for path, chunks in iter_source_chunks(str(folder), READ_BYTES)
            for log in reader.take(path, chunks)]
    return logs + reader.finish(), read_alone


def observed(log: SessionLog) -> tuple:
    """Return everything a load gives of one session."""
    return (log.path, log.key, log.header, log.version, log.diagnostics, log.lines_skipped,
            list(log.lines), log.format, log.table, list(log.events))


def assert_read_as_alone(folder: Path) -> list[SessionLog]:
    """Assert the folder's load gives each file's sessions as reading it alone does."""
    loaded = read_sessions(folder)
    expected = with_unique_keys([log for path in sorted(folder.iterdir()) for log in alone(path)])
    assert [observed(log) for log in loaded] == [observed(log) for log in expected]
    return loaded


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """Return the runs ``typed_run`` is asked to check, as they come: how many files, and
    whether it took them."""
    seen: list[tuple[int, bool]] = []

    def counted(parts, *args):
        block = typed_run(parts, *args)
        seen.append((len(parts), block is not None))
        return block

    monkeypatch.setattr(runs_module, "typed_run", counted)
    return seen


def test_clean_small_files_are_read_in_runs_and_as_alone(tmp_path: Path,
                                                         checked: list[tuple[int, bool]]
                                                         ) -> None:
    """Ten files with the same call ids: each file's ids are its own (no repeat warned)."""
    for number in range(10):
        write(tmp_path, f"{number:02d}.jsonl", encode(session(f"s{number}")))
    logs, read_alone = read_in_runs(tmp_path)
    assert read_alone == [] and checked == [(10, True)]  # every file in one run
    assert [log.key for log in logs] == [f"s{n}" for n in range(10)]
    assert all(log.diagnostics == [] for log in logs)
    assert_read_as_alone(tmp_path)


def test_a_files_open_turn_ends_with_it(tmp_path: Path, checked: list[tuple[int, bool]]
                                        ) -> None:
    """A file left in a turn that dispatched ``c1`` and answered it, then a file whose
    first events, before any turn starts, dispatch and answer ``c1`` again: no repeat
    within one turn, so both are taken by the first run checked."""
    crashed = session("a")[:-1]
    write(tmp_path, "a.jsonl", encode(crashed))
    step = {"type": "step/start", "seq": 0, "time": 1, "data": {"turn": 1, "step": 1}}
    write(tmp_path, "b.jsonl", encode([{**HEADER, "id": "b"}, step, assistant_calls(1, "c1"),
                                       dispatch(2, "c1"), tool_result(3, "c1")]))
    logs, read_alone = read_in_runs(tmp_path)
    assert [log.key for log in logs] == ["a", "b"] and read_alone == []
    assert checked == [(2, True)]
    assert_read_as_alone(tmp_path)


def test_a_file_the_check_refuses_is_read_alone_and_the_rest_in_runs(tmp_path: Path) -> None:
    """A seq gap (file 03), a result naming a call never asked for (05), a torn tail (07:
    a run takes it, the warning its own), a byte order mark (08) and a header key the
    runtime refuses (09): only the files the typed route refuses are read alone."""
    lines = {n: session(f"s{n}") for n in range(10)}
    lines[3] = [*lines[3][:3], *session("s3", seqs_from=1)[3:]]  # seq 2 missing
    lines[5] = session("s5", answer="nobody")
    for number, value in lines.items():
        data = encode(value)
        if number == 7:
            data += b'{"type":"plan/mo'
        if number == 8:
            data = b"\xef\xbb\xbf" + data
        if number == 9:
            data = data.replace(b'"createdAt":0', b'"createdAt":0,"zzz":1', 1)
        write(tmp_path, f"{number:02d}.jsonl", data)
    _, read_alone = read_in_runs(tmp_path)
    assert sorted(read_alone) == ["03.jsonl", "05.jsonl", "08.jsonl", "09.jsonl"]
    loaded = assert_read_as_alone(tmp_path)
    assert [(d.line, d.kind) for d in loaded[7].diagnostics] == [(8, "torn_tail")]
    assert loaded[7].lines_skipped == 1


def test_a_strict_or_key_searching_load_takes_no_run(tmp_path: Path) -> None:
    write(tmp_path, "a.jsonl", encode(session("a")))
    logs, read_alone = read_in_runs(tmp_path, runs=False)
    assert read_alone == ["a.jsonl"] and [log.key for log in logs] == ["a"]


HOSTILE = [
    lambda data: data[: len(data) * 2 // 3],  # cut: a torn tail
    lambda data: b"\xef\xbb\xbf" + data,
    lambda data: data.replace(b"\n", b"\r\n"),
    lambda data: data + b"  ",  # a tail of whitespace: no torn line
    lambda data: data.replace(b'"time":', b'"time":123456789012345678901,', 1),
    lambda data: data.replace(b'"version":4', b'"version":1,"seedLength":999', 1),
    lambda data: b"\n".join(data.split(b"\n")[:3] + data.split(b"\n")[2:]),  # a line twice
    lambda data: b"\n".join([*data.split(b"\n")[:3], b"", *data.split(b"\n")[3:]]),
    lambda data: data.split(b"\n")[0] + b"\n",  # the header alone
    lambda data: b"",
]


def test_simulated_fleets_and_their_hostile_copies_read_as_alone(tmp_path: Path) -> None:
    """Every single-session scenario, twice, each followed by one hostile copy of it (a
    different one each time), in one folder: runs of every length between the files
    read alone."""
    rng = random.Random(35)
    scenarios = [name for name, scenario in SCENARIOS.items() if not scenario.multi_session]
    number = 0
    for seed in range(2):
        for name in scenarios:
            (path,) = write_scenario(name, tmp_path / f"{number:03d}.jsonl", seed=seed, turns=2)
            number += 1
            write(tmp_path, f"{number:03d}.jsonl", rng.choice(HOSTILE)(path.read_bytes()))
            number += 1
    assert_read_as_alone(tmp_path)


@pytest.mark.parametrize("take", [1, 2, 5])
def test_a_run_is_checked_as_its_files_are_alone(tmp_path: Path, take: int) -> None:
    """``typed_run`` takes a run exactly when ``typed_block`` takes each file as its only
    block from a fresh state; its table, split, is each file's."""
    files = []
    for seed, name in enumerate(sorted(SCENARIOS)):
        if not SCENARIOS[name].multi_session:
            files += write_scenario(name, tmp_path / f"{name}.jsonl", seed=seed, turns=2)
    schema = schema_of(4)
    for first in range(0, len(files), take):
        alone_blocks, parts, ranges = [], [], []
        for path in files[first:first + take]:
            data = path.read_bytes()
            lines = data.split(b"\n")
            lines.pop()  # a torn tail (torn-write) is no event
            marks = number_marks(data)
            alone_blocks.append(typed_block(lines[1:], data, marks, 2, CheckState(), 4,
                                            replace_ops=True))
            parts.append(decoded(lines[1:], data, marks, 4))
            starts = [len(lines[0]) + 1]
            for line in lines[1:]:
                starts.append(starts[-1] + len(line) + 1)
            ranges.append((starts[:-1], [s + len(line) for s, line in zip(
                starts, lines[1:], strict=False)]))
        run = typed_run(parts, 2, 4, schema)
        assert (run is not None) == all(block is not None for block in alone_blocks)
        if run is None:
            continue
        bounds = [0]
        for part in parts:
            bounds.append(bounds[-1] + len(part))
        start = array("q", [s for starts, _ in ranges for s in starts])
        stop = array("q", [s for _, stops in ranges for s in stops])
        expected = [table_of(block, array("q", starts), array("q", stops))
                    for block, (starts, stops) in zip(alone_blocks, ranges, strict=True)]
        assert table_of(run, start, stop).split(bounds) == expected


def test_split_gives_each_part_its_rows_types_and_requests() -> None:
    """Hand-worked: five events, the requests of the assistant messages at rows 1 and 3."""
    events = [turn_start(0), assistant_calls(1, "a"), mark(2), assistant_calls(3, "b", "c"),
              mark(4)]
    table = EventTable.of(events, [2, 3, 4, 5, 6])
    first, second, third = table.split([0, 2, 3, 5])
    assert first.type_names == ["turn/start", "assistant/message"]
    assert list(first.type_code) == [0, 1] and list(first.seq) == [0, 1]
    assert list(first.requests.row) == [1] and first.requests.call_id == ["a"]
    assert second.type_names == ["plan/mode"] and list(second.type_code) == [0]
    assert list(second.requests.row) == [] and list(second.line) == [4]
    assert third.type_names == ["assistant/message", "plan/mode"]
    assert list(third.type_code) == [0, 1] and list(third.seq) == [3, 4]
    assert list(third.requests.row) == [0, 0] and third.requests.call_id == ["b", "c"]
    assert third == EventTable.of(events[3:], [5, 6], 3)
    assert table.rows(3, 5) == third
