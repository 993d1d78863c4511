"""Every field ledgerviz reads replaced by an object, an array, a bool, a huge integer and a
long string, through every command and the API (issue 38): a diagnostic naming file,
line and field, or the value handled, never a traceback, and every other session of the
folder still there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from plotly.utils import PlotlyJSONEncoder
from schema_sweep import (
    HEADER,
    V0_HEADER,
    Case,
    big_string_case,
    cases,
    encode,
    sample_events,
    sample_v0_events,
)

import ledgerviz as lv
from ledgerviz.cli import main
from ledgerviz.export import MANIFEST_NAME, read_export
from ledgerviz.ledger import LedgerError, read_session, read_sessions
from ledgerviz.plot.timeline import session_timeline_specs
from ledgerviz.recovery.analysis import POLICIES

Capture = pytest.CaptureFixture[str]

CASES: list[Case] = [*cases(), big_string_case()]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sweep")
    for case in CASES:
        (root / case.name).write_bytes(case.content)
    return root


@pytest.fixture(scope="module")
def ledger(folder: Path) -> lv.Ledger:
    return lv.load(folder)


def _field_name(case: Case) -> str:
    """Return the last key of the case's field: what its diagnostic must name."""
    return case.field.rsplit(".", 1)[-1].replace("[]", "")


def _names_the_field(case: Case, diagnostics: list[tuple[str, int, str, str]]) -> bool:
    """Return whether a diagnostic on the case's line names its field (an error, or the
    warning of a payload the runtime reads as it is but the frames leave out), or says the
    line holds an integer beyond 64 bits (a packed row's numbers are the runtime's)."""
    return any(line == case.line and (_field_name(case) in message or kind == "big_integer")
               for kind, line, _, message in diagnostics)


def test_the_samples_hold_no_problem() -> None:
    for header, events in ((HEADER, sample_events()), (V0_HEADER, sample_v0_events()),
                           (V0_HEADER, sample_v0_events(tool=True))):
        log = read_session("sample.jsonl", encode(header, events))
        assert log.diagnostics == []
        assert log.lines_skipped == 0


def test_the_sweep_covers_every_declared_field_with_every_kind_of_value() -> None:
    from ledgerviz.ledger.schema import EVENT_FIELDS, HEADER_FIELDS, LENIENT_FIELDS

    swept = {(case.field, case.name.rsplit("--", 1)[1]) for case in cases()}
    declared = {*HEADER_FIELDS, *(f for fields in EVENT_FIELDS.values() for f in fields),
                *(f for fields in LENIENT_FIELDS.values() for f in fields)}
    fields = {field.removeprefix("header.") for field, _ in swept}
    assert declared <= fields
    assert {value for _, value in swept} >= {"object.jsonl", "array.jsonl", "bool.jsonl",
                                             "huge-int.jsonl", "string.jsonl"}
    # a packed tool-call-chunks row: every field its decoder reads (LEDGER_FORMAT §4.3)
    packed = {case.field for case in cases() if case.name.startswith("tool-call-chunks-")}
    assert packed == {"seq0", "time0", "data", "data.turn", "data.step", "data.index",
                      "data.dt", "data.dt[]", "data.id", "data.name", "data.args",
                      "data.args[]"}


def test_a_checked_field_of_another_type_is_diagnosed_on_its_line(ledger: lv.Ledger) -> None:
    by_file: dict[str, list[tuple[str, int, str, str]]] = {}
    for d in ledger.diagnostics:
        by_file.setdefault(Path(d.path).name, []).append((d.kind, d.line, d.severity,
                                                          d.message))
    unflagged = [case.name for case in CASES if case.checked and case.wrong
                 and not _names_the_field(case, by_file.get(case.name, []))]
    assert unflagged == []
    assert len(ledger.sessions) == len(CASES)


def test_a_strict_load_raises_a_ledger_error_or_nothing() -> None:
    for case in CASES:
        try:
            read_session(case.name, case.content, strict=True)
        except LedgerError as error:
            assert f"{case.name}:" in str(error)


