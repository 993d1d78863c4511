"""Counts in the text people read are in the singular for exactly one."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.display import reprs
from ledgerviz.display.fragments import Table, cell
from ledgerviz.ledger.lazy_events import LazyEvents
from ledgerviz.plot.crash_grid import crash_grid
from ledgerviz.plot.diff_timeline import diff_timeline
from ledgerviz.widgets.snapshot import snapshot_html
from ledgerviz.widgets.summary import crash_summary
from ledgerviz.wording import counted

EXAMPLES = Path(ledgerviz.__file__).parent / "examples"


def test_one_session_one_closer_and_one_abandoned_event_are_singular() -> None:
    ledger = ledgerviz.load(EXAMPLES / "clean.jsonl")
    assert repr(ledger.frames).startswith("<Frames: 1 session, ")
    assert repr(ledger.recovery("fork")).startswith("<RecoveryView: policy fork, 1 session, ")
    analysis = ledger.recovery("fork").analyses[ledger.keys[0]]
    one = replace(analysis, closers=analysis.events[:1], fork_points=[7], abandoned_seqs=[7])
    assert crash_summary(one, 3, 4) == ("process died after event 3 of 4 · fork: 1 closer · "
                                        "fork points: seq 7 · 1 abandoned event")


def test_check_and_diff_say_one_event_turn_and_warning_in_the_singular(tmp_path: Path,
                                                                         capsys) -> None:
    """A hand-made ledger of one turn/start holding a 24-digit number: 1 event, 1 turn, one
    big_integer warning (it said "1 events · 1 turns" and "1 warnings")."""
    path = tmp_path / "one.jsonl"
    path.write_text('{"type":"session","version":4,"id":"one","createdAt":1,"cwd":"/w"}\n'
                    '{"type":"turn/start","seq":0,"time":1,'
                    '"data":{"turn":1,"x":123456789012345678901234}}\n', encoding="utf-8")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "  version 4 · 1 event · 1 turn · calls: none"
    assert out[-1] == "checked 1 session, 0 with errors, 0 errors, 1 warning: ok"
    assert main(["diff", str(path), str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [f"a: one ({path}), 1 event",
                                                        f"b: one ({path}), 1 event"]


HEADER = '{"type":"session","version":4,"id":"one","createdAt":1,"cwd":"/w"}\n'
EVENTS = ['{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n',
          *(f'{{"type":"user/message","seq":{seq},"time":2,"surfaceOp":"append","data":'
            '{"turn":1,"message":{"role":"user","content":[{"type":"text","text":"hi"}]}}}\n'
            for seq in (1, 2))]
"""A turn/start, then two user messages: the first ``n`` make a ledger of ``n`` events (the
turn left open) whose next request holds ``n - 1`` messages."""


def ledger_of(tmp_path: Path, count: int) -> ledgerviz.Ledger:
    path = tmp_path / f"events-{count}.jsonl"
    path.write_text(HEADER + "".join(EVENTS[:count]), encoding="utf-8")
    return ledgerviz.load(path)


def test_counted_formats_the_count_and_keeps_one_singular() -> None:
    assert [counted(n, "event", ",") for n in (0, 1, 2, 1500)] == [
        "0 events", "1 event", "2 events", "1,500 events"]
    assert [counted(n, "copy", plural="copies") for n in (0, 1, 2)] == [
        "0 copies", "1 copy", "2 copies"]


@pytest.mark.parametrize(("count", "said"), [(0, "0 events"), (1, "1 event"), (2, "2 events")])
def test_the_reprs_count_events_in_the_singular_for_one(tmp_path: Path, count: int,
                                                        said: str) -> None:
    ledger = ledger_of(tmp_path, count)
    (log,) = ledger.sessions
    assert repr(ledger) == f"<Ledger: 1 session, {said}>"
    assert repr(ledger.frames) == f"<Frames: 1 session, {said}; built: none yet>"
    assert reprs.frames_title(ledger.frames) == f"Frames: 1 session, {said} read"
    assert repr(log) == (f"<SessionLog 'one' from {str(log.path)!r}: version 4, {said}; "
                         "diagnostics: none>")
    whole = crash_summary(ledger.recovery("fork").analyses["one"], count, count)
    assert whole.startswith(f"whole ledger ({said}) · fork: ")


def test_lazy_events_count_in_the_singular_for_one(tmp_path: Path) -> None:
    """One turn/start; then the clean example, whose lines after its header are its events."""
    path = tmp_path / "turn.jsonl"
    path.write_text(HEADER + EVENTS[0], encoding="utf-8")
    clean = EXAMPLES / "clean.jsonl"
    count = len(clean.read_text(encoding="utf-8").splitlines()) - 1
    for source, said in ((path, "1 event"), (clean, f"{count} events")):
        (log,) = ledgerviz.load(source).sessions
        assert isinstance(log.events, LazyEvents)
        assert repr(log.events) == f"<{said} of {str(source)!r}, decoded on demand>"


@pytest.mark.parametrize(("count", "said"), [(1, "0 messages"), (2, "1 message"),
                                             (3, "2 messages")])
def test_the_context_display_counts_messages(tmp_path: Path, count: int, said: str) -> None:
    context = ledger_of(tmp_path, count).context("fork")
    title = f'<div class="lv-title">Next model request · session one · policy fork · {said}</div>'
    assert title in context._repr_html_()


BIG = ('{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"x":123456789012345678901234}}\n',
       '{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"x":123456789012345678901234,'
       '"reason":{"kind":"completed"}}}\n')
"""A turn, each of its two lines holding a 24-digit number: one big_integer warning each."""


@pytest.mark.parametrize(("lines", "said"), [(0, "none"), (1, "1 warning"), (2, "2 warnings")])
def test_a_session_log_counts_its_diagnostics(tmp_path: Path, lines: int, said: str) -> None:
    """It said "2 warning"."""
    path = tmp_path / "big.jsonl"
    path.write_text(HEADER + "".join(BIG[:lines]), encoding="utf-8")
    (log,) = ledgerviz.load(path).sessions
    assert repr(log).endswith(f"diagnostics: {said}>")


@pytest.mark.parametrize(("lines", "said"), [(1, "1 line"), (2, "2 lines"), (3, "3 lines")])
def test_not_a_ledger_counts_every_line_skipped(tmp_path: Path, lines: int, said: str) -> None:
    """Line 1, no header, is a line lost like the rest (it said "0 lines" of a 1-line file)."""
    path = tmp_path / "nope.txt"
    path.write_text("nope\n" * lines, encoding="utf-8")
    (diagnostic,) = ledgerviz.load(path).diagnostics
    assert diagnostic.message == (f"not a ledger: no line is a JSON event (line 1: 'nope'; "
                                  f"{said} skipped)")


def test_the_crash_grid_and_the_diff_hover_say_one_event(tmp_path: Path) -> None:
    ledger = ledger_of(tmp_path, 2)
    rows = crash_grid(ledger).data[0].customdata  # a row per cut, a column per policy
    assert [[text.split("<br>")[0] for text in row] for row in rows] == [
        ["kept 1 event · recorded", "kept 1 event · synthesize", "kept 1 event · fork"],
        ["kept 2 events · recorded", "kept 2 events · synthesize", "kept 2 events · fork"]]
    for count, said in ((1, "1 equal event"), (2, "2 equal events")):
        one = ledger_of(tmp_path, count)
        hovers = [t.hovertext[0] for t in diff_timeline(ledgerviz.diff(one, one)).data[:2]]
        assert hovers == [f"<b>{said}</b><br>a seqs 0–{count - 1}",
                          f"<b>{said}</b><br>b seqs 0–{count - 1}"]


def test_the_explorer_counts_incidents_and_events(tmp_path: Path) -> None:
    """Two events, the turn left open: under synthesize one incident, the synthetic turn/end;
    with the first event selected the label counts them."""
    explorer = ledgerviz.explore(ledger_of(tmp_path, 2), policy="synthesize")
    explorer.select_seq(0)
    assert explorer.incident.value == "1 incident"
    assert "crash after <b>2</b> of 2 events" in snapshot_html(explorer)
    explorer.crash_point.value = 1
    assert "crash after <b>1</b> of 2 events" in snapshot_html(explorer)
    one = ledgerviz.explore(ledger_of(tmp_path, 1), policy="synthesize")
    assert "crash after <b>1</b> of 1 event<" in snapshot_html(one)


@pytest.mark.parametrize(("hidden", "footer"), [
    (0, []), (1, ["… 1 more unanswered call not shown"]),
    (2, ["… 2 more unanswered calls not shown"])])
def test_a_table_counts_the_rows_it_leaves_out(hidden: int, footer: list[str]) -> None:
    table = Table(("call",), [(cell("A"),)], hidden=hidden, noun="unanswered call")
    assert table.text().splitlines() == ["call", "A", *footer]


CODEX_META = ('{"timestamp":"2026-01-05T10:00:00.000Z","type":"session_meta","payload":{"id":"t",'
              '"timestamp":"2026-01-05T10:00:00.000Z","cwd":"/w","originator":"codex_cli_rs",'
              '"cli_version":"0.60.0","source":"cli"}}\n')


def codex_prompt(n: int) -> str:
    """A typed user prompt of a Codex rollout: one prompt on the surface."""
    return ('{"timestamp":"2026-01-05T10:00:01.000Z","type":"response_item","payload":{'
            f'"type":"message","role":"user","content":[{{"type":"input_text","text":"p{n}"}}]}}}}\n')


@pytest.mark.parametrize(("prompts", "turns", "said"), [
    (1, 0, "of 0 turns with 1 prompt on the surface: nothing taken back"),
    (0, 1, "of 1 turn with 0 prompts on the surface: nothing taken back"),
    (0, 2, "of 2 turns with 0 prompts on the surface: nothing taken back"),
    (2, '"2"', "of '2' turns with 2 prompts on the surface: nothing taken back"),
    (1, 2, "of 2 turns, but only 1 prompt is on the surface: all taken back"),
    (2, 3, "of 3 turns, but only 2 prompts are on the surface: all taken back")])
def test_a_codex_rollback_counts_its_turns_and_prompts(tmp_path: Path, prompts: int,
                                                       turns: int | str, said: str) -> None:
    """It said "thread_rolled_back of 1 turns" and "only 1 prompts are"."""
    path = tmp_path / "rollout.jsonl"
    path.write_text(CODEX_META + "".join(codex_prompt(n) for n in range(prompts))
                    + '{"timestamp":"2026-01-05T10:00:09.000Z","type":"event_msg","payload":{'
                    f'"type":"thread_rolled_back","num_turns":{turns}}}}}\n', encoding="utf-8")
    (rollback,) = [d for d in ledgerviz.load(path).diagnostics if d.kind == "bad_rollback"]
    assert rollback.message == f"thread_rolled_back {said}"


def claude_user(uuid: str, parent: str | None = None, sidechain: bool = False) -> str:
    return json.dumps({"parentUuid": parent, "isSidechain": sidechain, "cwd": "/w",
                       "sessionId": "s", "type": "user", "uuid": uuid,
                       "message": {"role": "user", "content": "hi"},
                       "timestamp": "2026-01-05T10:00:01.000Z"}) + "\n"


def claude_reply(uuid: str, parent: str) -> str:
    """An assistant record of message m1: a second one is merged into the first one's step."""
    return json.dumps({"parentUuid": parent, "isSidechain": False, "cwd": "/w",
                       "sessionId": "s", "type": "assistant", "uuid": uuid,
                       "message": {"id": "m1", "type": "message", "role": "assistant",
                                   "model": "x", "content": [{"type": "text", "text": "ok"}]},
                       "timestamp": "2026-01-05T10:00:02.000Z"}) + "\n"


