"""``ledgerviz fork`` writes the runtime's fork seed as a new file; ``Ledger.fork`` returns it.

Expected values come from the files themselves (the parent's own lines) and from
LEDGER_FORMAT.md §11 worked by hand for the crash-mid-dispatch example: the process died
in turn 2 after the assistant message at seq 18 asked for four calls and the first one was
dispatched (seq 19) and the second (seq 20) too; the first result is seq 21.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
from hostile_inputs import HEADER, base_events, encode

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.examples import example_path
from ledgerviz.ledger.sources import iter_source_chunks
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery import PROVIDERS, ForkRefused
from ledgerviz.simulate.scenarios import write_scenario
from ledgerviz.streams.fork_file import write_fork

CRASH = example_path("crash-mid-dispatch")


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def crash_child(session_id: str, created_at: int) -> list[dict]:
    """Return the lines, decoded, of the fork child of the crash-mid-dispatch example worked
    out by hand: seqs 0..17, the marker at 18, the open step and turn closed as forked."""
    parent_lines = lines_of(CRASH)
    parent_header = json.loads(parent_lines[0])
    time = json.loads(parent_lines[18])["time"]
    return [
        {
            "type": "session",
            "version": 4,
            "id": session_id,
            "createdAt": created_at,
            "cwd": parent_header["cwd"],
            "parentSession": parent_header["id"],
            "isSeeded": True,
        },
        *(json.loads(line) for line in parent_lines[1:19]),
        {"type": "session/end-seed", "seq": 18, "time": time, "data": {"inherited": True}},
        {"type": "step/end", "seq": 19, "time": time, "data": {"turn": 2, "step": 1}},
        {
            "type": "turn/end",
            "seq": 20,
            "time": time,
            "data": {"turn": 2, "reason": {"kind": "forked"}},
        },
    ]


def test_fork_writes_the_seed_and_leaves_the_parent(tmp_path: Path, capsys) -> None:
    digest = hashlib.sha256(CRASH.read_bytes()).hexdigest()
    child = tmp_path / "child.jsonl"
    argv = ["fork", str(CRASH), "-o", str(child), "--id", "kid", "--created-at", "5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "18 inherited events, seed marker at seq 18, 2 forked closers" in out
    assert hashlib.sha256(CRASH.read_bytes()).hexdigest() == digest
    assert lines_of(child)[1:19] == lines_of(CRASH)[1:19]  # seqs 0..17, byte for byte
    assert [json.loads(line) for line in lines_of(child)] == crash_child("kid", 5)


@pytest.mark.parametrize("chunk_bytes", [1, 7, 100, 1 << 20])
def test_the_child_is_the_same_read_in_any_block_size(chunk_bytes: int) -> None:
    written: list[str] = []
    result = write_fork(CRASH, written.append, session_id="kid", created_at=5,
                        chunk_bytes=chunk_bytes)
    assert (result.inherited, result.marker_seq, result.closers) == (18, 18, 2)
    lines = "".join(written).splitlines()
    assert [json.loads(line) for line in lines] == crash_child("kid", 5)


def test_fork_at_a_seq_and_refusals(tmp_path: Path, capsys) -> None:
    child = tmp_path / "child.jsonl"
    assert main(["fork", str(CRASH), "-o", str(child), "--at", "14", "--id", "c"]) == 0
    assert len(lines_of(child)) == 1 + 15 + 1  # a turn boundary: no closers
    capsys.readouterr()
    assert main(["fork", str(CRASH), "-o", str(child)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["fork", str(CRASH), "-o", str(CRASH)]) == 2
    assert main(["fork", str(CRASH), "-o", str(tmp_path / "x.jsonl"), "--at", "99"]) == 1
    assert "no event with seq 99" in capsys.readouterr().err
    clean = example_path("clean")
    assert main(["fork", str(clean), "-o", str(tmp_path / "y.jsonl")]) == 1
    assert "no unresolvable boundary" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "y.jsonl").exists()


def test_parent_and_child_load_as_one_story(tmp_path: Path) -> None:
    """Nothing appended to the parent; loaded with its child: the parent's fork facts
    unchanged, the child balanced and valid with no synthetic result, and the events frame
    counting each canonical event once."""
    child_path = tmp_path / "child.jsonl"
    assert main(["fork", str(CRASH), "-o", str(child_path), "--id", "kid"]) == 0
    alone = ledgerviz.load(CRASH).recovery("fork").analyses
    both = ledgerviz.load([CRASH, child_path])
    parent_key, child_key = both.keys
    fork = both.recovery("fork")
    assert fork.analyses[parent_key].fork_points == alone[parent_key].fork_points == [18]
    assert fork.analyses[parent_key].abandoned_seqs == alone[parent_key].abandoned_seqs
    assert fork.analyses[parent_key].closers == []
    for policy in ("recorded", "fork"):
        analysis = both.recovery(policy).analyses[child_key]
        assert analysis.closers == [] and analysis.fork_points == []
        results = [e for e in analysis.events if e["type"] == "tool/result"]
        assert all(e["data"].get("error") is None for e in results)  # no synthetic result
        assert "TOOL_OUTCOME_UNKNOWN" not in analysis.recovery_code
        context = both.context(policy, session=child_key)
        assert context.valid == {provider: True for provider in PROVIDERS}
    events = fork.frames.events
    own = events[~events["inherited"]]
    assert len(own) == 22 + 3  # every parent event once, plus the child's marker and closers
    assert events[events["inherited"]]["session"].unique().tolist() == [child_key]
    assert events[events["inherited"]]["seq"].tolist() == list(range(18))
    lineage = fork.frames.lineage.set_index("session")
    assert lineage.loc[child_key, ["parent_session", "relation", "boundary_seq"]].tolist() == [
        parent_key,
        "fork",
        17,
    ]


def test_api_fork_returns_the_child_in_memory() -> None:
    ledger = ledgerviz.load(CRASH)
    child = ledger.fork(session_id="kid", created_at=7)
    [log] = child.sessions
    assert (log.header["id"], log.header["createdAt"], len(log.events)) == ("kid", 7, 21)
    assert ledger.fork(14, session_id="c").sessions[0].events[-1]["type"] == "session/end-seed"
    with pytest.raises(ForkRefused, match="no unresolvable boundary"):
        ledgerviz.load(example_path("clean")).fork()


def test_api_fork_tables_the_child_from_the_parents_table() -> None:
    """The child's table is made with it: the parent's rows for the 18 events it inherits
    (seqs 0..17), the seed's 3 tabled apart; lines as the child's file numbers them (2..22),
    no byte ranges (the child is in memory); what tabling its dicts gives."""
    [log] = ledgerviz.load(CRASH).fork(session_id="kid", created_at=7).sessions
    assert log.table is not None  # not left for ``event_table`` to make from the dicts
    table = log.event_table()
    assert list(table.seq[:18]) == list(range(18))
    assert table.seq == range(0, 21)  # the seed numbers on from the parent's 18: one range
    assert list(table.line) == list(range(2, 23))
    assert table.start is table.stop is None  # no byte range known: none held
    assert table == EventTable.of(log.events, range(2, 23))


def test_fork_messages_cannot_drive_the_terminal(tmp_path: Path, capsys) -> None:
    """A session id or file name holding ESC is printed as a visible ``\\x1b`` escape."""
    lines = lines_of(CRASH)
    header = json.loads(lines[0])
    header["id"] = "evil\x1b]0;owned\x07"
    parent = tmp_path / "parent.jsonl"
    parent.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert main(["fork", str(parent), "-o", str(tmp_path / "child.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "evil\\x1b]0;owned\\x07-fork-17" in out and "\x1b" not in out
    missing = tmp_path / "gone\x1b[2J.jsonl"
    assert main(["fork", str(missing), "-o", str(tmp_path / "other.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "gone\\x1b[2J.jsonl" in err and "\x1b" not in err


def test_a_log_not_numbered_from_zero_is_not_forked(tmp_path: Path, capsys) -> None:
    """Seqs 5..9: the runtime reads no event of it (its first seq is not 0), so no child
    inheriting any of them is one it would resume."""
    events = base_events()[:5]  # turn/start, step/start, user, assistant asking A, A dispatched
    for event in events:
        event["seq"] += 5
    parent = tmp_path / "parent.jsonl"
    parent.write_bytes(encode(HEADER, events))
    child = tmp_path / "child.jsonl"
    argv = ["fork", str(parent), "-o", str(child), "--at", "6", "--id", "c", "--created-at", "1"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "the runtime reads no event (it stops at line 2: expected seq 0, found 5" in err
    assert "a child inheriting seq 6 is one it would not resume" in err
    assert not child.exists()
    assert main(["fork", str(parent), "-o", str(tmp_path / "x.jsonl"), "--at", "-1"]) == 1
    assert "no event with seq -1 to fork at (seqs run 0..9)" in capsys.readouterr().err
    loaded = ledgerviz.load(parent)  # Ledger.fork says the same
    with pytest.raises(ForkRefused, match=r"the runtime reads no event \(it stops at line 2: "
                       r"expected seq 0, found 5.*a child inheriting seq 6 is one it would not"):
        loaded.fork(6)
    with pytest.raises(ForkRefused, match=r"no event with seq -1 to fork at \(seqs run 0\.\.9\)"):
        loaded.fork(-1)


def test_a_first_event_without_seq_is_where_the_runtime_stops(tmp_path: Path, capsys) -> None:
    """The first event's seq removed: the loader numbers it by position and says nothing (no
    event before it had one), but the runtime stops at line 2, and the turn/end of line 16
    after it proves the damage committed: both refuse the parent, in the same words (the
    API built a child)."""
    lines = lines_of(CRASH)
    first = json.loads(lines[1])
    del first["seq"]
    parent = tmp_path / "parent.jsonl"
    parent.write_text("\n".join([lines[0], json.dumps(first), *lines[2:]]) + "\n",
                      encoding="utf-8")
    assert main(["fork", str(parent), "-o", str(tmp_path / "child.jsonl"), "--at", "5"]) == 1
    why = (f"{parent}: line 2: turn/start: no 'seq': the runtime stops reading at an event it "
           "cannot number (format §3); line 16 after it holds a turn/end, so the damaged "
           "region had been committed: the runtime refuses this log")
    assert why in capsys.readouterr().err
    with pytest.raises(ForkRefused) as refused:
        ledgerviz.load(parent).fork(5)
    assert str(refused.value).startswith(why)


def test_a_parent_that_changes_while_the_child_is_written_is_not_read_again(
        tmp_path: Path) -> None:
    """The parent is read once, before anything is written: cutting it to 5 lines as the
    child's header is written leaves the child the one of the file as it was read."""
    parent = tmp_path / "parent.jsonl"
    parent.write_bytes(CRASH.read_bytes())
    written: list[str] = []

    def write(text: str) -> None:
        parent.write_text("\n".join(lines_of(CRASH)[:5]) + "\n", encoding="utf-8")
        written.append(text)

    write_fork(parent, write, session_id="kid", created_at=5)
    assert [json.loads(line) for line in "".join(written).splitlines()] == crash_child("kid", 5)


