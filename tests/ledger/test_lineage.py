"""``ledger.lineage``: inherited prefix and kind of link, from header and seed markers (§5, §11)."""

from __future__ import annotations

from ledgerviz.ledger.lineage import RELATIONS, Lineage, inherited_count, lineage_of

FORK_CUT = (4, {"inherited": True})
RESTART = (9, {})


def test_the_last_inherited_marker_is_the_cut() -> None:
    header = {"version": 4, "isSeeded": True}
    assert inherited_count(header, 4, [(2, {"inherited": True}), FORK_CUT, RESTART]) == 4
    assert inherited_count(header, 4, [RESTART]) == 0
    assert inherited_count({"version": 1, "seedLength": 6}, 1, [FORK_CUT]) == 6  # v0/v1
    assert inherited_count({"version": 0}, 0, []) == 0


def test_relations() -> None:
    assert RELATIONS == ("root", "fork", "subagent", "forked-subagent")
    assert lineage_of({"id": "a"}, 0) == Lineage(None, "root", False, 0, None)
    fork = {"id": "b", "parentSession": "a", "isSeeded": True, "delegationDepth": 0}
    assert lineage_of(fork, 4) == Lineage("a", "fork", True, 4, 3)
    spawned = {"id": "c", "parentSession": "a", "origin": "subagent", "delegationDepth": 1}
    assert lineage_of(spawned, 0) == Lineage("a", "subagent", False, 0, None)
    assert lineage_of({**spawned, "isSeeded": True}, 169).relation == "forked-subagent"
    assert lineage_of({"id": "d"}, 0, catalog_parent="a", has_descriptor=True).parent == "a"