NO_MORE = ("0 assistant records merged into the step of an earlier one (same message.id), "
           "0 replayed copies skipped")
ONE_EACH = ("1 assistant record merged into the step of an earlier one (same message.id), "
            "1 replayed copy skipped, 1 inline sidechain record read as 1 child session")
# u1, a1, a2 (message m1 again: merged), u1 again (a replayed copy), a record of a kind the
# reader does not know (written as a log-only event) and a sidechain record (a child).
CLAUDE_ONES = [claude_user("u1"), claude_reply("a1", "u1"), claude_reply("a2", "a1"),
               claude_user("u1"), '{"type":"bridge-status"}\n', claude_user("s1", "u1", True)]


@pytest.mark.parametrize(("lines", "said"), [
    (CLAUDE_ONES[:1], f"1 line: 1 record written as events, {NO_MORE}, "),
    ([claude_user("u1"), claude_user("u2", "u1")],
     f"2 lines: 2 records written as events, {NO_MORE}, "),
    (CLAUDE_ONES, f"6 lines: 3 records written as events, {ONE_EACH}, ")])
def test_claude_code_line_counts_are_singular_for_one(tmp_path: Path, lines: list[str],
                                                      said: str) -> None:
    """It said "1 lines: 1 records written as events" and "1 child session(s)"."""
    path = tmp_path / "transcript.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    sessions = ledgerviz.load(path).sessions
    counts = [d.message for d in sessions[0].diagnostics if d.kind == "line_counts"]
    assert counts == [said + "0 unreadable (blank, invalid, torn or not an object)"]
    if len(sessions) > 1:
        (child,) = sessions[1:]
        assert [d.message for d in child.diagnostics if d.kind == "line_counts"] == [
            f"1 inline sidechain record of session transcript: 1 record written as events, "
            f"{NO_MORE}"]
        (unknown,) = [d for d in sessions[0].diagnostics if d.kind == "unknown_record"]
        assert unknown.message == ("1 record of unknown kind 'bridge-status' kept as log-only "
                                   "events (first at line 5)")