def test_unreadable_and_several_parents_are_refused(tmp_path: Path, capsys) -> None:
    packed = tmp_path / "packed.jsonl"
    packed.write_bytes(gzip.compress(CRASH.read_bytes()))
    assert main(["fork", str(packed), "-o", str(tmp_path / "a.jsonl")]) == 1
    assert "gzip-compressed file: decompress it first" in capsys.readouterr().err
    folder = tmp_path / "two"
    folder.mkdir()
    for name in ("one.jsonl", "two.jsonl"):
        (folder / name).write_bytes(CRASH.read_bytes())
    assert main(["fork", str(folder), "-o", str(tmp_path / "b.jsonl")]) == 2  # bad argument
    assert "holds 2 ledgers; give one file" in capsys.readouterr().err
    assert not (tmp_path / "a.jsonl").exists() and not (tmp_path / "b.jsonl").exists()


def crashed_scenario(path: Path, turns: int) -> tuple[Path, int]:
    """Write the ``large`` scenario cut after its last tool/call (a dispatched call left
    without a result: the fork point is near the end); return the file and its events."""
    write_scenario("large", path, turns=turns)
    content = path.read_bytes()
    end = content.index(b"\n", content.rindex(b'"type":"tool/call"')) + 1
    path.write_bytes(content[:end])
    return path, content[:end].count(b"\n") - 1


