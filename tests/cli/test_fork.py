"""``ledgerviz fork`` writes the runtime's fork seed as a new file; ``Ledger.fork`` returns it.

Expected values come from the files themselves (the parent's own lines) and from
LEDGER_FORMAT.md §11 worked by hand for the crash-mid-dispatch example: the process died
in turn 2 after the assistant message at seq 18 asked for four calls and the first one was
dispatched (seq 19) and the second (seq 20) too; the first result is seq 21.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.examples import example_path
from ledgerviz.recovery import PROVIDERS, ForkRefused

CRASH = example_path("crash-mid-dispatch")


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_fork_writes_the_seed_and_leaves_the_parent(tmp_path: Path, capsys) -> None:
    digest = hashlib.sha256(CRASH.read_bytes()).hexdigest()
    child = tmp_path / "child.jsonl"
    argv = ["fork", str(CRASH), "-o", str(child), "--id", "kid", "--created-at", "5"]
    assert main(argv) == 0
    assert "18 inherited events" in capsys.readouterr().out
    assert hashlib.sha256(CRASH.read_bytes()).hexdigest() == digest
    parent_lines, child_lines = lines_of(CRASH), lines_of(child)
    parent_header = json.loads(parent_lines[0])
    assert json.loads(child_lines[0]) == {
        "type": "session",
        "version": 4,
        "id": "kid",
        "createdAt": 5,
        "cwd": parent_header["cwd"],
        "parentSession": parent_header["id"],
        "isSeeded": True,
        "delegationDepth": parent_header["delegationDepth"],
    }
    assert child_lines[1:19] == parent_lines[1:19]  # seqs 0..17, byte for byte
    time = json.loads(parent_lines[18])["time"]
    assert [json.loads(line) for line in child_lines[19:]] == [
        {"type": "session/end-seed", "seq": 18, "time": time, "data": {"inherited": True}},
        {"type": "step/end", "seq": 19, "time": time, "data": {"turn": 2, "step": 1}},
        {
            "type": "turn/end",
            "seq": 20,
            "time": time,
            "data": {"turn": 2, "reason": {"kind": "forked"}},
        },
    ]


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
    assert main(["fork", str(missing), "-o", str(tmp_path / "other.jsonl")]) in (1, 2)
    err = capsys.readouterr().err
    assert "gone\\x1b[2J.jsonl" in err and "\x1b" not in err
