"""Inline sidechains of older Claude Code builds (``isSidechain: true`` records in the main
file) read as linked child sessions. Expected values are counted by hand from
``tests/data/claude_code/inline_sidechain.jsonl`` (see its README row)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pandas as pd
import pytest

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.export import ExportError, export, read_export
from ledgerviz.frames import FRAME_NAMES
from ledgerviz.report.sessions import LedgerFiles

FILE = Path(__file__).resolve().parents[1] / "data" / "claude_code" / "inline_sidechain.jsonl"
MAIN, CHILD = "inline_sidechain", "inline_sidechain/sidechain-1"
# lines 1-2 and 7-8: prompt, Task call, its result, the final answer (a closed turn)
MAIN_TYPES = ["turn/start", "user/message", "step/start", "assistant/message", "tool/call",
              "tool/result", "subagent/catalog", "step/end", "step/start", "assistant/message",
              "step/end", "turn/end"]
MAIN_LINES = [1, 1, 2, 2, 2, 7, 7, 8, 8, 8, 8, 8]
# lines 3-6: the sidechain's prompt, a Grep call, its result, the answer
CHILD_TYPES = ["turn/start", "user/message", "step/start", "assistant/message", "tool/call",
               "tool/result", "step/end", "step/start", "assistant/message", "step/end",
               "turn/end"]
CHILD_LINES = [3, 3, 4, 4, 4, 5, 6, 6, 6, 6, 6]


def _records() -> list[dict]:
    return [orjson.loads(line) for line in FILE.read_bytes().splitlines()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def _anchors(ledger: ledgerviz.Ledger) -> dict[str, tuple]:
    lineage = ledger.frames.lineage.astype(object)
    lineage = lineage.where(lineage.notna(), None)
    return {row.session: (row.parent_session, row.relation, row.inherited_events,
                          row.anchor_call_id, row.anchor_seq)
            for row in lineage.itertuples()}


def test_an_inline_sidechain_is_a_child_session_of_the_main_one() -> None:
    ledger = ledgerviz.load(FILE)
    assert ledger.keys == [MAIN, CHILD]
    main_log, child = ledger.sessions
    assert [e["type"] for e in main_log.events] == MAIN_TYPES
    assert list(main_log.lines) == MAIN_LINES
    assert [e["type"] for e in child.events] == CHILD_TYPES
    assert list(child.lines) == CHILD_LINES
    assert main_log.events[6]["data"] == {"version": 1, "childId": CHILD, "mode": "unknown",
                                          "callId": "toolu_task"}
    assert child.header == {"type": "session", "version": 4, "id": CHILD,
                            "createdAt": 1767607203000, "isSeeded": False,
                            "cwd": "/home/dev/repo", "parentSession": MAIN,
                            "origin": "subagent", "delegationDepth": 1}
    # the Task call is main seq 4; the child inherits nothing
    assert _anchors(ledger) == {MAIN: (None, "root", 0, None, None),
                                CHILD: (MAIN, "subagent", 0, "toolu_task", 4)}
    calls = ledger.frames.calls
    assert calls.groupby("session", observed=True)["call_id"].apply(list).to_dict() == {
        MAIN: ["toolu_task"], CHILD: ["toolu_g"]}


def test_every_line_is_accounted_for_in_the_main_or_its_child() -> None:
    main_log, child = ledgerviz.load(FILE).sessions
    (counts,) = [d for d in main_log.diagnostics if d.kind == "line_counts"]
    assert counts.message == (
        "8 lines: 4 records written as events, 0 assistant records merged into the step of an "
        "earlier one (same message.id), 0 replayed copies skipped, 4 inline sidechain records "
        "read as 1 child session, 0 unreadable (blank, invalid, torn or not an object)")
    (counts,) = [d for d in child.diagnostics if d.kind == "line_counts"]
    assert (counts.line, counts.message) == (3, (
        "4 inline sidechain records of session inline_sidechain: 4 records written as events, 0 "
        "assistant records merged into the step of an earlier one (same message.id), 0 "
        "replayed copies skipped"))
    assert main_log.lines_skipped == 0 and child.lines_skipped == 0
    assert sorted({*main_log.lines, *child.lines}) == list(range(1, 9))


def test_an_agent_id_names_the_child_and_anchors_it(tmp_path: Path) -> None:
    records = _records()
    for record in records[2:6]:
        record["agentId"] = "b5"
    records[6]["toolUseResult"]["agentId"] = "b5"
    records[1]["message"]["content"][0]["input"]["prompt"] = "something else"  # agentId alone
    ledger = ledgerviz.load(_write(tmp_path / "s.jsonl", records))
    assert ledger.keys == ["s", "agent-b5"]
    assert _anchors(ledger)["agent-b5"] == ("s", "subagent", 0, "toolu_task", 4)


def test_without_proof_the_child_is_linked_but_not_anchored(tmp_path: Path) -> None:
    records = _records()
    records[1]["message"]["content"][0]["input"]["prompt"] = "Review lib/"  # no match
    # a second sidechain root (parentUuid null) splits the chain: two children
    records[4]["parentUuid"] = None
    records[4]["message"]["content"] = "Review src/"  # line 5: a typed prompt now
    ledger = ledgerviz.load(_write(tmp_path / "s.jsonl", records))
    assert ledger.keys == ["s", "s/sidechain-1", "s/sidechain-2"]
    assert "subagent/catalog" not in [e["type"] for e in ledger.sessions[0].events]
    # lines 3-4: turn/start, user/message, step/start, assistant/message, tool/call (no
    # result: left open); lines 5-6: the same opening without a call, then step/end, turn/end
    assert [len(log.events) for log in ledger.sessions[1:]] == [5, 6]
    anchors = _anchors(ledger)
    assert anchors["s/sidechain-1"] == ("s", "subagent", 0, None, None)
    assert anchors["s/sidechain-2"] == ("s", "subagent", 0, None, None)


def test_two_task_calls_with_one_prompt_anchor_nothing(tmp_path: Path) -> None:
    records = _records()
    task = records[1]["message"]["content"][0]
    records[1]["message"]["content"].append({**task, "id": "toolu_twin"})
    ledger = ledgerviz.load(_write(tmp_path / "s.jsonl", records))
    assert _anchors(ledger)["s/sidechain-1"] == ("s", "subagent", 0, None, None)


def test_check_summarises_the_child_after_its_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--json", str(FILE)]) == 0
    sessions = json.loads(capsys.readouterr().out)["sessions"]
    assert [(s["id"], s["events"], s["turns"], s["calls"]) for s in sessions] == [
        (MAIN, 12, 1, {"ok": 1}), (CHILD, 11, 1, {"ok": 1})]


def test_a_report_reading_file_by_file_sees_the_child() -> None:
    files = LedgerFiles.read([FILE])
    assert files.keys == [MAIN, CHILD] and files.sizes == [12, 11]
    lineage = files.lineage.set_index("session")
    assert lineage.loc[CHILD, "parent_session"] == MAIN
    assert lineage.loc[CHILD, "relation"] == "subagent"
    assert lineage.loc[CHILD, "anchor_call_id"] == "toolu_task"
    files._kept = None  # as for files too large to keep: read again per batch
    again = files.part([1])
    assert again.keys == [CHILD]
    assert [e["type"] for e in again.sessions[0].events] == CHILD_TYPES


def _exported(out: Path) -> dict[str, tuple]:
    """Return each exported session's event types and lineage anchor, read back."""
    frames = read_export(out)
    types = frames["events"].groupby("session", observed=True)["type"].apply(list).to_dict()
    lineage = frames["lineage"].astype(object)
    lineage = lineage.where(lineage.notna(), None)
    return {row.session: (types[row.session], row.parent_session, row.relation,
                          row.anchor_call_id, row.anchor_seq) for row in lineage.itertuples()}


