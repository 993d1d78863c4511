"""Text built to mislead the reader (issue 38): Unicode bidirectional controls in ids
and names are *shown*, as visible escapes, in the report, the notebook HTML and the
terminal; a 20,000-character token wraps instead of widening the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_packs import unpacked

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.cli.text import terminal_safe
from ledgerviz.display.reprs import session_html
from ledgerviz.html import escape, plotly_text
from ledgerviz.report import render_report

CRASH = Path(__file__).parents[1] / "ledgerviz" / "examples" / "crash-mid-dispatch.jsonl"
# RLO makes "abc<RLO>gpj.exe" read "abcexe.jpg"; one of every bidi control after it
SPOOF = "abc\u202egpj.exe"
EVERY_CONTROL = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
SHOWN = ("\\u061c\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068"
         "\\u2069")
BIDI = re.compile(f"[{EVERY_CONTROL}]")
TOKEN = "x" * 20_000


def hostile_ledger(tmp_path: Path) -> Path:
    """Return the crash example with a spoofing session id, every bidi control in the
    tool name and a 20,000-character token in the user's text."""
    lines = CRASH.read_text().splitlines()
    header = json.loads(lines[0])
    header["id"] = SPOOF
    events = [json.loads(line) for line in lines[1:]]
    for event in events:
        message = event.get("data", {}).get("message", event.get("data", {}))
        for block in message.get("content", []) if isinstance(message, dict) else []:
            if block.get("type") == "tool-call":
                block["name"] = "ls" + EVERY_CONTROL
            if block.get("type") == "text" and event["type"] == "user/message":
                block["text"] = TOKEN
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [header, *events]) + "\n")
    return path


@pytest.mark.parametrize("show", [escape, plotly_text, terminal_safe])
def test_every_bidi_control_is_shown_as_its_escape(show: object) -> None:
    assert show(f"a{EVERY_CONTROL}b") == f"a{SHOWN}b"  # type: ignore[operator]
    assert show(SPOOF) == "abc\\u202egpj.exe"  # type: ignore[operator]


def test_the_report_shows_bidi_controls_escaped_and_holds_none(tmp_path: Path) -> None:
    page = unpacked(render_report(ledgerviz.load(hostile_ledger(tmp_path))))
    assert BIDI.search(page) is None
    # nor JSON-escaped in a script, to be decoded (a visible escape is "\\\\u..." in JSON)
    scripts = "".join(re.findall(r"<script[^>]*>(.*?)</script>", page, re.S))
    assert re.search(r"(?<!\\)\\u(061c|200[ef]|202[a-e]|206[6-9])", scripts) is None
    assert '<h2 title="abc\\u202egpj.exe">Session abc\\u202egpj.exe</h2>' in page
    assert "ls" + SHOWN in page  # the tool's name, in the calls table


def test_the_notebook_html_shows_them_escaped(tmp_path: Path) -> None:
    html = session_html(ledgerviz.load(hostile_ledger(tmp_path)).sessions[0])
    assert BIDI.search(html) is None
    assert "abc\\u202egpj.exe" in html


def test_the_terminal_shows_them_escaped(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", str(hostile_ledger(tmp_path))])
    out = capsys.readouterr().out
    assert BIDI.search(out) is None
    assert out.startswith("abc\\u202egpj.exe  (")


def test_long_tokens_wrap_anywhere_in_the_report(tmp_path: Path) -> None:
    page = unpacked(render_report(ledgerviz.load(hostile_ledger(tmp_path))))
    styles = "".join(re.findall(r"<style>(.*?)</style>", page, re.S))
    body = re.search(r"(?m)^body \{([^}]*)\}", styles)
    assert body is not None and "overflow-wrap: anywhere" in body.group(1)
    nowrap = re.findall(r"([^{}]+)\{[^}]*white-space: nowrap", styles)
    # only the page's own words keep to one line: headers, status badges and diagnostic
    # kinds (ledgerviz's names, never a ledger's text)
    assert sorted(s.strip() for s in nowrap) == [".lv th", ".lv-badge", "code.kind",
                                                 "table.sortable th"]


def test_the_explorer_labels_the_session_escaped(tmp_path: Path) -> None:
    from ledgerviz.widgets.explorer import Explorer

    explorer = Explorer(ledgerviz.load(hostile_ledger(tmp_path)))
    assert explorer.session.options == (("abc\\u202egpj.exe", SPOOF),)
    assert explorer.session.label == "abc\\u202egpj.exe"
