"""The HTML report and the ``ledgerviz report`` command on real ledgers, hostile one included."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from report_packs import BLOCK, PLACEHOLDER, blocks, unpacked
from unanswered import write_unanswered

import ledgerviz
from ledgerviz import examples
from ledgerviz.cli import main
from ledgerviz.examples import example_paths
from ledgerviz.html import escape
from ledgerviz.report import render_report, write_report
from ledgerviz.report.anchors import session_anchor
from ledgerviz.simulate import write_scenario

TESTS = Path(__file__).resolve().parent
DSH = sorted((TESTS / "data" / "dsh").glob("*.jsonl"))
HOSTILE = TESTS / "browser" / "data" / "hostile.v4.jsonl"
SEMANTIC = next(p for p in DSH if "semantic-checkpoint" in p.name)
SCRIPT = "<script>window.__pwned=1;alert(1)</script>"
IMG = '<img src=x onerror="window.__pwned=1;alert(1)">'


class Page(HTMLParser):
    """Collects the tags, the visible text and the script bodies of a document."""

    def __init__(self, document: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self._in: list[str] = []
        self.feed(document)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if self._in and self._in[-1] == "script":
            self.scripts.append(data)
        elif not self._in or self._in[-1] != "style":
            self.text.append(data)

    def count(self, tag: str, **attrs: str) -> int:
        return sum(1 for t, a in self.tags if t == tag
                   and all(a.get(k) == v for k, v in attrs.items()))


@pytest.fixture(scope="module")
def packed_document() -> str:
    return render_report(ledgerviz.load([SEMANTIC, HOSTILE]), policy="fork")


@pytest.fixture(scope="module")
def hostile_page(packed_document: str) -> tuple[ledgerviz.Ledger, str, Page]:
    """The report with its packed session bodies put back in their sections."""
    ledger = ledgerviz.load([SEMANTIC, HOSTILE])
    document = unpacked(packed_document)
    return ledger, document, Page(document)


def test_one_section_and_one_timeline_per_session(hostile_page) -> None:
    ledger, document, page = hostile_page
    assert len(ledger.keys) == 2
    assert page.count("section", **{"class": "session"}) == 2
    assert page.count("div", **{"class": "lv-plot"}) == 2
    figures = [json.loads(spec) for spec in re.findall(
        r'<script type="application/json" id="figure-\d+">(.*?)</script>', document)]
    assert len(figures) == 2
    for figure in figures:  # the section names the session; the figure title the policy
        assert len(figure["data"]) >= 3
        assert figure["layout"]["title"]["text"].startswith("policy: fork<br>")
        assert "template" not in figure["layout"]  # the page holds the template once
        axes = [v for k, v in figure["layout"].items() if k.startswith(("xaxis", "yaxis"))]
        assert len(axes) >= 2 and all(a["ticklabeloverflow"] == "allow" for a in axes)
    assert document.count('id="lv-template"') == 1


def test_same_input_gives_the_same_bytes() -> None:
    first = render_report(ledgerviz.load([SEMANTIC, HOSTILE]), policy="fork")
    second = render_report(ledgerviz.load([SEMANTIC, HOSTILE]), policy="fork")
    assert first == second
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-", first)  # no uuid div ids


def test_overview_has_one_row_per_session_with_its_counts(hostile_page) -> None:
    _, document, _ = hostile_page
    overview = document[document.index('<section class="overview">'):
                        document.index('<section class="session"')]
    rows = [re.findall(r'<td data-sort="([^"]*)">', row)
            for row in re.split(r"<tr[ >]", overview)[2:]]
    assert len(rows) == 2
    # the hostile ledger, worked out from its file: 11 recorded events, 1 turn, 3 calls of which
    # read_file ok, call-2 dispatched without result, call-3 never dispatched; one fork point
    # (seq 8); under fork both providers accept the next request
    assert rows[1] == ["11", "1", "3", "1", "0", "1", "1", "1", "0"]


def test_fork_sentence_counts_in_the_singular_and_the_plural(hostile_page) -> None:
    # worked out from the files: the hostile ledger forks at seq 8, the assistant message
    # asking for fetch and write (the events after it are log-only), so 1 event and those 2
    # calls leave the context; the crash-mid-dispatch example forks at seq 18, whose message
    # asks for read, grep, read, web_fetch: it and the read's result at seq 21 leave it
    _, document, _ = hostile_page
    assert ("Under the fork policy 1 event and 2 tool calls (fetch, write&lt;img src=x "
            "onerror=&quot;window.__pwned=1;alert(1)&quot;&gt;) are abandoned") in document
    crashed = next(p for p in example_paths() if p.name == "crash-mid-dispatch.jsonl")
    plain = render_report(ledgerviz.load(crashed), policy="fork", packed=False)
    assert ("Under the fork policy 2 events and 4 tool calls (read, grep, web_fetch) are "
            "abandoned") in plain


def test_plotly_is_inlined_once_and_nothing_is_fetched(packed_document: str,
                                                       hostile_page) -> None:
    page = Page(packed_document)
    assert sum("* plotly.js " in s for s in page.scripts) == 0  # packed, not plain
    found = blocks(packed_document)
    assert [name for name, data in found.items() if b"* plotly.js " in data] == ["lv-plotly"]
    assert all(a.get("src") is None for t, a in page.tags if t == "script")
    assert page.count("link") == 0 and hostile_page[2].count("link") == 0


def test_packed_bodies_are_the_plain_reports_bodies(packed_document: str) -> None:
    plain = render_report(ledgerviz.load([SEMANTIC, HOSTILE]), policy="fork", packed=False)
    def main(document: str) -> str:
        return document[document.index("<main>"):document.index("</main>")]

    assert main(unpacked(packed_document)) == main(plain)
    assert len(PLACEHOLDER.findall(packed_document)) == 2
    assert PLACEHOLDER.findall(plain) == [] and BLOCK.findall(plain)[0][0] == "lv-plotly"
    assert len(packed_document) < len(plain)


def test_without_javascript_the_page_says_what_is_missing(packed_document: str) -> None:
    notes = re.findall(r"<noscript>(.*?)</noscript>", packed_document)
    assert len(notes) == 1 + 2  # the page's note, then one per session body
    assert "only the overview and each session's heading show" in notes[0]
    assert "ledgerviz report --no-pack" in notes[0]
    assert all("summary, timeline and tables need JavaScript" in n for n in notes[1:])
    page = Page(packed_document)
    text = "".join(page.text)
    assert text.count("Session ") == 2 and "Unanswered tool calls" not in text
    assert page.count("tr") == 3  # the overview's header and its two rows


def test_a_plain_report_reads_without_javascript() -> None:
    plain = render_report(ledgerviz.load([SEMANTIC, HOSTILE]), policy="fork", packed=False)
    text = "".join(Page(plain).text)
    assert "Unanswered tool calls" in text and "recorded events" in text
    assert "only the overview" not in plain
    assert plain.count("The timeline needs JavaScript.</p></noscript>") == 2


def test_no_json_script_holds_a_less_than_sign(hostile_page) -> None:
    # so no ledger text can close the script ("</script") or open a comment ("<!--") in it
    document = hostile_page[1]
    specs = re.findall(r'<script type="application/json" id="[^"]+">(.*?)</script>', document,
                       re.S)
    assert len(specs) == 3  # the template and the two timelines
    assert all("<" not in spec for spec in specs)
    assert any("\\u003c" in spec for spec in specs)  # the hostile labels, escaped


def test_hostile_ledger_renders_as_text(hostile_page) -> None:
    page = hostile_page[2]
    assert page.count("img") == 0
    assert page.count("a") == 2  # the two navigation links
    hrefs = [a.get("href") for t, a in page.tags if t == "a"]
    assert hrefs == [f"#{session_anchor(key)}" for key in hostile_page[0].keys]
    text = "".join(page.text)
    assert SCRIPT in text  # tool arguments shown literally in the unanswered-calls table
    assert f"Session hostile{IMG}" in text
    for script in page.scripts:
        assert "<script" not in script.lower() and "<img" not in script.lower()


def test_sections_hold_unanswered_calls_fork_points_providers_diagnostics(hostile_page) -> None:
    ledger, document, _ = hostile_page
    hostile = document[document.index(f'id="{session_anchor(ledger.keys[1])}"'):]
    text = "".join(Page(hostile).text)
    calls = ledger.session(1).frames.calls
    unanswered = calls[calls["status"].isin(["outcome_unknown", "not_started"])]
    assert sorted(unanswered["call_id"]) == ["call-2", "call-3"]
    for call_id in unanswered["call_id"]:
        assert call_id in text
    assert "outcome unknown" in text and "not started" in text
    assert "javascript:window.__pwned=1;alert(document.cookie)" in text  # call-2's arguments
    assert "fork point seq" in text and ">8<" in hostile.replace("<b>", "").replace("</b>", "")
    assert "Provider validity" in text
    # as recorded, call-2 and call-3 have no result: both providers refuse the request;
    # synthesize answers them and fork abandons them, so both are valid
    for policy, valid in (("recorded", False), ("synthesize", True), ("fork", True)):
        context = ledger.session(1).context(policy)
        assert context.valid == {"openai": valid, "anthropic": valid}
        for problems in context.problems.values():
            assert sorted(p.call_id for p in problems) == ([] if valid else ["call-2", "call-3"])
            for problem in problems:
                assert problem.detail in text
    assert hostile.count("invalid · 2 problems") == 2
    assert hostile.count('<span class="lv-badge valid">') == 4
    diagnostics = ledger.session(1).diagnostics
    assert diagnostics, "the unknown event type must be diagnosed"
    for diagnostic in diagnostics:
        assert diagnostic.line == 12  # header + 10 events before the unknown one
        assert diagnostic.message in text


def test_summary_counts_come_from_the_frames(hostile_page) -> None:
    ledger, document, _ = hostile_page
    hostile = document[document.index(f'id="{session_anchor(ledger.keys[1])}"'):]
    frames = ledger.session(1).recovery("fork").frames
    recorded = int(frames.events["recorded"].astype(bool).sum())
    assert recorded == 11
    assert f"<b>{recorded}</b><span>recorded events</span>" in hostile
    assert f"<b>{len(frames.calls)}</b><span>tool calls</span>" in hostile
    assert "<b>1</b><span>outcome unknown</span>" in hostile
    assert "<b>1</b><span>not started</span>" in hostile


def test_write_report_writes_the_document(tmp_path: Path) -> None:
    target = write_report(ledgerviz.load(SEMANTIC), tmp_path / "r.html", policy="synthesize")
    document = target.read_text(encoding="utf-8")
    assert document.startswith("<!DOCTYPE html>")
    assert "policy: synthesize" in unpacked(document)  # the timeline's title


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="policy must be one of"):
        render_report(ledgerviz.load(SEMANTIC), policy="retry")


def test_cli_writes_report_and_says_where(tmp_path: Path, capsys) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(SEMANTIC), str(HOSTILE), "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert Page(out.read_text(encoding="utf-8")).count("section", **{"class": "session"}) == 2


def test_cli_examples_reports_every_bundled_example(tmp_path: Path, capsys) -> None:
    out = tmp_path / "examples.html"
    assert main(["report", "--examples", "-o", str(out)]) == 0
    catalog = json.loads((Path(examples.__file__).parent / "catalog.json").read_text())
    expected = sum(len(example["files"]) for example in catalog["examples"])
    assert expected == 14  # one session a file: ten examples of one file, two of two
    assert f"({expected} sessions" in capsys.readouterr().out
    page = Page(out.read_text(encoding="utf-8"))
    assert page.count("section", **{"class": "session"}) == expected


def test_cli_without_sources_fails_clearly(capsys) -> None:
    assert main(["report"]) == 2
    assert "give at least one PATH or --examples" in capsys.readouterr().err


def test_cli_no_pack_writes_plain_section_bodies(tmp_path: Path) -> None:
    packed, plain = tmp_path / "packed.html", tmp_path / "plain.html"
    assert main(["report", str(HOSTILE), "-o", str(packed)]) == 0
    assert main(["report", str(HOSTILE), "--no-pack", "-o", str(plain)]) == 0
    packed_text, plain_text = (p.read_text(encoding="utf-8") for p in (packed, plain))
    assert ">Unanswered tool calls</h3>" in plain_text
    assert ">Unanswered tool calls</h3>" not in packed_text
    assert len(PLACEHOLDER.findall(packed_text)) == 1 and PLACEHOLDER.findall(plain_text) == []


def test_long_lists_show_their_first_items_and_count_the_rest(monkeypatch) -> None:
    # the crash-before-dispatch example: four calls never started, so the recorded request
    # has four pairing problems per provider
    from ledgerviz.report import page as report

    monkeypatch.setattr(report, "ROW_LIMIT", 3)
    monkeypatch.setattr(report, "PROBLEM_LIMIT", 2)
    (path,) = [p for p in example_paths() if p.name == "crash-before-dispatch.jsonl"]
    document = render_report(ledgerviz.load(path), packed=False)
    unanswered = document[document.index(">Unanswered tool calls</h3>"):
                          document.index(">What the tools returned</h3>")]
    assert unanswered.count('<span class="lv-badge not_started"') == 3
    assert "… 1 more unanswered call not shown" in unanswered
    providers = document[document.index(">Provider validity"):document.index(">Diagnostics</h3>")]
    assert providers.count("<code>missing_result</code>") == 2 * 2  # recorded × two providers
    assert providers.count("… 2 more problems not shown") == 2


def test_fork_points_past_the_row_limit_are_counted(tmp_path: Path, monkeypatch) -> None:
    from ledgerviz.report import page as report

    monkeypatch.setattr(report, "ROW_LIMIT", 3)
    path = tmp_path / "no-results.jsonl"
    write_unanswered(path, turns=20, seed=2)
    ledger = ledgerviz.load(path)
    points = ledger.recovery("fork").analyses[ledger.keys[0]].fork_points
    assert len(points) > 3  # turns whose dispatched calls went unanswered
    document = render_report(ledger, packed=False)
    section = document[document.index(">Fork points</h3>"):
                       document.index(">Provider validity")]
    assert [int(seq) for seq in re.findall(r"<td><b>(\d+)</b></td>", section)] == points[:3]
    assert section.count("<td>assistant/message</td>") == 3
    assert f"… {len(points) - 3} more fork points not shown" in section


def test_sections_and_their_parts_are_anchored_by_session_id(hostile_page) -> None:
    ledger, document, _ = hostile_page
    key = ledger.keys[1]
    for part in ("timeline", "unanswered", "results", "fork-points", "providers",
                 "diagnostics"):
        assert document.count(f'id="{session_anchor(key)}--{part}"') == 1
    assert session_anchor("a/b c") == "session-a%2Fb%20c"


def test_overview_rows_carry_what_the_filter_reads(hostile_page) -> None:
    ledger, document, _ = hostile_page
    # the hostile session (see above): one call of unknown outcome, one never started, a
    # fork point, both providers valid under fork, a diagnostic (its unknown event type)
    assert ('<tr data-flags="outcome_unknown not_started fork diagnostics" data-text="'
            + escape(f"{ledger.keys[1]} {ledger.sessions[1].path}".lower())) in document
    assert '<select name="flag">' in document and '<form class="find" hidden>' in document


def test_calls_tables_list_the_rows_around_the_incident(tmp_path: Path, monkeypatch) -> None:
    from ledgerviz.report import page as report

    assert report.rows_around(1000, 500, 200) == range(450, 650)
    assert report.rows_around(1000, 990, 200) == range(800, 1000)
    assert report.rows_around(1000, None, 200) == range(200)
    assert report.rows_around(50, 40, 200) == range(50)
    monkeypatch.setattr(report, "ROW_LIMIT", 8)
    path = tmp_path / "crashed.jsonl"
    write_scenario("crash-mid-dispatch", path, turns=20)  # the crash is in the last turn
    ledger = ledgerviz.load(path)
    calls = ledger.recovery("recorded").analyses[ledger.keys[0]].calls
    first_open = next(i for i, c in enumerate(calls) if c.status != "ok")
    document = render_report(ledger, packed=False)
    every = document[document.index("every tool call of the session"):]
    listed = re.findall(r"<code>(call-[0-9a-f]+)</code>", every)
    start = first_open - 2  # a quarter of 8 before it, kept inside the list
    start = min(start, len(calls) - 8)
    assert listed == [c.call_id for c in calls[start:start + 8]]
    assert f"… {start} earlier calls not shown" in every