EXPORTED = {MAIN: (MAIN_TYPES, None, "root", None, None),
            CHILD: (CHILD_TYPES, MAIN, "subagent", "toolu_task", 4)}


def test_an_export_writes_the_main_session_and_its_child(tmp_path: Path) -> None:
    import duckdb

    summary = export([FILE], tmp_path / "out", "recorded")
    assert summary.sessions == [MAIN, CHILD]
    assert _exported(tmp_path / "out") == EXPORTED
    counted = duckdb.sql(f"SELECT session, count(*) FROM '{tmp_path}/out/events/*.parquet' "
                         "GROUP BY session ORDER BY session").fetchall()
    assert counted == [(MAIN, 12), (CHILD, 11)]
    manifest = json.loads((tmp_path / "out" / "ledgerviz-export.json").read_text())
    assert manifest["sessions"] == [MAIN, CHILD]
    assert [(e["file"], e["key"], e["rows"]["events"]) for e in manifest["inline"]] == [
        (str(FILE), CHILD, [12, 11])]


def test_the_dask_export_writes_the_child_too(tmp_path: Path) -> None:
    import ledgerviz.export.dask as lvd

    assert lvd.export([FILE], tmp_path / "out").sessions == [MAIN, CHILD]
    assert _exported(tmp_path / "out") == EXPORTED


