"""``repair`` reads like the runtime's recoverable reader and only prints what is safe to append."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hostile_inputs import HEADER, V0_HEADER, base_events, cases, encode

from ledgerviz.cli import main

Capture = pytest.CaptureFixture[str]

OPEN_TAIL = base_events()[:5]  # turn 1, step 1, call A dispatched (seq 4), no result


def repair(capsys: Capture, path: Path, *flags: str) -> tuple[int, list[dict], str]:
    code = main(["repair", str(path), *flags])
    captured = capsys.readouterr()
    return code, [json.loads(line) for line in captured.out.splitlines()], captured.err


def closer_shape(events: list[dict]) -> list[tuple]:
    return [(e["type"], e["seq"], e["data"].get("error", {}).get("code")) for e in events]


def apply(path: Path, err: str, closers: list[dict]) -> None:
    """Do exactly what repair said: truncate where it says, then append what it printed."""
    for size in re.findall(r"truncate -s (\d+) FILE", err):
        os.truncate(path, int(size))
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(e, separators=(",", ":")) + "\n" for e in closers)


def check_passes(capsys: Capture, path: Path) -> bool:
    code = main(["check", str(path)])
    capsys.readouterr()
    return code == 0


@pytest.mark.usefixtures("read_bytes")
def test_torn_tail_end_to_end(tmp_path: Path, capsys: Capture) -> None:
    whole = encode(HEADER, OPEN_TAIL)
    fragment = b'{"type":"tool/res'
    path = tmp_path / "torn.jsonl"
    path.write_bytes(whole + fragment)
    code, printed, err = repair(capsys, path)
    assert (code, printed) == (1, [])
    assert f"torn fragment of {len(fragment)} bytes at byte offset {len(whole)}" in err
    code, closers, err = repair(capsys, path, "--allow-torn-tail")
    assert code == 0
    assert closer_shape(closers) == [
        ("tool/result", 5, "TOOL_OUTCOME_UNKNOWN"), ("step/end", 6, None), ("turn/end", 7, None)
    ]
    apply(path, err, closers)
    assert path.read_bytes().startswith(whole) and check_passes(capsys, path)
    code, printed, err = repair(capsys, path)
    assert (code, printed) == (0, [])
    assert "nothing to repair" in err


def test_damage_then_a_committed_turn_end_is_refused(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(cases()["bad-line-mid-file-then-turn-end.jsonl"])
    code, printed, err = repair(capsys, path)
    assert (code, printed) == (1, [])
    assert "line 5:" in err and "line 9 after it holds a turn/end" in err
    assert "refuses" in err


@pytest.fixture(params=[None, 16], ids=["whole-blocks", "16-byte-blocks"])
def read_bytes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read files in the reader's blocks, or 16 bytes at a time (every line spans blocks)."""
    if request.param is not None:
        monkeypatch.setattr("ledgerviz.ledger.reader.READ_BYTES", request.param)


