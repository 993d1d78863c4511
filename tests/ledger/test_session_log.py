"""``SessionLog``'s summary line and its envelope columns (expected values by hand)."""

from __future__ import annotations

from ledgerviz.ledger import Diagnostic, SessionLog
from ledgerviz.ledger.fields import EventFields


def session(events: list[dict], diagnostics: list[Diagnostic] = (), **fields) -> SessionLog:
    return SessionLog("logs/a.jsonl", "a", {"type": "session"}, 4, events, list(diagnostics),
                      **fields)


def diagnostic(severity: str) -> Diagnostic:
    return Diagnostic("logs/a.jsonl", 2, "seq_gap", severity, "a gap")


def test_summary_counts_diagnostics_by_severity_in_order_of_first_appearance() -> None:
    log = session([{}, {}], [diagnostic("warning"), diagnostic("error"), diagnostic("warning")])
    assert repr(log) == (
        "<SessionLog 'a' from 'logs/a.jsonl': version 4, 2 events; "
        "diagnostics: 2 warnings, 1 error>"
    )


def test_summary_of_a_clean_log_says_none() -> None:
    assert repr(session([{}])) == (
        "<SessionLog 'a' from 'logs/a.jsonl': version 4, 1 event; diagnostics: none>"
    )


def test_event_fields_are_extracted_when_the_reader_kept_none() -> None:
    events = [{"type": "turn/start", "seq": 7, "time": 5, "data": {"turn": 1}}, {"type": "x"}]
    columns = session(events).event_fields()
    assert (columns.types, columns.seqs, columns.times, columns.turns) == (
        ["turn/start", "x"], [7, 1], [5, None], [1, None]
    )


def test_event_fields_kept_by_the_reader_are_returned_as_they_are() -> None:
    kept = EventFields.empty()
    assert session([{"type": "x"}], fields=kept).event_fields() is kept


def test_equal_type_and_op_strings_share_one_object_and_other_values_pass_through() -> None:
    first, second = "".join(["turn/", "start"]), "".join(["turn", "/start"])
    assert first == second and first is not second
    events = [{"type": first, "surfaceOp": "".join(["app", "end"])},
              {"type": second, "surfaceOp": "".join(["ap", "pend"])},
              {"type": {"odd": 1}, "surfaceOp": {"op": "replace"}},
              {"type": "x", "surfaceOp": "mystery"}]
    columns = EventFields.of(events)
    assert columns.types == [first, first, {"odd": 1}, "x"]
    assert columns.types[1] is columns.types[0]
    assert columns.surface_ops == ["append", "append", {"op": "replace"}, "mystery"]
    assert columns.surface_ops[1] is columns.surface_ops[0]