def end_seed(seq: int) -> str:
    return (f'{{"type":"session/end-seed","seq":{seq},"time":1,'
            '"data":{"inherited":true}}\n')


@pytest.mark.parametrize(("before", "said"), [
    (0, "says 1 event was inherited, but 0 come before it: the first 1 event is read"),
    (1, "says 2 events were inherited, but 1 comes before it: the first 2 events are read"),
    (2, "says 3 events were inherited, but 2 come before it: the first 3 events are read")])
def test_an_end_seed_past_its_events_agrees_in_number(tmp_path: Path, before: int,
                                                      said: str) -> None:
    """``before`` events (seqs 0 on), then an end-seed marker one seq too far: it claims
    ``before + 1`` inherited events, all the file holds (it said "1 events were")."""
    path = tmp_path / "seeded.jsonl"
    path.write_text(HEADER + "".join(EVENTS[:before]) + end_seed(before + 1), encoding="utf-8")
    (seed,) = [d for d in ledgerviz.load(path).diagnostics if d.kind == "seed_too_long"]
    assert seed.message == f"session/end-seed {said} as inherited from the parent"


def test_the_explorer_says_how_many_sessions_match(tmp_path: Path) -> None:
    """Two one-event sessions, "one" and "two", then "one" alone (it said "1 of 2 sessions
    match")."""
    for name in ("one", "two"):
        (tmp_path / f"{name}.jsonl").write_text(HEADER.replace('"one"', f'"{name}"')
                                                + EVENTS[0], encoding="utf-8")
    explorer = ledgerviz.explore(ledgerviz.load(tmp_path))
    said = {}
    for text in ("", "two", "three"):
        explorer.session_find.value = text
        said[text] = explorer.sessions_shown.value
    assert said == {"": "2 of 2 sessions match", "two": "1 of 2 sessions matches",
                    "three": "0 of 2 sessions match"}
    alone = ledgerviz.explore(ledgerviz.load(tmp_path / "one.jsonl"))
    assert alone.sessions_shown.value == "1 of 1 session matches"