@pytest.mark.usefixtures("read_bytes")
def test_damage_in_the_open_turn_is_cut_then_closed(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "cut.jsonl"
    good = encode(HEADER, OPEN_TAIL[:3])
    path.write_bytes(good + b"{oops\n" + encode(None, OPEN_TAIL[4:]))
    code, printed, err = repair(capsys, path)
    assert (code, printed) == (1, [])
    assert f"truncate -s {len(good)} FILE" in err and "line 5" in err
    apply(path, err, [])
    code, closers, err = repair(capsys, path)
    assert code == 0
    assert closer_shape(closers) == [("step/end", 3, None), ("turn/end", 4, None)]
    apply(path, err, closers)
    assert check_passes(capsys, path)
    assert repair(capsys, path)[:2] == (0, [])


@pytest.mark.usefixtures("read_bytes")
def test_a_seq_gap_stops_the_reading_like_the_runtime(tmp_path: Path, capsys: Capture) -> None:
    events = [*OPEN_TAIL[:4], {**OPEN_TAIL[4], "seq": 9}]
    path = tmp_path / "gap.jsonl"
    path.write_bytes(encode(HEADER, events))
    code, printed, err = repair(capsys, path)
    assert (code, printed) == (1, [])
    assert f"truncate -s {len(encode(HEADER, events[:4]))} FILE" in err


def packed_tail(header: dict) -> bytes:
    row = {"type": "text-chunks", "seq0": 4, "time0": 2000,
           "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]}}
    return encode(header, [*OPEN_TAIL[:4], row])


def test_packed_rows_are_expanded(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "packed.jsonl"
    path.write_bytes(packed_tail(V0_HEADER))
    code, closers, _ = repair(capsys, path)
    assert code == 0
    # chunks take seqs 4 and 5; call A was requested but never dispatched
    assert closer_shape(closers) == [
        ("tool/result", 6, "TOOL_NOT_STARTED"), ("step/end", 7, None), ("turn/end", 8, None)
    ]
    assert {e["time"] for e in closers} == {2001}


@pytest.mark.parametrize("header", [HEADER, {**HEADER, "version": 3}])
def test_packed_rows_after_v1_make_the_runtime_refuse(
    tmp_path: Path, capsys: Capture, header: dict
) -> None:
    """They expand into assistant/chunk events, a type the v2+ runtime does not know."""
    path = tmp_path / "packed.jsonl"
    path.write_bytes(packed_tail(header))
    code, closers, err = repair(capsys, path)
    assert (code, closers) == (1, [])
    assert "unknown type 'assistant/chunk' not ignorable" in err and "nothing printed" in err


def test_a_byte_order_mark_makes_the_runtime_refuse(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + encode(HEADER, OPEN_TAIL))
    code, closers, err = repair(capsys, path)
    assert (code, closers) == (1, [])
    assert "byte order mark" in err and "so it refuses this log" in err


def test_an_unknown_header_key_makes_the_runtime_refuse(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "key.jsonl"
    path.write_bytes(encode({**HEADER, "colour": "blue"}, OPEN_TAIL))
    code, closers, err = repair(capsys, path)
    assert (code, closers) == (1, [])
    assert "header key 'colour'" in err and "so it refuses this log" in err


@pytest.mark.parametrize(
    "name", ["unknown-required.jsonl", "no-header.jsonl", "not-a-ledger-csv.jsonl",
             "second-header.jsonl", "seq-duplicate.jsonl"]
)
def test_error_level_problems_never_exit_zero(tmp_path: Path, capsys: Capture, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(cases()[name])
    code, printed, err = repair(capsys, path)
    assert (code, printed) == (1, [])
    assert "nothing printed" in err


def test_a_closed_ledger_has_nothing_to_repair(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "closed.jsonl"
    path.write_bytes(encode(HEADER, base_events()))
    code, printed, err = repair(capsys, path)
    assert (code, printed) == (0, [])
    assert err.strip().endswith("nothing to repair (no open turn)")


@pytest.mark.parametrize(("name", "format_name"), [
    ("claude_code/basic.jsonl", "claude_code"), ("codex/basic.jsonl", "codex"),
    ("gemini/basic.jsonl", "gemini")])
def test_repair_and_fork_refuse_another_agents_transcript_in_one_line(
        tmp_path: Path, capsys: Capture, name: str, format_name: str) -> None:
    """They read it as a dsh ledger: a 'missing session header' error, then one 'no seq'
    error per line up to the listing's cap (20 lines for the Codex rollout), for a file that
    is no ledger of the runtime's at all."""
    path = Path(__file__).parents[1] / "data" / name
    refused = (f"{path}: a {format_name} transcript, not a dsh ledger: the runtime reads only "
               "its own")
    assert main(["repair", str(path)]) == 1
    assert capsys.readouterr() == ("", f"ledgerviz repair: {refused}; nothing printed\n")
    child = tmp_path / "child.jsonl"
    assert main(["fork", str(path), "-o", str(child)]) == 1
    assert capsys.readouterr().err == f"ledgerviz fork: {refused}; no child written\n"
    assert not child.exists()
