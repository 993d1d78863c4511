"""The Claude Code reader: every expected value below was worked out by hand from the
fixtures' lines (``tests/data/claude_code/README.md`` describes them)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.ledger import LedgerError, formats
from ledgerviz.ledger.formats import claude_code
from ledgerviz.report.sessions import LedgerFiles

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code"
PROJECTS = DATA / "projects"

BASIC_TYPES = [
    "claude-code/file-history-snapshot",
    "turn/start", "user/message", "step/start", "assistant/message", "tool/call", "tool/call",
    "tool/result", "claude-code/progress", "tool/result",
    "step/end", "step/start", "assistant/message", "claude-code/bridge-status",
    "step/end", "turn/end",
    "turn/start", "user/message", "step/start", "assistant/message", "tool/result",
    "step/end", "step/start", "assistant/message", "step/end", "turn/end",
    "turn/start", "user/message", "step/start", "assistant/message", "tool/call",
    "claude-code/progress", "tool/result", "user/message", "step/end", "turn/end",
    "turn/start", "user/message", "step/start", "assistant/message", "tool/call",
]


def load(name: str) -> ledgerviz.Ledger:
    return ledgerviz.load(DATA / name)


def test_a_transcript_is_recognised_by_its_first_line() -> None:
    for name in ("basic.jsonl", "rewind.jsonl"):  # a file-history-snapshot; a prompt
        assert formats.detect_format((DATA / name).read_bytes()).name == "claude_code"
    assert claude_code.sniff(b'{"parentUuid":null,"sessionId":"s","type":"us')  # cut short
    dsh = b'{"type":"session","version":4,"id":"s","createdAt":0,"isSeeded":false}\n'
    gemini = b'{"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t"}\n'
    codex = b'{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n'
    assert not any(map(claude_code.sniff, (dsh, gemini, codex, b"", b"[1]\n")))


def test_basic_events_turns_steps_and_lines() -> None:
    session = load("basic.jsonl").sessions[0]
    assert session.format == "claude_code" and session.key == "basic"
    assert [event["type"] for event in session.events] == BASIC_TYPES
    assert [event["seq"] for event in session.events] == list(range(41))
    # the three records of msg_1 (lines 3-5) are one step: its events all cite line 3
    assert session.lines[3:7] == [3, 3, 3, 3] and session.lines[7] == 6
    assert session.header == {"type": "session", "version": 4, "id": "basic",
                              "createdAt": 1767607200000, "isSeeded": False,
                              "cwd": "/home/dev/repo"}
    message = session.events[4]["data"]["message"]
    assert [block["type"] for block in message["content"]] == ["text", "tool-call", "tool-call"]
    assert message["content"][1]["arguments"] == '{"command":"ls"}'


def test_basic_every_line_is_accounted_for() -> None:
    session = load("basic.jsonl").sessions[0]
    counts = [d for d in session.diagnostics if d.kind == "line_counts"]
    assert counts[0].message.startswith("21 lines: 19 records written as events, 2 assistant "
                                        "records merged")
    assert session.lines_skipped == 2  # 19 + 2 = 21
    unknown = [d for d in session.diagnostics if d.kind == "unknown_record"]
    assert [(d.line, d.severity) for d in unknown] == [(10, "warning")]
    assert "1 record of unknown kind 'bridge-status'" in unknown[0].message


def test_basic_usage_is_counted_once_per_step() -> None:
    steps = load("basic.jsonl").frames.steps
    assert steps[["turn", "step"]].values.tolist() == [[1, 1], [1, 2], [2, 1], [2, 2], [3, 1],
                                                       [4, 1]]
    first = steps.iloc[0]
    assert (first["input_tokens"], first["output_tokens"], first["cache_read_tokens"]) == (
        10, 5, 100)
    assert steps["input_tokens"].sum() == 10 + 30 + 40 + 50 + 60 + 70


def test_basic_call_statuses_and_reasons() -> None:
    calls = load("basic.jsonl").frames.calls.set_index("call_id")
    assert calls[["status", "status_reason", "is_error"]].values.tolist() == [
        ["ok", "answered", False],
        ["error", "answered", True],
        ["not_started", "rejected by user", True],
        ["outcome_unknown", "interrupted mid-run", True],
        ["outcome_unknown", "no result at end of file", False],
    ]
    # a refusal alone never ran: no tool/call; an interrupted one did
    assert calls["dispatched_seq"].tolist()[2:] == [pd.NA, 30, 40]
    assert calls.loc["toolu_4", "error_code"] == "TOOL_OUTCOME_UNKNOWN"


def test_basic_turn_ends() -> None:
    turns = load("basic.jsonl").frames.turns
    assert turns["end_reason"].tolist()[:3] == ["completed", "completed", "aborted"]
    assert turns["end_reason"].isna().tolist()[3]  # turn 4 is left open by the crash
    assert turns[["steps", "calls"]].values.tolist() == [[2, 2], [2, 1], [1, 1], [1, 1]]


def test_a_cut_before_a_result_derives_its_own_reason() -> None:
    ledger = load("basic.jsonl")
    # cut before toolu_4's tool/call (seq 30): requested, never dispatched in the cut
    calls = ledger.cut(30, reuse=True).frames.calls.set_index("call_id")
    assert calls.loc["toolu_4", ["status", "status_reason"]].tolist() == [
        "not_started", "no result at end of file"]
    calls = ledger.cut(33).frames.calls.set_index("call_id")  # its refusal recorded
    assert calls.loc["toolu_4", "status_reason"] == "interrupted mid-run"


def test_a_crashed_tool_use_is_invalid_as_recorded_and_valid_after_synthesize() -> None:
    ledger = load("basic.jsonl")
    recorded = ledger.context("recorded", provider="anthropic")
    assert recorded.valid["anthropic"] is False
    assert [(p.kind, p.call_id) for p in recorded.problems["anthropic"]] == [
        ("missing_result", "toolu_5")]
    assert ledger.context("synthesize", provider="anthropic").valid["anthropic"] is True
    closers = ledger.recovery("synthesize").analyses["basic"].closers
    assert [(e["type"], e["data"].get("error", {}).get("code")) for e in closers] == [
        ("tool/result", "TOOL_OUTCOME_UNKNOWN"), ("step/end", None), ("turn/end", None)]
    assert closers[0]["sourceEventSeqs"] == [40]


def test_fork_points_are_the_calls_that_may_have_run() -> None:
    # toolu_4 (interrupted mid-run, msg_5 at seq 29); after the fork, toolu_5 (msg_6, seq 39).
    # The refused toolu_3 (not started) is no fork point.
    assert load("basic.jsonl").recovery("fork").analyses["basic"].fork_points == [29, 39]


def test_a_rewind_abandons_the_older_branch() -> None:
    ledger = load("rewind.jsonl")
    session = ledger.sessions[0]
    rewind = session.events[17]
    assert rewind["type"] == "surface/rewind"
    assert rewind["data"] == {"start": 7, "end": 14, "shadowedSeqs": [7, 9, 11, 14]}
    assert [e["type"] for e in session.events[15:19]] == ["step/end", "turn/end",
                                                          "surface/rewind", "turn/start"]
    analysis = ledger.recovery("recorded").analyses["rewind"]
    assert analysis.surface == [1, 3, 19, 21]
    assert analysis.abandoned_seqs == [7, 9, 11, 14]
    call = ledger.frames.calls.iloc[0]
    assert (call["call_id"], call["status"], call["branch"], call["settled"]) == (
        "toolu_1", "ok", "abandoned", False)
    messages = ledger.frames.messages
    assert messages[messages["branch"] == "abandoned"]["seq"].tolist() == [7, 9, 11, 14]


def test_the_newest_branch_is_active_wherever_it_sits_in_the_file(tmp_path: Path) -> None:
    lines = (DATA / "rewind.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "rewind.jsonl"  # the rewound branch written first, the older one after
    path.write_bytes(b"".join([*lines[:2], *lines[6:], *lines[2:6]]))
    ledger = ledgerviz.load(path)
    analysis = ledger.recovery("recorded").analyses["rewind"]
    texts = [ledger.sessions[0].events[i]["data"].get("content", [{}])[0].get("text")
             for i in analysis.surface if ledger.sessions[0].events[i]["type"] == "user/message"]
    assert texts == ["write a poem about roses", "make it shorter instead"]
    assert len(analysis.abandoned_seqs) == 4


def test_false_forks_are_linearised() -> None:
    ledger = load("false_forks.jsonl")
    session = ledger.sessions[0]
    types = [event["type"] for event in session.events]
    assert "surface/rewind" not in types
    assert types == [
        "turn/start", "user/message", "step/start", "assistant/message", "tool/call",
        "tool/call", "tool/result", "tool/result", "claude-code/attachment",
        "claude-code/progress", "step/end", "step/start", "assistant/message",
        "claude-code/system", "user/message", "step/end", "turn/end", "turn/start",
        "user/message", "step/start", "assistant/message", "step/end", "turn/end",
    ]
    # one merged record (line 3), two copies (the replayed prompt and the repeated uuid)
    assert session.lines_skipped == 3
    summary = session.events[14]
    assert summary["surfaceOp"] == {"op": "replace", "startSeq": 1, "endSeq": 12}
    assert summary["data"]["source"] == {"kind": "compact-checkpoint"}
    assert ledger.recovery("recorded").analyses["false_forks"].surface == [14, 18, 20]
    assert ledger.frames.calls["status"].tolist() == ["ok", "ok"]
    assert not ledger.frames.events["branch"].eq("abandoned").any()


def test_a_result_between_the_records_of_one_message_changes_nothing(tmp_path: Path) -> None:
    lines = (DATA / "false_forks.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "false_forks.jsonl"  # a1, toolu_A's result, then a2 (same message)
    path.write_bytes(b"".join([lines[0], lines[1], lines[3], lines[2], *lines[4:]]))
    moved, original = ledgerviz.load(path).sessions[0], load("false_forks.jsonl").sessions[0]
    assert [e["type"] for e in moved.events] == [e["type"] for e in original.events]
    assert moved.events[3]["data"]["message"] == original.events[3]["data"]["message"]
    assert moved.lines[6:8] == [3, 5]  # the results keep their own lines


def test_a_projects_folder_links_subagents_and_resumes(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    shutil.copytree(PROJECTS, home / ".claude" / "projects")
    monkeypatch.setenv("HOME", str(home))
    ledger = ledgerviz.load("~/.claude/projects")
    assert ledger.keys == ["0b5e7c1e-main", "agent-a7f3", "9d2f4a60-resumed"]
    lineage = ledger.frames.lineage.set_index("session")
    assert lineage["parent_session"].tolist()[1:] == ["0b5e7c1e-main", "0b5e7c1e-main"]
    assert lineage["relation"].tolist() == ["root", "subagent", "fork"]
    # the resume copies 4 records with the main's uuids (its own sessionId): the summary
    # line and their events, 10 in all, are inherited; the prompt n1 closes the copied turn
    assert lineage.loc["9d2f4a60-resumed", "inherited_events"] == 10
    resumed = ledger.sessions[2]
    assert resumed.events[10]["data"] == {"inherited": True}
    assert [e["type"] for e in resumed.events[9:14]] == [
        "assistant/message", "session/end-seed", "step/end", "turn/end", "turn/start"]
    assert [e["seq"] for e in resumed.events] == list(range(24))
    assert resumed.events[17]["data"]["callId"] == "toolu_e"  # references shifted by one
    assert resumed.events[18]["sourceEventSeqs"] == [17]
    events = ledger.frames.events
    own = events[~events["inherited"]]
    assert own.groupby("session", observed=True).size().to_dict() == {
        "0b5e7c1e-main": 12, "agent-a7f3": 11, "9d2f4a60-resumed": 14}


def test_a_subagent_hangs_from_the_task_call_that_started_it(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    shutil.copytree(PROJECTS, folder)
    # the resume's copy of the Task result keeps its toolUseResult (agentId a7f3), as a real
    # copy would: that copy is inherited, so it anchors nothing of its own
    resumed = folder / "-home-dev-repo" / "9d2f4a60-resumed.jsonl"
    records = [orjson.loads(line) for line in resumed.read_bytes().splitlines()]
    records[3]["toolUseResult"] = {"status": "completed", "agentId": "a7f3"}
    resumed.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    ledger = ledgerviz.load(folder)
    main = ledger.sessions[0]
    # main: turn/start 0, user/message 1, step/start 2, assistant/message 3 (Task call),
    # tool/call 4, tool/result 5, then the catalog naming the subagent file's session
    assert main.events[6]["type"] == "subagent/catalog"
    assert main.events[6]["data"] == {"version": 1, "childId": "agent-a7f3",
                                      "mode": "unknown", "callId": "toolu_task"}
    assert main.lines[6] == 3  # the result's line
    lineage = ledger.frames.lineage.set_index("session")
    anchors = lineage[["anchor_call_id", "anchor_seq"]].astype(object)
    assert anchors.where(anchors.notna(), None).to_dict("index") == {
        "0b5e7c1e-main": {"anchor_call_id": None, "anchor_seq": None},
        "agent-a7f3": {"anchor_call_id": "toolu_task", "anchor_seq": 4},
        "9d2f4a60-resumed": {"anchor_call_id": None, "anchor_seq": None}}
    alone = ledgerviz.load(folder / "-home-dev-repo" / "0b5e7c1e-main" / "subagents")
    assert alone.frames.lineage["anchor_seq"].isna().all()  # its parent is not loaded


def _check(capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    assert main(["check", "--json", str(path)]) == 0
    (summary,) = json.loads(capsys.readouterr().out)["sessions"]
    return summary


def test_check_of_a_resume_alone_links_it_to_the_session_beside_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    resumed = PROJECTS / "-home-dev-repo" / "9d2f4a60-resumed.jsonl"
    summary = _check(capsys, resumed)
    # as in a load of the folder: 23 events of its own reading plus the session/end-seed,
    # the first 10 (the summary line and the 4 copied records' events) inherited
    assert summary["events"] == 24
    (note,) = [d for d in summary["diagnostics"] if d["kind"] == "copied_prefix"]
    assert note["message"].startswith("the first 10 events copy session 0b5e7c1e-main's")
    alone = tmp_path / "9d2f4a60-resumed.jsonl"
    shutil.copy(resumed, alone)  # nothing beside it: nothing to link
    summary = _check(capsys, alone)
    assert summary["events"] == 23
    assert [d for d in summary["diagnostics"] if d["kind"] == "copied_prefix"] == []
    main_session = _check(capsys, PROJECTS / "-home-dev-repo" / "0b5e7c1e-main.jsonl")
    assert [d for d in main_session["diagnostics"] if d["kind"] == "copied_prefix"] == []


def test_a_report_reading_file_by_file_links_a_resume() -> None:
    files = LedgerFiles.read([PROJECTS])
    lineage = files.lineage.set_index("session")
    assert lineage["relation"].tolist() == ["root", "subagent", "fork"]
    assert lineage.loc["9d2f4a60-resumed", "parent_session"] == "0b5e7c1e-main"
    assert lineage.loc["9d2f4a60-resumed", "inherited_events"] == 10
    # the subagent hangs from the main session's Task tool/call at seq 4, as a load says
    assert lineage.loc["agent-a7f3", ["anchor_call_id", "anchor_seq"]].tolist() == [
        "toolu_task", 4]
    resumed = files.part([2]).sessions[0]
    assert resumed.events[10]["type"] == "session/end-seed"


def test_sessions_that_copy_nothing_are_not_linked() -> None:
    names = ("basic.jsonl", "rewind.jsonl", "false_forks.jsonl")
    ledger = ledgerviz.load([DATA / name for name in names])  # all begin at 10:00:00
    assert [log.header["isSeeded"] for log in ledger.sessions] == [False] * 3
    assert ledger.frames.lineage["relation"].tolist() == ["root"] * 3


def test_a_copied_prefix_naming_its_session_is_inherited_in_one_file(tmp_path: Path) -> None:
    resumed = PROJECTS / "-home-dev-repo" / "9d2f4a60-resumed.jsonl"
    records = [orjson.loads(line) for line in resumed.read_bytes().splitlines()]
    for record in records[1:5]:  # the copies keep the main session's id (older builds)
        record["sessionId"] = "0b5e7c1e-main"
    path = tmp_path / "9d2f4a60-resumed.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    session = ledgerviz.load(path).sessions[0]
    assert session.header["isSeeded"] and session.header["parentSession"] == "0b5e7c1e-main"
    assert session.events[10] == {"type": "session/end-seed", "seq": 10,
                                  "time": session.events[9]["time"],
                                  "data": {"inherited": True}}


def test_hostile_lines_become_diagnostics(tmp_path: Path) -> None:
    good = (DATA / "rewind.jsonl").read_bytes().splitlines(keepends=True)
    hostile = [
        good[0],
        b'{"type":"user","uuid":7,"parentUuid":["x"],"timestamp":"yesterday","message":"hi"}\n',
        b'[1, 2, 3]\n',
        b'{"type": \n',
        b'{"type":"session","version":4,"id":"s","createdAt":0,"isSeeded":false}\n',
        b'{"uuid":"c1","parentUuid":"c2","type":"assistant","message":{"id":"m","content":[]}}\n',
        b'{"uuid":"c2","parentUuid":"c1","type":"system"}\n',
        b'{"type":"user","uuid":"r9","parentUuid":"r-a1","message":{"content":[{"type":'
        b'"tool_result","tool_use_id":"nope","is_error":"true","content":5}]}}\n',
        b'{"no_type":true}\n',
        good[1],
        b'{"type":"assistant","uuid":"t',  # torn
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(b"".join(hostile))
    session = ledgerviz.load(path, format="claude_code").sessions[0]
    kinds = {(d.line, d.kind) for d in session.diagnostics}
    assert {(2, "wrong_shape"), (3, "not_an_object"), (4, "invalid_json"),
            (5, "mixed_format"), (8, "orphan_result"), (8, "wrong_shape"),
            (9, "wrong_shape"), (11, "torn_tail")} <= kinds
    assert sum(d.kind == "parent_cycle" for d in session.diagnostics) == 1
    counts = next(d for d in session.diagnostics if d.kind == "line_counts")
    assert counts.message.startswith("11 lines: 8 records written as events, 0 assistant "
                                     "records merged into the step of an earlier one (same "
                                     "message.id), 0 replayed copies skipped, 3 unreadable")
    ledger = ledgerviz.load(path, format="claude_code")
    assert len(ledger.frames.events) == len(session.events)
    with pytest.raises(LedgerError, match="not_an_object"):
        ledgerviz.load(path, format="claude_code", strict=True)


def test_a_byte_order_mark_is_a_warning() -> None:
    data = b"\xef\xbb\xbf" + (DATA / "rewind.jsonl").read_bytes()
    session = formats.format_named("claude_code").read("r.jsonl", [data], formats.ReadOptions())
    first = session.diagnostics[0]
    assert (first.kind, first.severity) == ("byte_order_mark", "warning")
    assert len(session.events) == 24


def test_a_50_mb_line_is_read(tmp_path: Path) -> None:
    big = {"parentUuid": "r-a1", "type": "user", "uuid": "big", "sessionId": "s",
           "timestamp": "2026-01-05T10:00:06.000Z",
           "message": {"role": "user", "content": "x" * (50 << 20)}}
    lines = (DATA / "rewind.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join([*lines[:2], orjson.dumps(big) + b"\n"]))
    session = ledgerviz.load(path).sessions[0]
    assert session.format == "claude_code"
    assert [e["type"] for e in session.events][-2:] == ["turn/start", "user/message"]
    assert len(session.events[-1]["data"]["content"][0]["text"]) == 50 << 20


def test_the_reader_imports_only_stdlib_orjson_msgspec_the_vocabulary_and_wording() -> None:
    """``wording`` (counted nouns) imports nothing; the layering lets ``ledger/`` use it, and
    msgspec (its typed decode, ``docs/architecture.md``)."""
    import ast
    import sys

    package = Path(claude_code.__file__).parent
    for path in sorted(package.glob("claude_code*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                allowed = (name.split(".")[0] in {*sys.stdlib_module_names, "orjson", "msgspec"}
                           or name.startswith("ledgerviz.ledger")
                           or name in ("ledgerviz.recovery.vocab", "ledgerviz.wording"))
                assert allowed, f"{path.name} imports {name}"


_KEYS = ("type", "uuid", "parentUuid", "logicalParentUuid", "timestamp", "sessionId", "message",
         "isSidechain", "isMeta", "isCompactSummary", "toolUseResult", "toolUseID", "subtype")
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.sampled_from(
        ["user", "assistant", "system", "progress", "u1", "u2", "a1", "t1", "text", "tool_use",
         "tool_result", "2026-01-05T10:00:00Z", "[Request interrupted by user for tool use]",
         "The user doesn't want to proceed with this tool use.", "compact_boundary"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(("id", "type", "content", "text", "tool_use_id", "is_error", "input",
                         "name", "usage", "role")), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=7), max_size=12))
def test_any_records_read_without_a_traceback(records: list[dict]) -> None:
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    session = formats.format_named("claude_code").read("x.jsonl", [data],
                                                       formats.ReadOptions())
    assert [e["seq"] for e in session.events] == list(range(len(session.events)))
    counts = next(d for d in session.diagnostics if d.kind == "line_counts")
    assert counts.message.startswith(f"{len(records)} line:" if len(records) == 1
                                     else f"{len(records)} lines:")
    ledger = ledgerviz.Ledger([session])
    for policy in ("recorded", "synthesize", "fork"):
        assert len(ledger.recovery(policy).frames.calls) >= 0
    ledger.context("synthesize", provider="anthropic")
