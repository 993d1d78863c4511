"""The context pane as a pure function of ``ledger.context(policy)`` on the hostile ledger, whose
second step asks for two calls and dies after dispatching the first."""

from __future__ import annotations

import re

import pytest
from widget_ledgers import HOSTILE, HOSTILE_RAW, events_of

import ledgerviz
from ledgerviz.html import escape
from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.widgets.context_pane import context_html

EVENTS = events_of(HOSTILE)
REQUESTED = {b["id"]: e["seq"] for e in EVENTS if e["type"] == "assistant/message"
             for b in e["data"]["message"]["content"] if b["type"] == "tool-call"}
ANSWERED = {e["data"]["message"]["source"]["callId"]: e["seq"] for e in EVENTS
            if e["type"] == "tool/result"}
UNANSWERED = [call_id for call_id in REQUESTED if call_id not in ANSWERED]
FORK_POINT = min(REQUESTED[call_id] for call_id in UNANSWERED)


def pane(policy: str) -> str:
    return context_html(ledgerviz.load(HOSTILE).context(policy))


def rows(html: str) -> list[str]:
    return re.findall(r"<tr><td[^>]*>([^<]*)</td>", html)


def test_recorded_ledger_is_invalid_for_both_providers_naming_the_seqs() -> None:
    html = pane("recorded")
    assert len(UNANSWERED) == 2
    for provider in ("openai", "anthropic"):
        assert f"{provider} invalid · {len(UNANSWERED)} problems" in html
        for call_id in UNANSWERED:
            assert re.search(rf"<b>{provider}</b> · missing_result · seqs "
                             rf"{REQUESTED[call_id]}: [^<]*{call_id}", html)
    answered = next(iter(ANSWERED))
    assert f"id {answered} → result at seq {ANSWERED[answered]}" in html
    assert f"result for id {answered} answers call at seq {REQUESTED[answered]}" in html
    for call_id in UNANSWERED:
        assert f"id {call_id} <b style='color:#d64545'>→ no result</b>" in html


def test_synthesize_answers_every_call_with_an_error_result_after_the_log() -> None:
    html = pane("synthesize")
    assert "openai valid" in html and "anthropic valid" in html
    assert "invalid" not in html
    closer_seqs = range(EVENTS[-1]["seq"] + 1, EVENTS[-1]["seq"] + 1 + len(UNANSWERED))
    for call_id, seq in zip(UNANSWERED, closer_seqs, strict=True):
        assert f"id {call_id} → result at seq {seq}" in html
        assert (f"result for id {call_id} answers call at seq {REQUESTED[call_id]} · "
                "<b>error</b>") in html


def test_fork_sends_only_the_prefix_before_the_fork_point() -> None:
    html = pane("fork")
    assert "openai valid" in html and "anthropic valid" in html
    prefix = [str(e["seq"]) for e in EVENTS if "surfaceOp" in e and e["seq"] < FORK_POINT]
    assert rows(html) == prefix
    assert f"under fork: {len(prefix)} messages" in html


@pytest.mark.parametrize("policy", POLICIES)
def test_ledger_text_reaches_the_pane_only_escaped(policy: str) -> None:
    html = pane(policy).lower()
    for raw in HOSTILE_RAW:
        assert raw not in html
    user_text = next(e for e in EVENTS if e["type"] == "user/message")["data"]["content"][0]
    assert escape(user_text["text"]).lower() in html


def test_a_long_request_shows_only_its_last_messages() -> None:
    from ledgerviz.widgets.context_pane import messages_html

    messages = ledgerviz.load(HOSTILE).context("synthesize").messages
    assert len(messages) > 3
    html = messages_html(messages, limit=3)
    assert rows(html) == [str(m.seq) for m in messages[-3:]]
    hidden = len(messages) - 3
    assert f"{hidden} earlier message{'s' if hidden != 1 else ''} not shown" in html
    assert "not shown" not in messages_html(messages)