def test_memory_grows_with_the_scan_state_not_with_the_events(
    tmp_path: Path, traced_peak: Callable[[Callable[[], object]], int]
) -> None:
    (small, small_events), (big, big_events) = (
        crashed_scenario(tmp_path / f"{turns}.jsonl", turns) for turns in (150, 600))

    def peak(path: Path, at: int | None = None) -> int:  # read 64 KiB at a time
        return traced_peak(lambda: write_fork(path, lambda text: None, at, created_at=0,
                                              chunk_bytes=64 << 10))

    added = big_events - small_events
    # The fork policy's boundary: the recovery scan keeps a few numbers per event and
    # per call (about 160 bytes an event here), never the events.
    assert peak(big) - peak(small) <= 400 * added + (256 << 10)
    # A boundary given: what grows is the reader's set of requested call ids (about
    # 110 bytes a call, a call every five events here); the rest is a block.
    assert peak(big, big_events - 10) - peak(small, small_events - 10) <= 50 * added + (256 << 10)
    assert peak(big) * 3 < traced_peak(lambda: ledgerviz.load(big).fork(created_at=0))  # whole


def test_a_damaged_line_before_the_boundary_is_refused(tmp_path: Path, capsys) -> None:
    """The runtime stops at line 5, and a turn/end after it proves the damage committed:
    it refuses the parent, so no child is written (before, one was, without that line)."""
    lines = lines_of(CRASH)  # header, then seqs 0..21; the boundary is seq 17 (line 19)
    parent = tmp_path / "parent.jsonl"
    parent.write_text("\n".join([*lines[:4], "{oops", *lines[4:]]) + "\n", encoding="utf-8")
    child = tmp_path / "child.jsonl"
    assert main(["fork", str(parent), "-o", str(child), "--id", "kid",
                 "--created-at", "5"]) == 1
    err = capsys.readouterr().err
    assert "line 5: not valid JSON" in err and "the runtime refuses this log" in err
    assert "no child written" in err and not child.exists()
    with pytest.raises(ForkRefused, match=r"line 5: not valid JSON.*the runtime refuses this log"):
        ledgerviz.load(parent).fork(session_id="kid", created_at=5)


