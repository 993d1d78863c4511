"""Hostile ledger text is *shown*, escaped, not only kept from acting (issue 38): the
report, the timeline's hovers, the explorer's panes and ``check`` display the very text
the ledger holds, so a reader sees ``<script>`` where the ledger says ``<script>``."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from report_packs import unpacked

import ledgerviz as lv
from ledgerviz.cli import main
from ledgerviz.plot.timeline import ledger_timeline_spec
from ledgerviz.report import render_report
from ledgerviz.widgets.context_pane import context_html
from ledgerviz.widgets.details import event_details_html

TOOL = "<b>rm</b>"
CALL = "<i>A</i>&amp;"
TEXT = "<script>alert(1)</script>"


def hostile_ledger(path: Path) -> Path:
    """Write a v4 ledger whose open step requested one call, named and worded hostilely:
    the call was dispatched, no result (crash repair gives it TOOL_OUTCOME_UNKNOWN)."""
    step = {"turn": 1, "step": 1}
    call = {"type": "tool-call", "id": CALL, "name": TOOL, "arguments": json.dumps({"q": TEXT})}
    events = [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "step/start", "data": step},
        {"type": "user/message", "surfaceOp": "append",
         "data": {"id": "u", "role": "user", "source": {"kind": "user"},
                  "content": [{"type": "text", "text": TEXT}]}},
        {"type": "assistant/message", "surfaceOp": "append",
         "data": {**step, "stream": [], "message": {
             "id": "m", "role": "assistant", "source": {"kind": "model"},
             "content": [{"type": "text", "text": TEXT}, call]}}},
        {"type": "tool/call", "data": {**step, "callId": CALL, "name": TOOL,
                                       "arguments": call["arguments"]}},
    ]
    lines = [{"type": "session", "version": 4, "id": "esc", "createdAt": 0}]
    lines += [{**event, "seq": seq, "time": 1000 + seq} for seq, event in enumerate(events)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


class _Text(HTMLParser):
    """Collects the text a browser shows (entities resolved) and the tags it opens."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def shown(html: str) -> tuple[str, set[str]]:
    """Return the text ``html`` shows and the tags it opens."""
    parser = _Text()
    parser.feed(html)
    return "".join(parser.text), parser.tags


@pytest.fixture
def ledger(tmp_path: Path) -> lv.Ledger:
    return lv.load(hostile_ledger(tmp_path / "esc.jsonl"))


def test_the_report_shows_the_hostile_call_as_text(ledger: lv.Ledger) -> None:
    page = unpacked(render_report(ledger))
    text, tags = shown(page)
    assert CALL in text  # the unanswered call, listed by its id
    assert "&lt;i&gt;A&lt;/i&gt;&amp;amp;" in page  # written escaped…
    assert "i" not in tags  # …so no <i> element is opened by it


def test_the_timeline_hover_shows_the_escaped_tool_name_and_call_id(ledger: lv.Ledger) -> None:
    spec = ledger_timeline_spec(ledger, "synthesize")
    hovers = [str(text) for trace in spec["data"]
              for text in (trace.get("hovertext") if trace.get("hovertext") is not None else [])]
    joined = "\n".join(hovers)
    assert "&lt;b&gt;rm&lt;/b&gt;" in joined and TOOL not in joined
    assert "&lt;i&gt;A&lt;/i&gt;&amp;amp;" in joined and CALL not in joined


def test_the_explorer_panes_show_the_hostile_text(ledger: lv.Ledger) -> None:
    analysis = ledger.recovery("synthesize").analyses["esc"]
    details, tags = shown(event_details_html(analysis, 3))  # the assistant message
    assert TEXT in details and CALL in details and "script" not in tags
    context, tags = shown(context_html(ledger.context("synthesize", provider="anthropic")))
    assert TEXT in context and "script" not in tags


def test_check_prints_the_hostile_call_id_as_it_is(ledger: lv.Ledger,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", ledger.sessions[0].path])
    assert f"{CALL} (TOOL_OUTCOME_UNKNOWN)" in capsys.readouterr().out
