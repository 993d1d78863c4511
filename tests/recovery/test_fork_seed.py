"""Fork seeds equal the runtime's (format §11) at every conformance cut with forked closers.

The conformance vectors give, for the first ``k`` events of an input, the closers the
runtime's closing routine returns with cause ``forked``. A fork seed with boundary
``b = k - 1`` copies those ``k`` events, puts ``session/end-seed {inherited: true}`` at
seq ``k`` (time of event ``k - 1``) and closes *after* it (§11 step 3), so its closers
are the vector's with every seq, and the seq that ends each result id, one higher;
their times (the marker's = event ``k - 1``'s) are the vector's unchanged.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from ledgerviz.recovery import ForkRefused, fork_boundary, fork_header, fork_seed
from ledgerviz.recovery.fork import position_of_seq
from ledgerviz.streams.fork_file import write_fork

from .build import LedgerBuilder, crashed_mid_dispatch
from .ledgers import CONFORMANCE, conformance_cases, conformance_input, dsh_fixture

FORKED = [c for c in conformance_cases() if c["cause"] == "forked"]


def after_marker(closer: dict[str, Any]) -> dict[str, Any]:
    """Return the vector's closer as it sits after the seed marker: seq (and id seq) + 1."""
    moved = copy.deepcopy(closer)
    moved["seq"] += 1
    message = moved["data"].get("message")
    if message is not None:
        stem, _, suffix = message["id"].rpartition("-")
        assert suffix == str(closer["seq"])  # the id ends with the closer's own seq
        message["id"] = f"{stem}-{closer['seq'] + 1}"
    return moved


def test_every_forked_case_is_v4_and_many_close_calls() -> None:
    assert len(FORKED) == 477 and {c["generation"] for c in FORKED} == {"v4"}
    with_results = [c for c in FORKED if any(e["type"] == "tool/result" for e in c["closers"])]
    assert len(with_results) == 234


