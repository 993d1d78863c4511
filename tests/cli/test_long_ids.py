"""A 20,000-character id (session, call) in a command's terminal text: its first 200
characters, an ellipsis and its full length, escaped; ``--json`` keeps it whole (issue 38).

Expected values are literals: the ids are built here, the crash-mid-dispatch example's
unanswered call is ``call-6bf47d2caf82`` (its seq 20 dispatch has no result), and an orphan
result appended to it names a call the file never requested.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from ledgerviz.cli import main
from ledgerviz.examples import example_path

CRASH = example_path("crash-mid-dispatch")
SESSION = "\x1b]0;t\x07" + "S" * 19_994  # starts with a terminal title change (OSC): 20,000
CALL = "\u202e" + "C" * 19_999  # starts with a right-to-left override: 20,000
ORPHAN = "Z" * 20_000
SESSION_SHOWN = "\\x1b]0;t\\x07" + "S" * 194 + "… (20,000 characters)"
CALL_SHOWN = "\\u202e" + "C" * 199 + "… (20,000 characters)"
ORPHAN_SHOWN = "Z" * 200 + "… (20,000 characters)"


def renamed(value: Any, names: dict[str, str]) -> Any:
    """Return the decoded JSON ``value`` with every string in ``names`` renamed."""
    if isinstance(value, dict):
        return {key: renamed(item, names) for key, item in value.items()}
    if isinstance(value, list):
        return [renamed(item, names) for item in value]
    return names.get(value, value) if isinstance(value, str) else value


def write_hostile(path: Path, *, orphan: bool = True) -> Path:
    """Write the crash example with hostile session and unanswered-call ids to ``path``,
    then (``orphan``) a result answering a 20,000-character call id nobody requested."""
    events = [renamed(json.loads(line), {"sim-crash-mid-dispatch-7": SESSION,
                                         "call-6bf47d2caf82": CALL})
              for line in CRASH.read_text().splitlines()]
    last = events[-1]
    if orphan:
        events.append({"type": "tool/result", "seq": last["seq"] + 1, "time": last["time"],
                       "surfaceOp": "append", "data": {"turn": 2, "step": 1, "message": {
                           "id": "m", "role": "tool", "toolCallId": ORPHAN,
                           "content": [{"type": "text", "text": "x"}],
                           "source": {"kind": "tool", "callId": ORPHAN}}}})
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return path


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return write_hostile(tmp_path / "hostile.jsonl")


def assert_bounded(text: str) -> None:
    """Assert no id is printed whole and nothing raw can steer the terminal."""
    assert "S" * 201 not in text and "C" * 201 not in text and "Z" * 201 not in text
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text


@pytest.mark.parametrize("stream", [[], ["--stream"]])
def test_check_shows_ids_and_quoted_ids_shortened(hostile: Path, stream: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", *stream, str(hostile)])
    out = capsys.readouterr().out
    assert_bounded(out)
    assert out.startswith(f"{SESSION_SHOWN}  ({hostile})\n")
    assert f"unanswered: {CALL_SHOWN} (TOOL_OUTCOME_UNKNOWN), " in out
    assert f"answers call '{ORPHAN_SHOWN}'" in out


def test_check_json_keeps_ids_whole(hostile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", "--json", str(hostile)])
    (session,) = orjson.loads(capsys.readouterr().out)["sessions"]
    assert session["id"] == SESSION
    assert session["unanswered"][0]["call_id"] == CALL
    assert any(ORPHAN in d["message"] for d in session["diagnostics"])


def test_diff_shows_the_session_id_shortened(hostile: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(hostile), str(CRASH)]) == 1
    out = capsys.readouterr().out
    assert_bounded(out)
    assert out.startswith(f"a: {SESSION_SHOWN} ({hostile}), 23 events\n")


def test_fork_shows_the_child_id_shortened(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    hostile = write_hostile(tmp_path / "parent.jsonl", orphan=False)  # else fork refuses
    child = tmp_path / "child.jsonl"
    main(["fork", str(hostile), "-o", str(child), "--created-at", "0"])
    captured = capsys.readouterr()
    assert_bounded(captured.out + captured.err)
    # the child's id is the parent's and "-fork-17": 20,008 characters, written whole
    assert json.loads(child.read_text().splitlines()[0])["id"] == f"{SESSION}-fork-17"
    assert captured.out.startswith(f"wrote {child}: session {SESSION_SHOWN[:-21]}"
                                   "… (20,008 characters), 18 inherited events")


@pytest.mark.parametrize("argv", [["repair"], ["otlp", "-o", "OUT"], ["export", "-o", "OUT"]])
def test_other_commands_print_no_id_whole(hostile: Path, tmp_path: Path, argv: list[str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    main([a.replace("OUT", str(tmp_path / "out")) for a in argv] + [str(hostile)])
    captured = capsys.readouterr()
    if argv == ["repair"]:  # the closers on stdout are data; the diagnostics go to stderr
        assert f"answers call '{ORPHAN_SHOWN}'" in captured.err
    else:
        assert_bounded(captured.out)
    assert_bounded(captured.err)