def test_a_copy_prefixes_its_child_and_a_rewrite_copies_the_other_file(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    first, second = tmp_path / "in" / "a.jsonl", tmp_path / "other" / "a.jsonl"
    first.write_bytes(FILE.read_bytes())
    second.parent.mkdir()
    second.write_bytes(FILE.read_bytes())
    out = tmp_path / "out"
    # keys: the file stem; the copy's clashes, so it is its file name and prefixes its child
    keys = ["a", "a/sidechain-1", "a.jsonl", "a.jsonl/a/sidechain-1"]
    assert export([first, second], out).sessions == keys
    events = read_export(out)["events"]
    # the copy is related to the first file (same uuids), as in a load of both: same rows
    loaded = ledgerviz.load([first, second]).frames.events
    assert (events.groupby("session", observed=True).size().tolist()
            == loaded.groupby("session", observed=True).size().tolist())
    assert events.groupby("session", observed=True).size()[keys[:2]].tolist() == [12, 11]
    second.write_bytes(b"".join(FILE.read_bytes().splitlines(keepends=True)[:7]))  # no line 8
    summary = export([first, second], out)
    assert (summary.written, summary.unchanged) == ([str(second)], [str(first)])
    again = read_export(out)["events"]
    def first_file(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["session"].isin(keys[:2])].astype(object).reset_index(drop=True)

    pd.testing.assert_frame_equal(first_file(again), first_file(events))  # copied, not read
    assert (again["session"] == keys[3]).sum() == 11  # its lines 3-6 are unchanged


def test_a_child_key_that_is_another_files_key_stops_the_run(tmp_path: Path) -> None:
    other = tmp_path / "in" / "x.jsonl"
    other.parent.mkdir()
    other.write_text(json.dumps({"type": "session", "version": 4, "id": CHILD,
                                 "createdAt": 1767607203000}) + "\n")
    out = tmp_path / "out"
    export([other], out)
    before = read_export(out)["events"]
    with pytest.raises(ExportError) as raised:
        export([FILE, other], out)
    assert str(raised.value) == (f"{other}: session key {CHILD!r} is also a session of "
                                 f"{FILE}; export these files into separate folders")
    assert sorted(p.name for p in out.iterdir()) == sorted([*FRAME_NAMES, "ledgerviz-export.json"])
    pd.testing.assert_frame_equal(read_export(out)["events"], before)


def test_a_manifest_from_before_inline_sessions_is_read_and_then_rewritten(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    export([FILE], out)
    manifest = json.loads((out / "ledgerviz-export.json").read_text())
    del manifest["inline"]
    manifest["sessions"] = [MAIN]
    (out / "ledgerviz-export.json").write_text(json.dumps(manifest))
    assert read_export(out)["events"]["session"].tolist() == [MAIN] * 12
    summary = export([FILE], out)  # the file is unchanged, but read again
    assert (summary.written, summary.unchanged) == ([str(FILE)], [])
    assert _exported(out) == EXPORTED


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda m: m["inline"][0].update(file="/elsewhere.jsonl"),
     "inline[0].file is not the path of one of the files"),
    (lambda m: m["inline"][0].update(key="other"),
     "'sessions' is not the list of the files' keys"),
    (lambda m: m["inline"][0]["rows"].update(events=[11, 11]),
     "the rows of part {part} in events do not follow on at row 12"),
])
def test_an_edited_inline_entry_is_a_clear_error(tmp_path: Path, edit: object,
                                                 problem: str) -> None:
    out = tmp_path / "out"
    export([FILE], out)
    manifest = json.loads((out / "ledgerviz-export.json").read_text())
    edit(manifest)  # type: ignore[operator]
    (out / "ledgerviz-export.json").write_text(json.dumps(manifest))
    with pytest.raises(ExportError, match="not a manifest ledgerviz wrote") as raised:
        read_export(out)
    assert str(raised.value).endswith(
        problem.format(part=manifest["files"][0]["part"])
        + "; export into a new folder, or empty this one")