@pytest.mark.parametrize(("count", "said"), [(0, "0 rows"), (1, "1 row"), (2, "2 rows")])
def test_the_frames_table_counts_rows(tmp_path: Path, count: int, said: str) -> None:
    """The events frame has a row per event (it said "1 rows × 13 columns")."""
    table = reprs.frames_table(ledger_of(tmp_path, count).frames)
    assert " ".join(table.text().splitlines()[1].split()).startswith(f".events {said} × ")


@pytest.mark.parametrize(("count", "said"), [(0, "0 aligned rows"), (1, "1 aligned row"),
                                             (2, "2 aligned rows")])
def test_the_diff_figure_counts_aligned_rows(tmp_path: Path, count: int, said: str) -> None:
    """A session against itself: a row per event."""
    one = ledger_of(tmp_path, count)
    title = diff_timeline(ledgerviz.diff(one, one)).layout.title.text
    assert title.endswith(f"<br><sup>{said} · the same</sup>")


def test_fork_counts_inherited_events_and_closers(tmp_path: Path, capsys) -> None:
    """A turn started and ended: forked at its start, 1 event is inherited and 1 closer ends
    the turn; at its end, 2 inherited and no closer (the example crash: 2 closers, in
    tests/cli/test_fork.py)."""
    path = tmp_path / "closed.jsonl"
    path.write_text(HEADER + EVENTS[0] + '{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,'
                    '"reason":{"kind":"completed"}}}\n', encoding="utf-8")
    said = []
    for at in (0, 1):
        child = tmp_path / f"child-{at}.jsonl"
        assert main(["fork", str(path), "--at", str(at), "-o", str(child), "--id", "kid",
                     "--created-at", "5"]) == 0
        said.append(capsys.readouterr().out)
    assert said == [
        f"wrote {tmp_path / 'child-0.jsonl'}: session kid, 1 inherited event, seed marker at "
        "seq 1, 1 forked closer\n",
        f"wrote {tmp_path / 'child-1.jsonl'}: session kid, 2 inherited events, seed marker at "
        "seq 2, 0 forked closers\n"]


