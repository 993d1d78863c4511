"""What the tools returned, in the report and the explorer's details pane: each call's recorded
result text beside its arguments, escaped, cut, and whole on demand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from html_parts import Parts, foreign_markup

import ledgerviz
from ledgerviz.report import render_report
from ledgerviz.widgets.details import event_details_html

HOSTILE = Path(__file__).resolve().parents[1] / "browser" / "data" / "hostile.v4.jsonl"


def events() -> list[dict]:
    return [json.loads(line) for line in HOSTILE.read_text(encoding="utf-8").splitlines()[1:]]


def result_text_of_call_1() -> str:
    result = next(e for e in events() if e["type"] == "tool/result")
    assert result["data"]["message"]["toolCallId"] == "call-1"
    return "".join(block["text"] for block in result["data"]["message"]["content"])


def section(document: str) -> str:
    start = document.index(">What the tools returned</h3>")
    return document[start:document.index("<h3", start + 5)]


def test_report_shows_each_calls_result_beside_its_arguments() -> None:
    part = section(render_report(ledgerviz.load(HOSTILE), packed=False))
    rows = {row[1]: row for row in Parts(part).rows if len(row) == 6 and row[1] != "call id"}
    assert rows["call-1"][5] == result_text_of_call_1()
    assert rows["call-1"][4] == json.loads(json.dumps(events()[4]["data"]["arguments"]))
    # call-2 was dispatched and call-3 never was: the file holds no result for either
    assert rows["call-2"][5] == rows["call-3"][5] == "no result recorded"
    assert foreign_markup(part) == []


def test_a_long_result_is_cut_and_whole_on_demand(tmp_path: Path) -> None:
    lines = HOSTILE.read_text(encoding="utf-8").splitlines()
    long_text = "<b>" + "r" * 5_000
    result = json.loads(lines[6])
    result["data"]["message"]["content"] = [{"type": "text", "text": long_text}]
    lines[6] = json.dumps(result)
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    part = section(render_report(ledgerviz.load(path), packed=False))
    texts = Parts(part).text
    assert long_text[:299] + "…" in texts  # the preview
    assert long_text in texts  # inside <details>, shown on demand
    assert "show all 5,003 characters" in part and foreign_markup(part) == []


@pytest.mark.parametrize("searched", ["calls", "calls frame"])
def test_details_pane_shows_the_calls_an_event_touches_with_their_results(searched: str) -> None:
    ledger = ledgerviz.load(HOSTILE)
    recovery = ledger.recovery("synthesize")
    analysis = recovery.analyses[ledger.keys[0]]
    frame = recovery.frames.calls if searched == "calls frame" else None
    answered = event_details_html(analysis, analysis.seqs.index(5), frame)  # call-1's result
    assert result_text_of_call_1() in "".join(Parts(answered).text)
    asked = event_details_html(analysis, analysis.seqs.index(8), frame)  # call-2 and call-3
    text = "".join(Parts(asked).text)
    assert "call-2" in text and "call-3" in text
    # under synthesize call-2 is answered by a synthetic TOOL_OUTCOME_UNKNOWN result
    assert "outcome is unknown" in text.lower()
    assert foreign_markup(asked.split("<pre style=")[0]) == []


def test_result_texts_by_seq_looked_up_or_in_one_pass_are_the_files(tmp_path: Path) -> None:
    from ledgerviz.display.results import LOOKED_UP, result_texts
    from ledgerviz.simulate import write_scenario

    path = tmp_path / "crashed.jsonl"
    write_scenario("crash-mid-dispatch", path, turns=6)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    expected = {e["seq"]: "".join(block["text"] for block in e["data"]["message"]["content"])
                for e in lines if e["type"] == "tool/result"}
    assert len(expected) > LOOKED_UP
    (analysis,) = ledgerviz.load(path).recovery("recorded").analyses.values()
    few = sorted(expected)[-LOOKED_UP:]  # the last results: looked up one by one
    assert result_texts(analysis, few) == {seq: expected[seq] for seq in few}
    assert result_texts(analysis, sorted(expected)) == expected  # in one pass
    assert result_texts(analysis, [None, -5]) == {}
