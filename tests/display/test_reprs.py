"""The notebook displays of Ledger, a session, a RecoveryView, an Analysis, Frames and Context:
their content (facts worked out by hand from the hostile ledger), escaping and size bound."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from html_parts import Parts, foreign_markup
from IPython.core.formatters import HTMLFormatter

import ledgerviz
from ledgerviz.display import notebook, reprs
from ledgerviz.display.fragments import Part, Table, badge, cell, expandable

TESTS = Path(__file__).resolve().parents[1]
HOSTILE = TESTS / "browser" / "data" / "hostile.v4.jsonl"
# hostile.v4.jsonl, read by hand: 11 events, one turn; call-1 answered (seq 5), call-2
# dispatched at seq 9 with no result, call-3 requested at seq 8 and never dispatched, so the
# fork point is the assistant message at seq 8; one info diagnostic (an ignorable x/ type).
KEY = 'hostile<img src=x onerror="window.__pwned=1;alert(1)">'


def ledger() -> ledgerviz.Ledger:
    return ledgerviz.load(HOSTILE)


def row_of(markup: str, first: str) -> list[str]:
    return next(row for row in Parts(markup).rows if row and row[0] == first)


def every_display(loaded: ledgerviz.Ledger) -> dict[str, str]:
    fork = loaded.recovery("fork")
    return {
        "ledger": loaded._repr_html_(),
        "session": reprs.session_html(loaded.sessions[0]),
        "recovery": fork._repr_html_(),
        "analysis": reprs.analysis_html(fork.analyses[loaded.keys[0]]),
        "frames": reprs.frames_html(fork.frames),
        **{f"context {p}": loaded.context(p)._repr_html_()
           for p in ("recorded", "synthesize", "fork")},
    }


def test_ledger_display_states_each_sessions_facts() -> None:
    row = row_of(ledger()._repr_html_(), KEY)
    assert row[1:6] == ["11", "1", "1 ok 1 unknown 1 not started", "seq 8", "1 info"]
    assert row[6] == "openai invalid · 2 problems anthropic invalid · 2 problems"  # recorded
    assert row[7] == row[8] == "openai valid anthropic valid"  # synthesize, fork


def test_session_and_analysis_displays() -> None:
    loaded = ledger()
    session = Parts(reprs.session_html(loaded.sessions[0])).rows
    assert session[1][1:] == [KEY, "4", "11", "1", "0", "1 info"]
    assert session[3][:3] == ["12", "info", "unknown_ignorable_event"]
    analysis = Parts(reprs.analysis_html(loaded.recovery("synthesize").analyses[KEY])).rows
    assert analysis[1][0] == "synthesize" and analysis[1][3] == "none"
    unanswered = {row[0]: row[1:] for row in analysis[3:]}
    # docs/recovery.md: an outcome-unknown call is never settled; a synthesized not-started
    # one is (the tool never ran)
    assert unanswered == {
        "call-2": ["fetch", "outcome_unknown", "no", "active", "8"],
        "call-3": ['write<img src=x onerror="window.__pwned=1;alert(1)">', "not_started", "yes",
                   "active", "8"]}


def test_context_display_lists_each_problem() -> None:
    recorded = ledger().context("recorded")._repr_html_()
    problems = [row for row in Parts(recorded).rows[1:]]
    assert sorted((r[0], r[1]) for r in problems) == [("anthropic", "missing_result")] * 2 + [
        ("openai", "missing_result")] * 2
    fork = ledger().context("fork")._repr_html_()
    assert "no pairing problems" in fork and "openai valid" in fork


def test_frames_display_names_every_frame_and_its_shape() -> None:
    frames = ledger().recovery("recorded").frames
    rows = {row[0]: row[1] for row in Parts(reprs.frames_html(frames)).rows[1:]}
    assert list(rows) == [".events", ".turns", ".steps", ".calls", ".messages", ".lineage"]
    assert rows[".events"] == "11 rows × 13 columns"  # small ledger: every frame is built
    assert rows[".calls"] == f"3 rows × {len(frames.calls.columns)} columns"
    assert rows[".turns"] == "1 row × 13 columns"


@pytest.mark.parametrize("name", ["ledger", "session", "recovery", "analysis", "frames",
                                  "context recorded", "context synthesize", "context fork"])
def test_no_display_carries_markup_from_the_ledger(name: str) -> None:
    markup = every_display(ledger())[name]
    assert foreign_markup(markup) == []
    assert "<script" not in markup and "<img" not in markup


def test_text_reprs_are_one_short_line() -> None:
    loaded = ledger()
    fork = loaded.recovery("fork")
    for text in (repr(loaded), repr(fork), repr(fork.frames), repr(loaded.sessions[0]),
                 repr(fork.analyses[KEY]), repr(loaded.context("fork"))):
        assert "\n" not in text and len(text) < 300, text
    assert repr(loaded) == "<Ledger: 1 session, 11 events>"


def many_sessions(tmp_path: Path, count: int, key_length: int) -> ledgerviz.Ledger:
    lines = HOSTILE.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    for i in range(count):
        header["id"] = f"{i:03d}" + "<b>x</b>" * (key_length // 8)
        (tmp_path / f"s{i:03d}.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]),
                                                  encoding="utf-8")
    return ledgerviz.load(tmp_path)


def test_displays_are_bounded_whatever_the_ledger(tmp_path: Path) -> None:
    (tmp_path / "short").mkdir()
    (tmp_path / "long").mkdir()
    short = many_sessions(tmp_path / "short", reprs.ROW_LIMIT, 8)._repr_html_()
    large = many_sessions(tmp_path / "long", 40, 20_000)
    markup = large._repr_html_()
    assert len(Parts(markup).rows) == 1 + reprs.ROW_LIMIT
    assert "28 more sessions not shown" in markup
    # 40 sessions with 20,000-character keys draw no more than 12 short-keyed ones, give or
    # take the cut keys (80 characters each, escaped, in the table and its text twin)
    assert len(markup) < len(short) + 2 * reprs.ROW_LIMIT * 80 * 6 + 200
    for display in (large.recovery("fork")._repr_html_(), reprs.frames_html(large.frames)):
        assert len(display) < 25_000


def test_lower_layers_get_their_html_through_ipython() -> None:
    formatter = HTMLFormatter()
    shell = SimpleNamespace(display_formatter=SimpleNamespace(formatters={"text/html": formatter}))
    assert notebook.register_formatters(shell)
    loaded = ledger()
    assert formatter(loaded.sessions[0]) == reprs.session_html(loaded.sessions[0])
    analysis = loaded.recovery("fork").analyses[KEY]
    assert formatter(analysis) == reprs.analysis_html(analysis)
    assert formatter(loaded.frames) == reprs.frames_html(loaded.frames)


def test_table_draws_the_same_cells_as_html_and_text() -> None:
    table = Table(("a", "b"), [(cell("<x>"), (Part("2 ok", "ok"),))], hidden=1, noun="row")
    assert Parts(table.html()).rows == [["a", "b"], ["<x>", "2 ok"]]
    assert table.text().splitlines() == ["a    b", "<x>  2 ok", "… 1 more row not shown"]
    with pytest.raises(ValueError, match="unknown badge kind"):
        badge("<script>")


def test_expandable_shows_the_start_and_the_whole_text_on_demand() -> None:
    text = "<b>" + "y" * 500
    markup = expandable(text, 40)
    assert markup.startswith('<details class="lv-more"><summary>')
    assert Parts(markup).text[0] == text[:39] + "…"
    assert text in "".join(Parts(markup).text) and foreign_markup(markup) == []
    assert expandable("short", 40) == '<pre class="lv-pre">short</pre>'
