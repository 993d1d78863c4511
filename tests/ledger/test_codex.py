"""Codex CLI rollouts read into the dsh event model (FOREIGN_FORMATS.md §2, §4, §5), checked
against figures worked out by hand from the fixtures in tests/data/codex/ (see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.ledger import formats

DATA = Path(__file__).parent.parent / "data" / "codex"


def _load(name: str) -> ledgerviz.Ledger:
    return ledgerviz.load(DATA / name)


def test_a_rollout_is_found_by_its_content() -> None:
    head = (DATA / "basic.jsonl").read_bytes()
    assert formats.detect_format(head).name == "codex"
    assert formats.detect_format((DATA / "legacy.jsonl").read_bytes()).name == "codex"
    # a first line longer than the sniff window (long instructions) is still recognised
    long_meta = (b'{"timestamp":"2026-01-05T10:00:00Z","type":"session_meta","payload":'
                 b'{"id":"x","instructions":"' + b"a" * 100_000 + b'"}}\n')
    assert formats.detect_format(long_meta[: formats.SNIFF_BYTES]).name == "codex"
    assert formats.detect_format(b'{"type":"session","version":4,"id":"s"}\n').name == "dsh"


def test_the_first_session_meta_is_the_identity() -> None:
    log = _load("basic.jsonl").sessions[0]
    assert log.format == "codex"
    assert log.key == "thread-basic"
    assert log.header["createdAt"] == 1767607200000  # 2026-01-05T10:00:00Z
    assert log.header["cwd"] == "/work/repo"
    assert log.header["isSeeded"] is False
    assert log.diagnostics == []


def test_turns_come_from_task_markers_and_prompts_from_typed_user_messages() -> None:
    ledger = _load("basic.jsonl")
    turns = ledger.frames.turns
    # t1 completed, t2 turn_aborted(interrupted), t3 cut by the end of the file
    assert turns["end_reason"].astype(object).where(turns["end_reason"].notna(), None).tolist() \
        == ["completed", "aborted", None]
    assert turns["steps"].tolist() == [2, 3, 1]
    messages = ledger.frames.messages
    users = messages[messages["role"] == "user"]
    # AGENTS.md and <environment_context> are context, not prompts; each prompt once
    # (its event_msg user_message echo stays log-only)
    assert users[users["kind"] == "user"]["text"].tolist() == [
        "list the files", "clean up and patch", "run it again"]
    assert sorted(users["kind"].astype(str).unique()) == [
        "agent-instructions", "runtime-context", "user"]
    assert messages[messages["role"] == "developer"].shape[0] == 1
    events = ledger.frames.events
    assert (events["type"] == "codex/user_message").sum() == 2
    assert (events["type"] == "codex/agent_message").sum() == 1


def test_each_codex_call_has_the_status_the_file_proves() -> None:
    ledger = _load("basic.jsonl")
    calls = ledger.frames.calls.set_index("call_id")
    assert calls["status"].astype(str).to_dict() == {
        "call_ls": "ok",                    # Exit code: 0
        "call_rm": "not_started",           # exec command rejected by user
        "call_sleep": "outcome_unknown",    # aborted by user after 3.2s
        "call_patch": "ok",                 # custom_tool_call
        "call_make": "error",               # local_shell_call, Exit code: 2
        "call_test": "outcome_unknown",     # no output, turn_aborted interrupted
        "call_again": "outcome_unknown",    # no output, end of file
    }
    assert calls.loc["call_patch", "tool"] == "apply_patch"
    assert calls.loc["call_make", "tool"] == "local_shell"
    assert calls.loc["call_ls", "arguments"] == '{"command": ["ls"]}'
    assert dict(ledger.sessions[0].call_reasons) == {
        "call_rm": "rejected by user", "call_sleep": "interrupted mid-run",
        "call_test": "aborted", "call_again": "no result at end of file"}


def test_steps_are_output_items_up_to_the_next_model_call() -> None:
    steps = _load("basic.jsonl").frames.steps
    # t2: [rm, sleep] + outputs | [patch, make] + outputs | [web search, test]
    assert list(zip(steps["turn"], steps["step"], steps["calls"], strict=True)) == [
        (1, 1, 1), (1, 2, 0), (2, 1, 2), (2, 2, 2), (2, 3, 1), (3, 1, 1)]
    assert set(steps["model"].astype(str)) == {"gpt-5-codex"}


def test_usage_is_each_steps_last_token_usage_never_the_running_total() -> None:
    steps = _load("basic.jsonl").frames.steps
    first, second = steps.iloc[0], steps.iloc[1]
    # last_token_usage {input 1000, cached 400, output 50, reasoning 20}: input excludes cached
    assert (first["input_tokens"], first["cache_read_tokens"], first["output_tokens"],
            first["reasoning_tokens"]) == (600, 400, 50, 20)
    # {input 1200, cached 1000, output 30}; the total_token_usage (2200 in) is not summed
    assert (second["input_tokens"], second["cache_read_tokens"], second["output_tokens"]) == (
        200, 1000, 30)
    assert steps["input_tokens"].sum() == 800


def test_a_web_search_is_part_of_the_reply_not_a_call() -> None:
    ledger = _load("basic.jsonl")
    assert "web_search_call" not in set(ledger.frames.calls["tool"].astype(str))
    blocks = [block["type"] for event in ledger.sessions[0].events
              if event["type"] == "assistant/message"
              for block in event["data"]["message"]["content"]]
    assert blocks.count("plugin:codex-web_search_call") == 1


def test_openai_pairing_is_invalid_as_recorded_and_valid_after_synthesize() -> None:
    ledger = _load("basic.jsonl")
    recorded = ledger.context("recorded", provider="openai")
    assert recorded.valid["openai"] is False
    assert sorted(p.call_id for p in recorded.problems["openai"]) == ["call_again", "call_test"]
    assert ledger.context("synthesize", provider="openai").valid["openai"] is True


def test_a_rollback_abandons_the_turns_it_takes_back() -> None:
    ledger = _load("rollback.jsonl")
    calls = ledger.frames.calls.set_index("call_id")
    # four turns of one call each; thread_rolled_back{num_turns: 2} after turn 3
    assert calls["branch"].astype(str).to_dict() == {
        "c1": "active", "c2": "abandoned", "c3": "abandoned", "c4": "active"}
    assert calls["status"].astype(str).tolist() == ["ok"] * 4
    assert dict(ledger.sessions[0].call_reasons) == {}  # answered, if taken back
    messages = ledger.frames.messages
    assert messages[messages["branch"] == "abandoned"]["text"].tolist()[::4] == ["two", "three"]
    context = ledger.context("recorded", provider="openai")
    texts = [m["content"] for m in context.payload["messages"]
             if m["role"] == "user"]
    assert texts == ["one", "four"]
    events = ledger.frames.events
    assert (events["type"] == "surface/rewind").sum() == 1


def test_a_compaction_replaces_the_surface() -> None:
    ledger = _load("compacted.jsonl")
    context = ledger.context("recorded", provider="openai")
    users = [m["content"] for m in context.payload["messages"]
             if m["role"] == "user"]
    assert users == ["Summary: printed one and two.", "three"]
    assert ledger.frames.calls["branch"].astype(str).tolist() == ["log", "log", "active"]


def test_a_forked_subagent_names_its_parent_and_is_seeded() -> None:
    ledger = _load("fork-child.jsonl")
    lineage = ledger.frames.lineage.iloc[0]
    assert lineage["parent_session"] == "thread-basic"
    assert lineage["relation"] == "forked-subagent"
    assert bool(lineage["seeded"]) is True
    assert ledger.sessions[0].header["delegationDepth"] == 1
    assert [d.kind for d in ledger.diagnostics] == ["copied_prefix"]


FORK_DAY = DATA / "sessions" / "2026" / "01" / "05"


def test_a_forks_copied_prefix_is_found_against_its_parent_and_inherited() -> None:
    ledger = ledgerviz.load(DATA / "sessions")
    assert ledger.keys == ["thread-parent", "thread-fork"]
    assert ledger.diagnostics == []
    lineage = ledger.frames.lineage.set_index("session").loc["thread-fork"]
    # child meta (seq 0), the parent's meta and turn 1 (lines 2-8: seqs 1-12) and the
    # task_started of turn 2 (seq 13) are copied; the seed's end is seq 14
    assert (lineage["parent_session"], lineage["relation"], bool(lineage["seeded"])) == (
        "thread-parent", "fork", True)
    assert (lineage["inherited_events"], lineage["boundary_seq"]) == (14, 13)
    events = ledger.frames.events
    own = events[(events["session"] == "thread-fork") & ~events["inherited"]]
    assert own["type"].astype(str).tolist()[:3] == ["session/end-seed", "turn/end", "turn/start"]
    # the copy ends inside turn 2 (its task_started): the fork's cut ends it, not the file
    turns = ledger.session("thread-fork").frames.turns
    assert turns["end_reason"].astype(str).tolist() == ["completed", "forked", "completed"]
    log = ledger.sessions[1]
    assert [e["seq"] for e in log.events] == list(range(len(log.events)))
    results = [e["sourceEventSeqs"] for e in log.events if e["type"] == "tool/result"]
    assert results == [[6], [20]]  # the own call's dispatch moved one on, past the marker


def test_a_fork_alone_still_finds_its_parent_beside_it() -> None:
    ledger = ledgerviz.load(FORK_DAY / "rollout-2026-01-05T12-00-00-thread-fork.jsonl")
    assert ledger.frames.lineage["inherited_events"].tolist() == [14]


def test_a_copy_that_differs_from_its_parent_is_read_as_own(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "01" / "05"
    day.mkdir(parents=True)
    parent = (FORK_DAY / "rollout-2026-01-05T10-00-00-thread-parent.jsonl").read_text()
    (day / "rollout-2026-01-05T10-00-00-thread-parent.jsonl").write_text(
        parent.replace("thread-parent", "thread-parent", 1).replace('"cli"', '"exec"', 1))
    fork = FORK_DAY / "rollout-2026-01-05T12-00-00-thread-fork.jsonl"
    (day / fork.name).write_bytes(fork.read_bytes())
    ledger = ledgerviz.load(day / fork.name)
    assert ledger.frames.lineage["inherited_events"].tolist() == [0]
    assert [(d.kind, d.line) for d in ledger.diagnostics] == [("copied_prefix", 2)]
    assert "do not repeat" in ledger.diagnostics[0].message


def test_a_legacy_rollout_without_envelopes_is_read_line_by_line() -> None:
    ledger = _load("legacy.jsonl")
    log = ledger.sessions[0]
    assert log.key == "legacy-1"
    assert log.header["createdAt"] == 1746090000000  # 2025-05-01T09:00:00Z
    calls = ledger.frames.calls.set_index("call_id")
    # lc1's wrapped output says metadata.exit_code 1; lc2 has no output
    assert calls["status"].astype(str).to_dict() == {"lc1": "error", "lc2": "outcome_unknown"}
    assert ledger.frames.turns["turn"].tolist() == [1, 2]
    assert ledger.frames.turns["end_reason"].astype(str).tolist()[0] == "completed"
    assert (ledger.frames.events["type"] == "codex/state").sum() == 2


@pytest.mark.parametrize("name", [
    "basic.jsonl", "rollback.jsonl", "compacted.jsonl", "fork-child.jsonl", "legacy.jsonl",
    "sessions/2026/01/05/rollout-2026-01-05T12-00-00-thread-fork.jsonl"])
def test_every_line_leaves_an_event(name: str) -> None:
    log = _load(name).sessions[0]
    lines = (DATA / name).read_bytes().count(b"\n")
    assert sorted(set(log.lines)) == list(range(1, lines + 1))
    assert [e["seq"] for e in log.events] == list(range(len(log.events)))


def test_a_task_started_while_a_turn_is_open_ends_it_as_not_completed(tmp_path: Path) -> None:
    lines = (DATA / "basic.jsonl").read_text().splitlines()
    # drop t1's task_complete (line 16): t2's task_started finds t1 still open
    path = tmp_path / "resumed.jsonl"
    path.write_text("\n".join(lines[:15] + lines[16:]) + "\n")
    turns = ledgerviz.load(path).frames.turns
    assert turns["end_reason"].astype(str).tolist()[:2] == ["unmarked", "aborted"]


def test_a_call_left_unanswered_in_a_rolled_back_turn_says_so(tmp_path: Path) -> None:
    lines = (DATA / "rollback.jsonl").read_text().splitlines()
    # drop c3's output (line 17): turn 3, then rolled back, leaves c3 unanswered
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines[:16] + lines[17:]) + "\n")
    ledger = ledgerviz.load(path)
    calls = ledger.frames.calls.set_index("call_id")
    assert (calls.loc["c3", "status"], calls.loc["c3", "branch"]) == (
        "outcome_unknown", "abandoned")
    assert dict(ledger.sessions[0].call_reasons) == {"c3": "rolled back"}


def test_a_spawned_subagent_without_a_copy_is_a_subagent(tmp_path: Path) -> None:
    lines = (DATA / "fork-child.jsonl").read_text().splitlines()
    meta = lines[0].replace(',"forked_from_id":"thread-basic"', "")
    path = tmp_path / "rollout-sub.jsonl"
    path.write_text("\n".join([meta, *lines[2:]]) + "\n")  # no copied session_meta
    ledger = ledgerviz.load(path)
    lineage = ledger.frames.lineage.iloc[0]
    assert (lineage["parent_session"], lineage["relation"], bool(lineage["seeded"])) == (
        "thread-basic", "subagent", False)
    assert ledger.diagnostics == []


def test_the_calls_frame_says_why_each_call_has_its_status() -> None:
    calls = _load("basic.jsonl").frames.calls.set_index("call_id")
    assert calls["status_reason"].astype(str).to_dict() == {
        "call_ls": "answered", "call_rm": "rejected by user",
        "call_sleep": "interrupted mid-run", "call_patch": "answered", "call_make": "answered",
        "call_test": "aborted", "call_again": "no result at end of file"}


def test_a_rejected_call_was_never_dispatched() -> None:
    ledger = _load("basic.jsonl")
    calls = ledger.frames.calls.set_index("call_id")
    # call_rm's output is "exec command rejected by user": it never ran, so it has no
    # tool/call; the other six calls (ls, sleep, patch, make, test, again) have one each
    assert calls["dispatched_seq"].isna().to_dict() == {
        "call_ls": False, "call_rm": True, "call_sleep": False, "call_patch": False,
        "call_make": False, "call_test": False, "call_again": False}
    assert calls.loc["call_rm", "status"] == "not_started"
    events = ledger.sessions[0].events
    assert [e["data"]["callId"] for e in events if e["type"] == "tool/call"] == [
        "call_ls", "call_sleep", "call_patch", "call_make", "call_test", "call_again"]
    assert [e["seq"] for e in events] == list(range(len(events)))
    result = next(e for e in events if e["type"] == "tool/result"
                  and e["data"]["message"]["toolCallId"] == "call_rm")
    assert "sourceEventSeqs" not in result
    # every other result still names its own call's dispatch
    dispatch = {e["data"]["callId"]: e["seq"] for e in events if e["type"] == "tool/call"}
    assert {e["data"]["message"]["toolCallId"]: e["sourceEventSeqs"] for e in events
            if e["type"] == "tool/result" and "sourceEventSeqs" in e} == {
        call: [dispatch[call]] for call in ("call_ls", "call_sleep", "call_patch", "call_make")}


def test_a_turn_aborted_with_a_call_open_says_aborted_until_cut_before_it() -> None:
    ledger = _load("basic.jsonl")
    events = ledger.sessions[0].events
    aborted = next(e["seq"] for e in events if e["type"] == "turn/end"
                   and e["data"]["reason"]["kind"] == "aborted")
    # cut just before t2's turn/end(aborted): the step/end before it closes call_test's step
    # but nothing yet says the turn was aborted
    cut = ledger.cut(aborted).frames.calls.set_index("call_id")
    assert cut.loc["call_test", "status_reason"] == "no result in a closed step"
    whole = ledger.cut(aborted + 1).frames.calls.set_index("call_id")
    assert whole.loc["call_test", "status_reason"] == "aborted"