def runtime_seed(case: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return the child header and events the runtime seeds at the case's cut (see above)."""
    header, events = conformance_input(case["input"])
    cut = case["cut"]
    marker = {
        "type": "session/end-seed",
        "seq": cut,
        "time": events[cut - 1]["time"],
        "data": {"inherited": True},
    }
    child_header = {
        "type": "session",
        "version": 4,
        "id": "child-1",
        "createdAt": 1_800_000_000_000,
        **({"cwd": header["cwd"]} if "cwd" in header else {}),
        "parentSession": header["id"],
        "isSeeded": True,
    }
    return child_header, [*events[:cut], marker, *(after_marker(c) for c in case["closers"])]


@pytest.mark.parametrize("case", FORKED, ids=[f"{c['input']}-cut{c['cut']}" for c in FORKED])
def test_seed_matches_runtime(case: dict[str, Any]) -> None:
    header, events = conformance_input(case["input"])
    before = copy.deepcopy(events)
    seeded = fork_seed(
        header, events, case["cut"] - 1, session_id="child-1", created_at=1_800_000_000_000
    )
    assert seeded == runtime_seed(case)
    assert events == before


@pytest.mark.parametrize("case", FORKED, ids=[f"{c['input']}-cut{c['cut']}" for c in FORKED])
def test_seed_written_from_the_file_matches_runtime(case: dict[str, Any]) -> None:
    """``ledgerviz fork`` writes the same child, reading the parent 256 bytes at a time."""
    written: list[str] = []
    write_fork(CONFORMANCE / "inputs" / case["input"], written.append, case["cut"] - 1,
               session_id="child-1", created_at=1_800_000_000_000, chunk_bytes=256)
    child_header, *child = (json.loads(line) for line in "".join(written).splitlines())
    assert (child_header, child) == runtime_seed(case)


def test_header_is_the_runtimes_keys_in_its_order() -> None:
    """``SessionStore.fork`` writes version 4 and no delegationDepth, origin or preset."""
    parent = {
        "type": "session",
        "version": 4,
        "id": "p",
        "createdAt": 5,
        "cwd": "/w",
        "isSeeded": False,
        "origin": "subagent",
        "delegationDepth": 2,
        "agentPreset": "standard",
    }
    b = LedgerBuilder()
    b.turn_start()
    b.user()
    header, _ = fork_seed(parent, b.events, 1, session_id="c", created_at=9)
    assert list(header.items()) == [
        ("type", "session"),
        ("version", 4),
        ("id", "c"),
        ("createdAt", 9),
        ("cwd", "/w"),
        ("parentSession", "p"),
        ("isSeeded", True),
    ]
    header = fork_header({**parent, "version": 2}, session_id="c", created_at=9)
    assert (header["version"], header["delegationDepth"]) == (2, 2)  # a v2 header needs it


@pytest.mark.parametrize(("session_id", "created_at", "problem"), [
    ("p", 9, "the child's id 'p' is the parent's"),
    ("c", -1, "createdAt -1 is not epoch milliseconds"),
    ("c", 2**53, "createdAt 9007199254740992 is not epoch milliseconds"),
    ("c", 9.0, "createdAt 9.0 is not epoch milliseconds"),
])
def test_a_child_the_runtime_would_refuse_is_refused(
    session_id: str, created_at: Any, problem: str
) -> None:
    b = LedgerBuilder()
    b.turn_start()
    with pytest.raises(ForkRefused, match=problem):
        fork_seed({"type": "session", "version": 4, "id": "p", "createdAt": 5}, b.events, 0,
                  session_id=session_id, created_at=created_at)


def test_policy_boundary_is_the_event_before_the_fork_point() -> None:
    b = crashed_mid_dispatch()
    assert fork_boundary(b.events, version=4) == 10
    header = {"type": "session", "version": 4, "id": "p", "createdAt": 0}
    _, child = fork_seed(header, b.events, 10, session_id="c", created_at=1)
    assert child[:11] == b.events[:11]
    # the marker, then step/end and turn/end forked: nothing before F was pending
    assert [(e["type"], e["seq"], e["time"]) for e in child[11:]] == [
        ("session/end-seed", 11, 1100),
        ("step/end", 12, 1100),
        ("turn/end", 13, 1100),
    ]
    assert child[13]["data"] == {"turn": 2, "reason": {"kind": "forked"}}


def test_no_boundary_without_an_unresolved_dispatched_call() -> None:
    b = LedgerBuilder()
    b.turn_start()
    b.user()
    b.step_start()
    b.assistant("A", "B")  # asked for, never dispatched: known outcomes
    assert fork_boundary(b.events, version=4) is None
    b = crashed_mid_dispatch()
    b.tool_result("B")
    b.tool_call("C")
    b.tool_result("C")
    b.step_end()
    b.turn_end()
    assert fork_boundary(b.events, version=4) is None


def test_recorded_unknown_result_is_a_boundary() -> None:
    b = crashed_mid_dispatch()
    b.tool_result("B", is_error=True, code="TOOL_OUTCOME_UNKNOWN")  # a resumed synthesize log
    assert fork_boundary(b.events, version=4) == 10


def test_bad_boundaries_and_old_generations_are_refused() -> None:
    b = crashed_mid_dispatch()
    header = {"type": "session", "version": 4, "id": "p", "createdAt": 0}
    for seq in (13, -1, "3"):
        with pytest.raises(ForkRefused, match=r"no event with seq .* \(seqs run 0\.\.12\)"):
            fork_seed(header, b.events, seq, session_id="c", created_at=1)  # type: ignore[arg-type]
    with pytest.raises(ForkRefused, match="no events"):
        fork_seed(header, [], 0, session_id="c", created_at=1)
    for version in (None, 0, 1):
        with pytest.raises(ForkRefused, match="seedLength"):
            fork_seed({**header, "version": version}, b.events, 7, session_id="c", created_at=1)
    v3 = {**header, "version": 3}
    with pytest.raises(ForkRefused, match="inside turn 2, and only the v4 runtime"):
        fork_seed(v3, b.events, 10, session_id="c", created_at=1)
    _, child = fork_seed(v3, b.events, 7, session_id="c", created_at=1)  # a turn boundary
    assert child[8:] == [
        {"type": "session/end-seed", "seq": 8, "time": 1070, "data": {"inherited": True}}
    ]


def test_v3_turn_boundary_fork_matches_the_runtimes_fixture_child() -> None:
    """preview-architecture-review is a v3 child of preview-showcase cut after seq 168."""
    parent_header, parent = dsh_fixture("preview-showcase")
    recorded_header, recorded = dsh_fixture("preview-architecture-review")
    header, child = fork_seed(
        parent_header,
        parent,
        168,
        session_id=recorded_header["id"],
        created_at=recorded_header["createdAt"],
    )
    assert child[:169] == recorded[:169]
    assert {k: child[169][k] for k in ("type", "seq", "data")} == {
        k: recorded[169][k] for k in ("type", "seq", "data")
    }
    assert len(child) == 170  # a turn boundary: no closers
    for key in ("version", "id", "createdAt", "cwd", "parentSession", "isSeeded"):
        assert header[key] == recorded_header[key], key


def test_refusals_say_exactly_why() -> None:
    header = {"type": "session", "version": 4, "id": "p", "createdAt": 0}
    unnumbered = [{"type": "turn/start", "data": {"turn": 1}}, {"type": "todo/write"},
                  {"type": "turn/end", "data": {"turn": 1}}]  # seqs are their positions 0..2
    gapped = [{**event, "seq": seq} for event, seq in zip(unnumbered, (0, 1, 5), strict=True)]
    between_steps = [{"type": "turn/start", "seq": 0, "data": {"turn": 1}},
                     {"type": "step/start", "seq": 1, "data": {"turn": 1, "step": 1}},
                     {"type": "step/end", "seq": 2, "data": {"turn": 1, "step": 1}}]
    cases = [
        (header, unnumbered, 5, "no event with seq 5 to fork at (seqs run 0..2)"),
        (header, gapped, 2, "no event with seq 2 to fork at (seqs run 0..5)"),
        (header, [], 0, "no event with seq 0 to fork at (the ledger has no events)"),
        # v3, cut after a step/end: the open turn gets a lone turn/end (format §9.1)
        ({**header, "version": 3}, between_steps, 2,
         "cannot fork this v3 ledger at seq 2: the cut is inside turn 1, and only the v4 "
         "runtime closes a cut turn (forked closers); fork at a turn boundary, or migrate "
         "the log to v4"),
        ({**header, "version": 1}, gapped, 1,
         "cannot fork a v1 ledger: v0/v1 recorded a fork only as the header's seedLength; "
         "the runtime migrates an older log to v4 before forking it"),
    ]
    for parent, events, seq, message in cases:
        with pytest.raises(ForkRefused) as refused:
            fork_seed(parent, events, seq, session_id="c", created_at=1)
        assert str(refused.value) == message


@pytest.mark.parametrize(
    ("blocks", "seq", "position"),
    [
        ([[0, 1], [2, 3]], 2, 2),  # dense: position = seq
        ([[5, 6], [7]], 6, 1),  # numbered from 5: no position 6, the first event with it
        ([[0, 2], [2, 3]], 2, 2),  # seq 2 twice: the dense position wins
        ([[0, 3, 1, 1]], 1, 2),  # position 1 holds 3: the first event with seq 1
        ([[0, 5], [9], [1]], 1, 3),  # ... even when it comes after that position
        ([[0, 1], [2]], 3, None),
        ([[0, 1], [2]], -1, None),
        ([[0, 1], [2]], "1", None),
        ([[0, 1], [2]], True, None),
        ([], 0, None),
    ],
)
def test_position_of_seq(blocks: list[list[Any]], seq: Any, position: int | None) -> None:
    assert position_of_seq(blocks, seq) == position


def test_position_of_seq_reads_no_further_than_it_must() -> None:
    read: list[list[int]] = []

    def blocks() -> Any:
        for block in ([0, 1], [2, 3], [4, 5], [6]):
            read.append(block)
            yield block

    assert position_of_seq(blocks(), 2) == 2
    assert read == [[0, 1], [2, 3]]
