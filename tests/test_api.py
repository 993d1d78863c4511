"""The Ledger facade: loading, session views, cuts, recovery views."""

from __future__ import annotations

import gc
import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from gc_watch import collections_started

import ledgerviz
from ledgerviz.ledger import LedgerError
from ledgerviz.ledger.fields import EventFields
from ledgerviz.ledger.reread import LedgerChangedError
from ledgerviz.ledger.table import EventTable
from ledgerviz.recovery import analyze
from ledgerviz.simulate import write_scenario

DSH = Path(__file__).parent / "data" / "dsh"
SHOWCASE = next(DSH.glob("*preview-showcase*"))
SETTLEMENT = next(DSH.glob("*subagent-settlement*"))
EXAMPLES = Path(ledgerviz.__file__).parent / "examples"


def test_load_exposes_sessions_keys_and_diagnostics() -> None:
    ledger = ledgerviz.load(DSH)
    assert len(ledger) == 10
    assert ledger.keys == [log.key for log in ledger.sessions]
    # the normalised child's parentSession, {{sessionId}}, is the id of four other snapshots
    [ambiguous] = ledger.diagnostics
    assert (Path(ambiguous.path).name, ambiguous.kind) == (
        "apps__cli__tests__profiles__headless__tests__expected__subagent-inheritance__child"
        ".expected.jsonl", "ambiguous_parent")
    assert ambiguous.message.startswith(
        "parentSession '{{sessionId}}' is the id of 4 loaded sessions ('{{sessionId}}', ")
    assert sum(len(log.events) for log in ledger.sessions) == 538