def test_frames_recovery_contexts_and_timelines_of_every_case(ledger: lv.Ledger) -> None:
    keys = ledger.keys
    with_events = [log.key for log in ledger.sessions if log.events]
    for policy in POLICIES:
        view = ledger.recovery(policy)
        frames = view.frames
        assert set(frames.lineage["session"]) == set(keys)
        assert set(frames.events["session"]) == set(with_events)
        for name in ("turns", "steps", "calls", "messages"):
            assert len(getattr(frames, name).columns) > 0
        for key in keys:
            for provider in ("anthropic", "openai"):
                ledger.context(policy, provider=provider, session=key)
        fork_points = {key: view.analyses[key].fork_points for key in keys}
        for axis in ("order", "time"):
            specs = session_timeline_specs(frames, with_events, policy=policy,
                                           fork_points=fork_points, axis=axis)
            assert len(specs) == len(with_events)
            assert json.dumps(specs, cls=PlotlyJSONEncoder)


def _check(folder: Path, capsys: Capture, *options: str) -> dict[str, dict[str, Any]]:
    assert main(["check", "--json", *options, str(folder)]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["failures"] == []
    return {Path(s["path"]).name: s for s in document["sessions"]}


def test_check_and_check_stream_agree_on_every_case(folder: Path, capsys: Capture) -> None:
    whole, streamed = _check(folder, capsys), _check(folder, capsys, "--stream")
    assert set(whole) == set(streamed) == {case.name for case in CASES}
    for case in CASES:
        found = [[(d["kind"], d["line"], d["severity"], d["message"]) for d in s[case.name][
            "diagnostics"]] for s in (whole, streamed)]
        if case.checked and case.wrong:  # each one checked against the case on its own
            assert all(_names_the_field(case, diagnostics) for diagnostics in found), case.name
        assert found[0] == found[1], case.name
        for fact in ("events", "turns", "lines_skipped", "calls", "unanswered", "closers"):
            assert whole[case.name][fact] == streamed[case.name][fact], (case.name, fact)


def test_a_sample_session_checks_as_worked_by_hand(folder: Path, capsys: Capture) -> None:
    name = "header-cwd--string.jsonl"  # a string where a string belongs: the sample itself
    for options in ((), ("--stream",)):
        summary = _check(folder, capsys, *options)[name]
        # 16 events, one turn; call A answered by an error result (isError, code ENOENT)
        assert (summary["events"], summary["turns"], summary["diagnostics"]) == (16, 1, [])
        assert (summary["calls"], summary["unanswered"], summary["closers"]) == (
            {"error": 1}, [], 0)


def test_report_shows_every_session_of_the_sweep(
    folder: Path, tmp_path: Path, capsys: Capture
) -> None:
    report = tmp_path / "r.html"
    assert main(["report", "-o", str(report), str(folder)]) == 1
    assert f"({len(CASES)} sessions" in capsys.readouterr().out


def test_export_writes_every_session_of_the_sweep(
    folder: Path, tmp_path: Path, capsys: Capture
) -> None:
    assert main(["export", "-o", str(tmp_path / "x"), str(folder)]) == 1
    assert f"exported {len(CASES)} sessions" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "x" / MANIFEST_NAME).read_text())
    assert len(manifest["sessions"]) == len(CASES)
    assert read_export(tmp_path / "x")["lineage"]["session"].nunique() == len(CASES)


def test_fork_and_repair_of_every_case(folder: Path, tmp_path: Path, capsys: Capture) -> None:
    for number, case in enumerate(CASES):
        path = str(folder / case.name)
        assert main(["repair", path]) in (0, 1), case.name
        child = tmp_path / f"child-{number}.jsonl"
        assert main(["fork", "--at", "8", "-o", str(child), path]) in (0, 1), case.name
        capsys.readouterr()
    assert read_sessions(tmp_path)  # the children that were written read back


def test_the_sessions_of_a_folder_all_load_even_beside_every_case(folder: Path) -> None:
    logs = read_sessions(folder)
    assert sorted(Path(log.path).name for log in logs) == sorted(case.name for case in CASES)