def gapped(tmp_path: Path, gaps: int) -> Path:
    """A ledger of turn starts whose seqs skip ``gaps`` times: an error-level seq_gap each."""
    path = tmp_path / f"gaps-{gaps}.jsonl"
    path.write_text(HEADER + "".join(f'{{"type":"turn/start","seq":{seq},"time":1,"data":'
                                     f'{{"turn":{turn}}}}}\n'
                                     for turn, seq in enumerate((0, 5, 9)[:gaps + 1], 1)),
                    encoding="utf-8")
    return path


def test_diff_and_export_count_error_level_problems_and_sessions(tmp_path: Path,
                                                                 capsys) -> None:
    """It said "1 error-level problem(s)" and "1 written sessions have"."""
    for gaps, said in ((1, "1 error-level problem"), (2, "2 error-level problems")):
        path = gapped(tmp_path, gaps)
        main(["diff", str(path), str(path)])
        assert capsys.readouterr().err.splitlines()[:2] == [
            f"ledgerviz diff: warning: {path} has {said}; `ledgerviz check {path}` lists them"] * 2
    for files, said in ((1, "1 written session has"), (2, "2 written sessions have")):
        folder = tmp_path / f"in-{files}"
        folder.mkdir()
        for n in range(files):
            (folder / f"s{n}.jsonl").write_text(gapped(tmp_path, 1).read_text().replace(
                '"one"', f'"s{n}"'), encoding="utf-8")
        assert main(["export", str(folder), "-o", str(tmp_path / f"out-{files}")]) == 1
        assert capsys.readouterr().err == (f"ledgerviz export: {said} error diagnostics "
                                           "(exported leniently; `ledgerviz check PATH` lists "
                                           "them)\n")


def claude_system(uuid: str, session: str) -> str:
    """A system record: written as one log-only event."""
    return json.dumps({"parentUuid": None, "isSidechain": False, "cwd": "/w",
                       "sessionId": session, "type": "system", "subtype": "x", "content": "c",
                       "uuid": uuid, "timestamp": "2026-01-05T10:00:01.000Z"}) + "\n"


@pytest.mark.parametrize(("copied", "said"), [(1, "the first 1 event copies"),
                                              (2, "the first 2 events copy")])
def test_a_claude_code_resume_counts_the_events_it_copies(tmp_path: Path, copied: int,
                                                          said: str) -> None:
    """Sessions A and B begin with the same ``copied`` system records (one event each), then
    a prompt of their own: B, the later, copies them (it said "the first 1 events copy")."""
    for name, time in (("A", 4), ("B", 5)):
        prompt = json.loads(claude_user(f"{name}1", f"x{copied}")) | {
            "sessionId": name, "timestamp": f"2026-01-05T10:00:0{time}.000Z"}
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(claude_system(f"x{n}", name) for n in range(1, copied + 1))
            + json.dumps(prompt) + "\n", encoding="utf-8")
    notes = [d.message for d in ledgerviz.load(tmp_path).diagnostics
             if d.kind == "copied_prefix"]
    assert notes == [f"{said} session A's records (a resume): read as inherited from it"]


@pytest.mark.parametrize(("tail", "said"), [("{", "1 byte"), ("{x", "2 bytes")])
def test_a_torn_tail_counts_its_bytes(tmp_path: Path, capsys, tail: str, said: str) -> None:
    """A last line without newline, in a ledger and a Codex rollout, and what repair says of
    it (it said "(1 bytes)")."""
    path = tmp_path / "torn.jsonl"
    path.write_text(HEADER + EVENTS[0] + tail, encoding="utf-8")
    assert [d.message for d in ledgerviz.load(path).diagnostics] == [
        f"last line has no newline ({said}): an interrupted append, dropped"]
    assert main(["repair", str(path)]) == 1
    offset = len(HEADER + EVENTS[0])
    assert (f"the last line is a torn fragment of {said} at byte offset {offset}; "
            in capsys.readouterr().err)
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(CODEX_META + tail, encoding="utf-8")
    assert [d.message for d in ledgerviz.load(rollout).diagnostics if d.kind == "torn_tail"] == [
        f"last line has no newline and is no JSON ({said}): an interrupted append, dropped"]


def test_repair_counts_the_bytes_the_runtime_would_discard(tmp_path: Path, capsys) -> None:
    """A line that is no JSON before the last: the runtime stops there."""
    path = tmp_path / "stops.jsonl"
    discarded = "x\n" + EVENTS[1]
    path.write_text(HEADER + EVENTS[0] + discarded, encoding="utf-8")
    assert main(["repair", str(path)]) == 1
    assert (f"would discard lines 3-end ({len(discarded)} bytes from byte offset "
            f"{len(HEADER + EVENTS[0])})" in capsys.readouterr().err)