def test_diagnostics_are_collected_from_every_session(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(SETTLEMENT.read_bytes() + b'{"type":"tu')
    ledger = ledgerviz.load([SHOWCASE, broken])
    assert [(d.path, d.line, d.kind) for d in ledger.diagnostics] == [(str(broken), 9, "torn_tail")]


def test_strict_load_raises(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(SETTLEMENT.read_bytes() + b"{}\n{}\n")
    with pytest.raises(LedgerError, match=rf"{broken.name}:9: error \[invalid_event\]"):
        ledgerviz.load(broken, strict=True)
    assert isinstance(LedgerError("x"), ValueError)


def test_frames_are_the_recorded_view() -> None:
    ledger = ledgerviz.load(SHOWCASE)
    assert ledger.frames is ledger.recovery("recorded").frames
    assert ledger.recovery("fork") is ledger.recovery("fork")
    view = ledger.recovery("synthesize")
    assert view.policy == "synthesize"
    assert list(view.analyses) == ["preview-showcase"]
    assert len(view.analyses["preview-showcase"].events) == 199


def test_unknown_policy() -> None:
    with pytest.raises(ValueError, match="unknown policy 'retry'"):
        ledgerviz.load(SHOWCASE).recovery("retry")  # type: ignore[arg-type]


def test_session_by_key_and_index() -> None:
    ledger = ledgerviz.load(DSH)
    one = ledger.session("preview-showcase")
    assert one.keys == ["preview-showcase"]
    assert len(one.frames.events) == 199
    assert ledger.session(-1).keys == [ledger.keys[-1]]
    with pytest.raises(KeyError, match="no session 'nope'"):
        ledger.session("nope")


def test_a_key_held_twice_names_its_first_session_and_the_other_gets_its_own() -> None:
    # load makes keys unique; a Ledger built from sessions directly may repeat one
    first, second = ledgerviz.load(DSH).sessions[:2]
    twin = replace(second, key=first.key)
    ledger = ledgerviz.Ledger([first, twin])
    assert ledger.session(first.key).sessions == [first]
    [renamed] = ledger.session(1).sessions
    assert renamed.key == Path(second.path).name  # the fallback a load uses
    assert renamed.events is twin.events
    assert [(d.kind, d.message) for d in renamed.diagnostics[len(twin.diagnostics):]] == [
        ("duplicate_session_key", f"session key {first.key!r} is also the key of "
         f"{first.path}: this session is {renamed.key!r} here")]


def _cut_after_others(ledger: ledgerviz.Ledger, n: int, reuse: bool) -> ledgerviz.Ledger:
    """Return ``ledger.cut(n)``; with ``reuse``, after other cuts were analysed and projected
    first (so the cut resumes from shared checkpoints and export memos)."""
    if reuse:
        total = len(ledger.sessions[0].events)
        for other in (n // 3, total, n // 2, n + 1):
            view = ledger.cut(other, reuse=True)
            for policy in ("recorded", "synthesize", "fork"):
                view.context(policy)
    return ledger.cut(n, reuse=reuse)


@pytest.mark.parametrize("reuse", [False, True])
def test_cut_keeps_a_prefix_as_if_the_process_died(reuse: bool) -> None:
    ledger = ledgerviz.load(SHOWCASE)
    cut = _cut_after_others(ledger, 174, reuse)
    (log,) = cut.sessions
    assert len(log.events) == 174
    assert log.events[-1]["type"] == "tool/call"
    assert log.events[0] is ledger.sessions[0].events[0]
    assert list(log.lines) == list(range(2, 176))
    assert log.event_fields() == EventFields.of(log.events)
    of_dicts = EventTable.of(log.events, log.lines)  # the cut's table is its prefix's
    assert replace(log.event_table(), start=of_dicts.start, stop=of_dicts.stop) == (
        of_dicts)
    synthesized = cut.recovery("synthesize").analyses["preview-showcase"]
    assert [e["type"] for e in synthesized.closers] == ["tool/result"] * 10 + [
        "step/end",
        "turn/end",
    ]
    calls = cut.frames.calls
    assert calls["status"].value_counts().to_dict() == {
        "not_started": 9,
        "outcome_unknown": 1,
        "ok": 0,
        "error": 0,
    }
    assert len(ledger.sessions[0].events) == 199


def test_cut_drops_diagnostics_after_the_cut(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    lines = SHOWCASE.read_bytes().splitlines(keepends=True)
    broken.write_bytes(b"".join([*lines[:4], b"{bad\n", *lines[4:]]))
    ledger = ledgerviz.load(broken)
    assert [(d.line, d.kind) for d in ledger.diagnostics] == [(5, "invalid_json")]
    assert ledger.cut(3).diagnostics == []
    assert ledger.cut(3).sessions[0].lines_skipped == 0
    assert [(d.line, d.kind) for d in ledger.cut(4).diagnostics] == [(5, "invalid_json")]
    assert ledger.cut(4).sessions[0].lines_skipped == 1


def test_cut_needs_a_session_when_there_are_several() -> None:
    ledger = ledgerviz.load(DSH)
    with pytest.raises(ValueError, match="name the session"):
        ledger.cut(3)
    assert len(ledger.cut(3, session="preview-showcase").sessions[0].events) == 3
    with pytest.raises(ValueError, match="n must be >= 0"):
        ledger.cut(-1, session=0)


def test_loading_and_analysing_never_modifies_files() -> None:
    paths = sorted(DSH.glob("*.jsonl"))
    before = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    ledger = ledgerviz.load(DSH)
    for policy in ("recorded", "synthesize", "fork"):
        ledger.recovery(policy).frames.all()
    assert before == [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]


def test_events_are_not_mutated_by_analysis() -> None:
    import copy

    ledger = ledgerviz.load(DSH)
    snapshot = copy.deepcopy([log.events for log in ledger.sessions])
    for policy in ("recorded", "synthesize", "fork"):
        ledger.recovery(policy).frames.all()
    assert snapshot == [log.events for log in ledger.sessions]


@pytest.mark.parametrize("reuse", [False, True])
def test_context_of_a_crashed_prefix_under_each_policy(reuse: bool) -> None:
    crashed = _cut_after_others(ledgerviz.load(SHOWCASE), 174, reuse)
    recorded = crashed.context("recorded", provider="openai")
    assert recorded.valid == {"openai": False, "anthropic": False}
    assert [p.call_id for p in recorded.problems["openai"]][:2] == ["preview-read", "preview-write"]
    assert len(recorded.problems["openai"]) == 10
    synthesized = crashed.context("synthesize", provider="anthropic")
    assert synthesized.valid == {"openai": True, "anthropic": True}
    assert len(synthesized.messages) == len(recorded.messages) + 10
    forked = crashed.context("fork")
    assert forked.valid == {"openai": True, "anthropic": True}
    assert forked.payload is None
    assert [m.seq for m in forked.messages][-1] == 170
    assert recorded.payload is not None and recorded.payload["messages"][-1]["role"] == "assistant"


@pytest.mark.parametrize("reuse", [False, True])
def test_with_fork_adds_the_child_fork_seeds(reuse: bool) -> None:
    crashed = _cut_after_others(ledgerviz.load(EXAMPLES / "crash-mid-dispatch.jsonl"), 21, reuse)
    story = crashed.with_fork()
    assert story is not None
    parent, child = story.sessions
    assert parent is crashed.sessions[0]
    assert child.header["parentSession"] == parent.header["id"]
    assert child.events[:18] == parent.events[:18]
    assert [e["type"] for e in child.events[18:]] == ["session/end-seed", "step/end",
                                                      "turn/end"]
    assert child.events[18]["seq"] == 18 and child.events[-1]["seq"] == 20
    assert child.events[-1]["data"]["reason"] == {"kind": "forked"}
    analyses = story.recovery("fork").analyses
    assert analyses[parent.key] is crashed.recovery("fork").analyses[parent.key]
    assert analyses[parent.key].fork_points == [18]
    assert analyses[child.key].closers == [] and analyses[child.key].fork_points == []
    assert analyses[child.key] == analyze(child.events, policy="fork", version=child.version)
    assert ledgerviz.load(EXAMPLES / "clean.jsonl").with_fork() is None


def test_context_arguments_are_checked() -> None:
    ledger = ledgerviz.load(DSH)
    with pytest.raises(ValueError, match="name the session to project"):
        ledger.context("fork")
    with pytest.raises(ValueError, match="unknown provider"):
        ledger.context("fork", provider="gemini", session=0)  # type: ignore[arg-type]


def test_context_reads_only_its_own_session(tmp_path: Path) -> None:
    # a file rewritten after the load stops its own session's context, not another's
    for name in ("crash-mid-dispatch.jsonl", "tool-error.jsonl"):
        (tmp_path / name).write_bytes((EXAMPLES / name).read_bytes())
    ledger = ledgerviz.load(tmp_path)
    crashed, failed = (log.key for log in ledger.sessions)
    assert Path(ledger.sessions[0].path).name == "crash-mid-dispatch.jsonl"
    (tmp_path / "crash-mid-dispatch.jsonl").write_bytes((EXAMPLES / "clean.jsonl").read_bytes())
    context = ledger.context("synthesize", session=failed)
    assert context.valid == {"openai": True, "anthropic": True}
    assert all(message.seq is not None for message in context.messages)  # none computed
    with pytest.raises(LedgerChangedError, match=r"crash-mid-dispatch\.jsonl"):
        ledger.context("synthesize", session=crashed)
    with pytest.raises(ValueError, match="unknown policy"):
        ledger.context("rewind", session=failed)  # type: ignore[arg-type]


@pytest.mark.parametrize("reuse", [False, True])
def test_context_runs_no_garbage_collection(tmp_path: Path, reuse: bool) -> None:
    # a projection makes several objects per message; with the collector on, each young
    # collection would also walk the ledger's events (3x the time at 100k events)
    (path,) = write_scenario("large", tmp_path / "large.jsonl", turns=150)
    ledger = ledgerviz.load(path)
    ledger = ledger.cut(len(ledger.sessions[0].events), reuse=True) if reuse else ledger
    assert ledger.recovery("synthesize").analyses  # analysing pauses the collector itself
    with collections_started() as collections:
        context = ledger.context("synthesize", provider="anthropic")
        assert gc.isenabled()
    assert len(context.messages) > 700 and collections == []


@pytest.mark.parametrize("policy", ["recorded", "synthesize", "fork"])
@pytest.mark.parametrize("tables", [False, True], ids=["dicts", "tables"])
def test_recovery_views_equal_the_engine_run_on_plain_dicts(policy: str, tables: bool) -> None:
    # tables: every session's table made first (as a reader that fills it does), so the
    # views' engine reads the tables
    ledger = ledgerviz.load(DSH)
    cuts = [
        ledger.cut(len(log.events) * part // 3, log.key)
        for log in ledger.sessions
        for part in (0, 1, 2)
    ]
    for one in [ledger, *cuts]:
        if tables:
            assert all(log.event_table() is log.table for log in one.sessions)
        view = one.recovery(policy)
        for log in one.sessions:
            plain = analyze(log.events, policy=policy, version=log.version)
            assert view.analyses[log.key] == plain, log.key


def test_write_report_is_a_top_level_entry_point(tmp_path: Path) -> None:
    page = ledgerviz.write_report(ledgerviz.load(EXAMPLES / "clean.jsonl"),
                                  tmp_path / "r.html")  # the README's notebook line
    assert "1 session · timelines drawn" in page.read_text(encoding="utf-8")
