"""``repair``, ``fork`` and ``check`` agree with the runtime on every damaged or hostile probe.

The expected values are the runtime's own outcomes, computed with its rebuilt repair,
chunk-rows and fork code (``tests/data/runtime-vectors/README.md``): whether it refuses
the log, which events it uses and which bytes it discards, the closers it appends, and
the child its fork seed writes. Nothing here is computed by ledgerviz.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.ledger.runtime_read import runtime_read
from ledgerviz.recovery import ForkRefused

VECTORS = Path(__file__).parents[1] / "data" / "runtime-vectors"
CASES = [json.loads(line) for line in (VECTORS / "vectors.jsonl").open(encoding="utf-8")]
FORKS = [case for case in CASES if "fork" in case]

Capture = pytest.CaptureFixture[str]


def probe(tmp_path: Path, case: dict[str, Any]) -> Path:
    """Return a copy of the case's input (repair's advice is carried out on it)."""
    path = tmp_path / case["input"]
    path.write_bytes((VECTORS / "inputs" / case["input"]).read_bytes())
    return path


def run(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_vectors_cover_every_outcome() -> None:
    outcomes = {case["runtime"]["outcome"] for case in CASES}
    cuts = {(case["runtime"].get("cut") or {}).get("kind") for case in CASES}
    forks = {case["fork"]["outcome"] for case in FORKS}
    assert (outcomes, cuts, forks) == ({"refuse", "read"}, {None, "torn", "damaged"},
                                       {"refuse", "child"})


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["input"])
def test_repair_says_what_the_runtime_does(tmp_path: Path, capsys: Capture,
                                           case: dict[str, Any]) -> None:
    """Refused: exit 1, nothing printed. Read: the events used are the runtime's; a cut is
    asked for at exactly its byte offset, and after it the closers printed are its own."""
    path, runtime = probe(tmp_path, case), case["runtime"]
    code, out, err = run(capsys, "repair", str(path))
    if runtime["outcome"] == "refuse":
        assert (code, out) == (1, "") and "nothing printed" in err
        return
    assert runtime_read(str(path), [path.read_bytes()], lambda _: None).used == runtime["used"]
    cut = runtime["cut"]
    if cut is not None:
        assert (code, out) == (1, "") and f"`truncate -s {cut['offset']} FILE`" in err
        if cut["kind"] == "damaged":
            assert f"stops reading at line {cut['line']}" in err
        os.truncate(path, cut["offset"])
        code, out, err = run(capsys, "repair", str(path))
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == runtime["closers"]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["input"])
def test_check_fails_where_the_runtime_refuses_or_stops(tmp_path: Path, capsys: Capture,
                                                       case: dict[str, Any]) -> None:
    """A log the runtime reads whole (a torn last line aside) checks with warnings at most."""
    runtime = case["runtime"]
    damaged = (runtime.get("cut") or {}).get("kind") == "damaged"
    code, _, _ = run(capsys, "check", str(probe(tmp_path, case)))
    assert code == (1 if runtime["outcome"] == "refuse" or damaged else 0)


@pytest.mark.parametrize("case", FORKS, ids=lambda case: case["input"])
def test_fork_writes_the_runtimes_child_or_refuses(tmp_path: Path, capsys: Capture,
                                                   case: dict[str, Any]) -> None:
    fork, runtime = case["fork"], case["runtime"]
    at = fork["at"] if fork["at"] != "last" else runtime.get("used", 1) - 1
    child = tmp_path / "child.jsonl"
    code, _, err = run(capsys, "fork", str(probe(tmp_path, case)), "-o", str(child),
                       "--at", str(at), "--id", fork["childId"],
                       "--created-at", str(fork["createdAt"]))
    if fork["outcome"] == "refuse":
        assert code != 0 and not child.exists() and err
        return
    assert code == 0, err
    lines = child.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == fork["child"]


@pytest.mark.parametrize("case", FORKS, ids=lambda case: case["input"])
def test_ledger_fork_builds_the_runtimes_child_or_refuses(case: dict[str, Any]) -> None:
    """In memory, from the parent as loaded: the same child, or a refusal wherever the
    runtime refuses, and nowhere else but in the probes whose line the loader leaves out
    (an error after the runtime's stop, or a line only warned of, is no reason)."""
    fork, runtime = case["fork"], case["runtime"]
    at = fork["at"] if fork["at"] != "last" else runtime.get("used", 1) - 1
    parent = ledgerviz.load(VECTORS / "inputs" / case["input"])
    options = {"session_id": fork["childId"], "created_at": fork["createdAt"]}
    try:
        child = parent.fork(at, **options).sessions[0]
    except ForkRefused:
        assert fork["outcome"] == "refuse" or case["input"] in LEFT_OUT_OF_FRAMES
        return
    assert fork["outcome"] == "child"
    assert [child.header, *child.events] == fork["child"]


LEFT_OUT_OF_FRAMES = {
    "turn-string.jsonl", "turn-string-closed.jsonl", "step-string.jsonl",
    "v3-turn-string.jsonl", "content-string.jsonl",  # a turn, step or content of another type
    "call-id-object-open.jsonl", "call-id-object-closed.jsonl", "block-id-list.jsonl",
    "block-id-object.jsonl",  # a call id the runtime compares by identity
}
"""Probes the runtime reads whole whose unusual line the frames still leave out (issue 38);
the closers of six of them differ from the runtime's."""
WHOLE = [case for case in CASES
         if case["runtime"]["outcome"] == "read" and not case["runtime"].get("cut")]


@pytest.mark.parametrize("case", WHOLE, ids=lambda case: case["input"])
def test_the_loaded_ledger_closes_as_the_runtime(case: dict[str, Any]) -> None:
    """A log the runtime reads whole gets its very closers from a loaded Ledger (the frames'
    events), every line kept; the listed exceptions leave their unusual line out, and say so."""
    ledger = ledgerviz.load(VECTORS / "inputs" / case["input"])
    (log,) = ledger.sessions
    closers = ledger.recovery("synthesize").analyses[log.key].closers
    if case["input"] in LEFT_OUT_OF_FRAMES:
        left_out = [d for d in log.diagnostics if d.kind == "unusual_payload"
                    and d.message.endswith("(left out of the frames)")]
        assert (log.lines_skipped, len(left_out)) == (1, 1)
    else:  # before issue 38's kept call ids: 7 of these differed
        assert log.lines_skipped == 0 and closers == case["runtime"]["closers"]


def test_the_default_fork_boundary_is_among_the_events_the_runtime_reads(
        tmp_path: Path, capsys: Capture) -> None:
    """``last-event-no-seq``: the runtime uses seqs 0..3 and stops at the tool/call of call A
    that has no seq, so it never sees A dispatched: no boundary to fork at, for the API as
    for ``ledgerviz fork``. Given seq 4, that call is dispatched without a result: the fork
    point is the assistant message that asked for it (seq 3), the boundary seq 2."""
    (case,) = [case for case in CASES if case["input"] == "last-event-no-seq.jsonl"]
    assert case["runtime"]["used"] == 4
    path = probe(tmp_path, case)
    with pytest.raises(ForkRefused, match="no unresolvable boundary"):
        ledgerviz.load(path).fork()
    code, _, err = run(capsys, "fork", str(path), "-o", str(tmp_path / "child.jsonl"))
    assert code == 1 and "no unresolvable boundary" in err
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[-1] = lines[-1].replace('{"type":"tool/call",', '{"type":"tool/call","seq":4,')
    numbered = tmp_path / "numbered.jsonl"
    numbered.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (child,) = ledgerviz.load(numbered).fork(session_id="c", created_at=1).sessions
    assert [event.get("seq") for event in child.events][:3] == [0, 1, 2]
    assert child.path.endswith("(fork at seq 2)")
