"""Gemini CLI chats read into the dsh event model (FOREIGN_FORMATS.md §3, §4, §5), checked
against figures worked out by hand from the fixtures in tests/data/gemini/ (see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.ledger import formats

DATA = Path(__file__).parent.parent / "data" / "gemini"


def _load(name: str) -> ledgerviz.Ledger:
    return ledgerviz.load(DATA / name)


def test_a_chat_is_found_by_its_content() -> None:
    assert formats.detect_format((DATA / "basic.jsonl").read_bytes()).name == "gemini"
    legacy = (DATA / "session-2025-09-01T08-00-legacy1.json").read_bytes()
    assert formats.detect_format(legacy).name == "gemini"


def test_the_header_is_the_identity() -> None:
    log = _load("basic.jsonl").sessions[0]
    assert (log.format, log.key, log.header["createdAt"]) == ("gemini", "gem-basic",
                                                              1767607200000)
    # the one diagnostic: a message of a type gemini-cli does not write
    assert [(d.kind, d.line) for d in log.diagnostics] == [("unknown_record", 10)]


def test_user_messages_are_turns_and_gemini_messages_steps() -> None:
    ledger = _load("basic.jsonl")
    turns = ledger.frames.turns
    assert turns["steps"].tolist() == [2, 1]
    assert turns["calls"].tolist() == [5, 2]
    assert turns["end_reason"].astype(str).tolist() == ["completed", "completed"]
    events = ledger.frames.events
    # info and error messages are log-only; g1's second copy (line 4) replaced its first
    assert (events["type"] == "gemini/info").sum() == 1
    assert (events["type"] == "gemini/error").sum() == 1
    assert (events["type"] == "gemini/update").sum() == 1
    assert (events["type"] == "assistant/message").sum() == 3


def test_each_gemini_call_has_the_status_the_file_proves() -> None:
    ledger = _load("basic.jsonl")
    calls = ledger.frames.calls.set_index("call_id")
    assert calls["status"].astype(str).to_dict() == {
        "c-ok": "ok",                       # success
        "c-err": "error",                   # error
        "c-policy": "error",                # error, yet the text shows a policy denial
        "c-cancel": "outcome_unknown",      # cancelled mid-run
        "c-denied": "not_started",          # cancelled, the text shows the user denied it
        "c-run": "outcome_unknown",         # executing when recorded
        "c-wait": "not_started",            # awaiting_approval when recorded
    }
    # a call the file shows never started has no tool/call (FOREIGN_FORMATS.md §4)
    assert calls["dispatched_seq"].isna().tolist() == [False] * 4 + [True, False, True]
    assert dict(ledger.sessions[0].call_reasons) == {
        "c-policy": "denied by policy", "c-cancel": "interrupted mid-run",
        "c-denied": "rejected by user", "c-run": "no result at end of file",
        "c-wait": "no result at end of file"}


def test_usage_is_read_from_tokens_with_cached_input_apart() -> None:
    steps = _load("basic.jsonl").frames.steps
    # g1 {input 1000, cached 300, output 40, thoughts 12}; g2 {1500, 1000, 10, 0}
    assert steps["input_tokens"].tolist()[:2] == [700, 500]
    assert steps["cache_read_tokens"].tolist()[:2] == [300, 1000]
    assert steps["output_tokens"].tolist()[:2] == [40, 10]
    assert steps["reasoning_tokens"].tolist()[:2] == [12, 0]
    assert set(steps["model"].astype(str)) == {"gemini-2.5-pro"}


def test_a_rewind_abandons_that_message_and_every_later_one() -> None:
    ledger = _load("rewind.jsonl")
    messages = ledger.frames.messages
    branch = dict(zip(messages["text"], messages["branch"].astype(str), strict=True))
    # $rewindTo u2 takes back u2..g3; $rewindTo an unknown id takes back all that is left
    assert branch == {
        "one": "abandoned", "did one": "abandoned", "two": "abandoned", "did two": "abandoned",
        "a b": "abandoned", "three": "abandoned", "did three": "abandoned",
        "two again": "abandoned", "did two again": "abandoned",
        "fresh start": "active", "ok": "active"}
    rewinds = [e["data"] for e in ledger.sessions[0].events if e["type"] == "surface/rewind"]
    assert [len(r["shadowedSeqs"]) for r in rewinds] == [5, 4]
    assert ledger.frames.calls["branch"].astype(str).tolist() == ["abandoned"]
    assert len(ledger.frames.turns) == 5


def test_the_last_set_messages_replaces_the_replayed_list() -> None:
    ledger = _load("set-messages.jsonl")
    messages = ledger.frames.messages
    assert messages[messages["branch"] == "active"]["text"].tolist() == [
        "one", "summary of one", "three"]
    assert messages[messages["branch"] == "abandoned"]["text"].tolist() == [
        "one", "did one", "two"]
    assert [(d.kind, d.line) for d in ledger.diagnostics] == [("ignored_by_gemini", 6)]


def test_a_subagent_chat_names_its_parent_by_its_folder(tmp_path: Path) -> None:
    log = _load("chats/gem-basic/sub-1.jsonl").sessions[0]
    assert log.header["parentSession"] == "gem-basic"
    assert log.header["origin"] == "subagent"
    moved = tmp_path / "sub-1.jsonl"  # out of its chats/<parent>/ folder: no parent named
    moved.write_bytes((DATA / "chats" / "gem-basic" / "sub-1.jsonl").read_bytes())
    header = ledgerviz.load(moved).sessions[0].header
    assert ("parentSession" not in header, header["origin"]) == (True, "subagent")


@pytest.mark.parametrize("name", ["basic.jsonl", "rewind.jsonl", "set-messages.jsonl",
                                  "chats/gem-basic/sub-1.jsonl"])
def test_every_line_leaves_an_event(name: str) -> None:
    log = _load(name).sessions[0]
    lines = (DATA / name).read_bytes().count(b"\n")
    assert sorted(set(log.lines)) == list(range(1, lines + 1))
    assert [e["seq"] for e in log.events] == list(range(len(log.events)))


def test_timelines_draw_the_abandoned_suffix_beside_the_active_branch() -> None:
    figure = ledgerviz.timeline(_load("rewind.jsonl"))
    names = {trace.name for trace in figure.data if trace.name}
    assert any("abandoned" in name for name in names)


def test_set_merges_metadata_into_the_header(tmp_path: Path) -> None:
    lines = (DATA / "rewind.jsonl").read_text().splitlines()
    moved = '{"$set":{"sessionId":"gem-resumed","startTime":"2026-01-05T11:00:00.000Z"}}'
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join([*lines, moved]) + "\n")
    log = ledgerviz.load(path).sessions[0]
    # the header's own fields are read as gemini-cli's loader merges them: later wins
    assert (log.key, log.header["createdAt"]) == ("gem-resumed", 1767610800000)
    assert [e["type"] for e in log.events[-2:]] == ["gemini/metadata", "turn/end"]


def test_the_calls_frame_says_why_each_call_has_its_status() -> None:
    calls = _load("basic.jsonl").frames.calls.set_index("call_id")
    assert calls["status_reason"].astype(str).to_dict() == {
        "c-ok": "answered", "c-err": "answered", "c-policy": "denied by policy",
        "c-cancel": "interrupted mid-run", "c-denied": "rejected by user",
        "c-run": "no result in a closed step", "c-wait": "no result in a closed step"}