def test_a_damaged_line_after_the_boundary_is_no_bar(tmp_path: Path, capsys) -> None:
    lines = lines_of(CRASH)
    parent = tmp_path / "parent.jsonl"
    parent.write_text("\n".join([*lines, "{late"]) + "\n", encoding="utf-8")
    assert main(["fork", str(parent), "-o", str(tmp_path / "child.jsonl"), "--id", "kid",
                 "--created-at", "5"]) == 0
    assert "18 inherited events, seed marker at seq 18" in capsys.readouterr().out
    assert [json.loads(line) for line in lines_of(tmp_path / "child.jsonl")] == crash_child(
        "kid", 5)
    (log,) = ledgerviz.load(parent).fork(session_id="kid", created_at=5).sessions
    assert [log.header, *log.events] == crash_child("kid", 5)  # it refused: an error anywhere


@pytest.mark.parametrize("at", [None, 40])
def test_the_parent_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 at: int | None) -> None:
    """As the runtime reads it, the boundary found and the child's lines spooled in the
    same read: one read takes chunks of the file (two did, three before them)."""
    from ledgerviz.streams import fork_file

    path, _ = crashed_scenario(tmp_path / "crashed.jsonl", 20)
    taken: list[int] = []  # chunks taken, per read of the file

    def counting(chunks: Iterable[object]) -> Iterator[object]:
        taken.append(0)
        for chunk in chunks:
            taken[-1] += 1
            yield chunk

    def counted(source: str, *args: int) -> Iterator[tuple[str, Iterator[object]]]:
        for name, chunks in iter_source_chunks(source, *args):
            yield name, counting(chunks)

    monkeypatch.setattr(fork_file, "iter_source_chunks", counted)
    write_fork(path, lambda text: None, at, created_at=0, chunk_bytes=4096)
    assert len([count for count in taken if count]) == 1


