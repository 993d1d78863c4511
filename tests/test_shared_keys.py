"""Sessions sharing a key in one ``Ledger`` (issue 38): no crash in frames.lineage or the
report, each session kept distinct under a key of its own, and a warning saying so."""

from __future__ import annotations

import json
from pathlib import Path

import ledgerviz
from ledgerviz.api import Ledger
from ledgerviz.cli import main
from ledgerviz.report import render_report

CLEAN = Path(__file__).parents[1] / "ledgerviz" / "examples" / "clean.jsonl"


def ledger_file(path: Path, session_id: str, parent: str | None = None) -> Path:
    lines = CLEAN.read_text().splitlines()
    header = json.loads(lines[0])
    header["id"] = session_id
    if parent is not None:
        header.update(parentSession=parent, isSeeded=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return path


def shared(tmp_path: Path) -> Ledger:
    """Return one Ledger of two parents with the key "p" and two children with the key "c"
    (each loaded apart: a load alone makes its keys unique)."""
    files = [ledger_file(tmp_path / "one" / "p.jsonl", "p"),
             ledger_file(tmp_path / "two" / "p.jsonl", "p"),
             ledger_file(tmp_path / "one" / "c.jsonl", "c", parent="p"),
             ledger_file(tmp_path / "two" / "c.jsonl", "c", parent="p")]
    return Ledger([log for file in files for log in ledgerviz.load(file).sessions])


def test_each_session_keeps_a_key_of_its_own_and_is_warned(tmp_path: Path) -> None:
    ledger = shared(tmp_path)
    second_p, second_c = str(tmp_path / "two" / "p.jsonl"), str(tmp_path / "two" / "c.jsonl")
    # a clashing key falls back to the file name (as a load does)
    assert ledger.keys == ["p", "p.jsonl", "c", "c.jsonl"]
    assert [(d.path, d.line, d.kind, d.message) for d in ledger.diagnostics] == [
        (second_p, 1, "duplicate_session_key",
         f"session key 'p' is also the key of {tmp_path / 'one' / 'p.jsonl'}: this session "
         "is 'p.jsonl' here"),
        (second_c, 1, "duplicate_session_key",
         f"session key 'c' is also the key of {tmp_path / 'one' / 'c.jsonl'}: this session "
         "is 'c.jsonl' here"),
    ]


def test_lineage_and_the_report_draw_every_session(tmp_path: Path) -> None:
    ledger = shared(tmp_path)
    lineage = ledger.frames.lineage
    assert lineage["session"].tolist() == ledger.keys
    assert lineage["parent_session"].fillna("-").tolist() == ["-", "-", "p", "p"]
    assert lineage["relation"].tolist() == ["root", "root", "fork", "fork"]
    page = render_report(ledger, packed=False)
    assert page.count("<section class=\"session\"") == 4


def test_a_parent_id_held_by_two_loaded_sessions_is_warned_on_the_child(tmp_path: Path) -> None:
    ledger_file(tmp_path / "a" / "p.jsonl", "p")
    ledger_file(tmp_path / "b" / "p.jsonl", "p")
    child = ledger_file(tmp_path / "c.jsonl", "c", parent="p")
    ledger = ledgerviz.load(tmp_path)
    assert ledger.keys == ["p", "p.jsonl", "c"]
    assert [(d.path, d.line, d.kind, d.message) for d in ledger.diagnostics] == [
        (str(child), 1, "ambiguous_parent",
         "parentSession 'p' is the id of 2 loaded sessions ('p', 'p.jsonl'): the lineage "
         "names the first")]
    lineage = ledger.frames.lineage
    assert lineage["parent_session"].fillna("-").tolist() == ["-", "-", "p"]


def test_the_report_of_the_files_shows_the_warning(tmp_path: Path) -> None:
    ledger_file(tmp_path / "in" / "a" / "p.jsonl", "p")
    ledger_file(tmp_path / "in" / "b" / "p.jsonl", "p")
    ledger_file(tmp_path / "in" / "c.jsonl", "c", parent="p")
    out = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "in"), "--no-pack", "-o", str(out)]) == 0
    assert ("parentSession &#x27;p&#x27; is the id of 2 loaded sessions (&#x27;p&#x27;, "
            "&#x27;p.jsonl&#x27;): the lineage names the first") in out.read_text()