def test_dask_frames_hold_the_child_after_the_main_session(tmp_path: Path) -> None:
    import ledgerviz.export.dask as lvd

    plain = _write(tmp_path / "plain.jsonl", _records()[:2])  # no sidechain record
    assert lvd.session_keys([str(FILE), str(plain)]) == [MAIN, CHILD, "plain"]
    frames = lvd.frames([FILE, plain], files_per_partition=1)
    events = frames.events.compute()
    assert list(events["session"].cat.categories) == [MAIN, CHILD, "plain"]
    # lines 1-2 alone: prompt, the Task call (turn, step and call left open)
    assert events.groupby("session", observed=True).size().to_dict() == {
        MAIN: 12, CHILD: 11, "plain": 5}
    assert events[events["session"] == CHILD]["type"].tolist() == CHILD_TYPES
    lineage = frames.lineage.compute().set_index("session")
    assert (lineage.loc[CHILD, "parent_session"], lineage.loc[CHILD, "anchor_call_id"],
            lineage.loc[CHILD, "anchor_seq"]) == (MAIN, "toolu_task", 4)


def test_dask_keys_find_the_child_of_a_file_a_blank_line_opens(tmp_path: Path) -> None:
    import ledgerviz.export.dask as lvd

    # the format is sniffed past the blank line, as a load does: the same two sessions
    path = tmp_path / "blank.jsonl"
    path.write_bytes(b"\n" + FILE.read_bytes())
    assert ledgerviz.load(path).keys == ["blank", "blank/sidechain-1"]
    assert lvd.session_keys([str(path)]) == ["blank", "blank/sidechain-1"]
    events = lvd.frames([path]).events.compute()
    assert events.groupby("session", observed=True).size().tolist() == [12, 11]


@pytest.mark.parametrize(("grown", "said"), [(True, "holds 2 sessions, but 1"),
                                             (False, "holds 1 session, but 2")])
def test_dask_frames_stop_on_a_file_whose_sessions_changed_since(tmp_path: Path, grown: bool,
                                                                 said: str) -> None:
    """A file of one session that gains a sidechain, or the other way round."""
    import ledgerviz.export.dask as lvd

    one = _write(tmp_path / "one.jsonl", _records()[:2]).read_bytes()
    before, after = (one, FILE.read_bytes()) if grown else (FILE.read_bytes(), one)
    path = tmp_path / "changed.jsonl"
    path.write_bytes(before)
    frames = lvd.frames([path])  # keys found now
    path.write_bytes(after)
    with pytest.raises(ValueError, match=re.escape(f"{path}: {said} when the Dask frames "
                                                   "were made")):
        frames.events.compute()


@pytest.mark.parametrize(("content", "may"), [
    (b'{"isSidechain":true}', True), (b'{"isSidechain" :\n\ttrue}', True),
    (b'{"is\\u0053idechai\\u006E":true}', True), (b'{"isSidechain":false}', False),
    (b'{"isSidechains":true}', False), (b'{"notisSidechain":true}', False)])
def test_only_bytes_that_may_flag_a_sidechain_are_read_whole(content: bytes, may: bool) -> None:
    from ledgerviz.ledger.formats.claude_code_sidechains import may_hold_sidechains

    assert may_hold_sidechains(content) is may
    if may:  # the reader agrees: a record flagged a sidechain
        assert orjson.loads(content) == {"isSidechain": True}