@pytest.mark.parametrize("call_id", [2**80 + 1, 10**400 + 1], ids=["2^80+1", "10^400+1"])
def test_a_call_id_beyond_64_bits_is_closed_exactly(tmp_path: Path, call_id: int) -> None:
    """The assistant message at seq 18 asks for four calls; forked at 18, the child closes
    each with a result naming it. Its second call's id made 2**80 + 1 (an integer no
    64-bit type holds) is named exactly, not as the float 1.2089258196146292e+24; made
    10**400 + 1 (beyond a double's range, which orjson refuses) it is read too, where the
    line was once left out and the fork said "no event with seq 18". ``Ledger.fork`` builds
    the same child (it refused: the id's warning was taken for a line left out)."""
    lines = lines_of(CRASH)
    message = json.loads(lines[19])
    assert message["seq"] == 18
    message["data"]["message"]["content"][2]["id"] = call_id
    parent = tmp_path / "parent.jsonl"
    parent.write_text("\n".join([*lines[:19], json.dumps(message), *lines[20:]]) + "\n",
                      encoding="utf-8")
    written: list[str] = []
    write_fork(parent, written.append, 18, session_id="kid", created_at=5)
    named = [event["data"]["message"]["toolCallId"]
             for event in map(json.loads, "".join(written).splitlines())
             if event["type"] == "tool/result" and event["seq"] > 18]
    assert named == ["call-eeea26e87555", call_id, "call-f6460a097c97", "call-13deab1031d0"]
    child = ledgerviz.load(parent).fork(18, session_id="kid", created_at=5).sessions[0]
    assert [child.header, *child.events] == list(map(json.loads, "".join(written).splitlines()))


def test_a_seq_on_a_line_the_runtime_stops_at_is_refused_naming_the_line(
        tmp_path: Path, capsys) -> None:
    """Seq 18 (line 20) made unreadable, no turn/end after it: the runtime reads seqs
    0..17 and stops at line 20, so the fork at 18 names that line (it said "no event with
    seq 18 to fork at (seqs run 0..21)"); at 17 the child is written."""
    lines = lines_of(CRASH)
    parent = tmp_path / "parent.jsonl"
    parent.write_text("\n".join([*lines[:19], "{oops", *lines[20:]]) + "\n", encoding="utf-8")
    child = tmp_path / "child.jsonl"
    assert main(["fork", str(parent), "-o", str(child), "--at", "18"]) == 1
    err = capsys.readouterr().err
    assert "the runtime reads seqs 0..17 (it stops at line 20: not valid JSON" in err
    assert "a child inheriting seq 18 is one it would not resume" in err
    assert not child.exists()
    assert main(["fork", str(parent), "-o", str(child), "--at", "17", "--id", "kid",
                 "--created-at", "5"]) == 0
    assert lines_of(child)[1:19] == lines[1:19]
    loaded = ledgerviz.load(parent)  # Ledger.fork judges alike (it said "no event with seq 18")
    with pytest.raises(ForkRefused, match=r"the runtime reads seqs 0\.\.17 \(it stops at line "
                       r"20: not valid JSON.*a child inheriting seq 18 is one it would not"):
        loaded.fork(18)
    (log,) = loaded.fork(17, session_id="kid", created_at=5).sessions
    assert [log.header, *log.events] == [json.loads(line) for line in lines_of(child)]


@pytest.mark.parametrize("kind", [{}, ["completed"]])
def test_a_turn_end_reason_the_engine_cannot_read_refuses_the_fork_by_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: object) -> None:
    """Line 16 of the crash example is turn 1's turn/end: its reason kind made an object or
    an array is a payload the runtime reads as it is, so the fork policy's scan met it, and
    the command died in the engine (TypeError: unhashable type)."""
    lines = CRASH.read_bytes().splitlines(keepends=True)
    end = json.loads(lines[15])
    assert end["type"] == "turn/end"
    end["data"]["reason"]["kind"] = kind
    parent = tmp_path / "parent.jsonl"
    parent.write_bytes(b"".join(lines[:15]) + json.dumps(end).encode() + b"\n"
                       + b"".join(lines[16:]))
    child = tmp_path / "child.jsonl"
    assert main(["fork", str(parent), "-o", str(child)]) == 1
    said = capsys.readouterr().err
    unhashable = type(kind).__name__  # the engine's own words, as Python says them
    assert said == (
        f"ledgerviz fork: {parent}:16: turn/end: 'data.reason.kind' must be a string, not "
        f"{'object' if kind == {} else 'array'}; the runtime reads this line as it is (kept "
        f"as the runtime reads it): the fork policy cannot read it (unhashable type: "
        f"'{unhashable}'), so its boundary is not known; `--at SEQ` forks at a seq of your "
        "choosing; no child written\n")
    assert not child.exists()
    assert main(["fork", str(parent), "-o", str(child), "--at", "13"]) == 0  # asked: done
