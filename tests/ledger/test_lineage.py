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


def test_seed_length_counts_only_in_v0_and_v1() -> None:
    header = {"seedLength": 3}
    assert [inherited_count(header, v, []) for v in (None, 0, 1, 2, 3, 4)] == [3, 3, 3, 0, 0, 0]
    assert inherited_count({"seedLength": 1}, 1, []) == 1
    assert inherited_count({"seedLength": -2}, 1, []) == 0
    assert inherited_count({"seedLength": True}, 1, []) == 0
    assert inherited_count({"seedLength": "5"}, 0, []) == 0


def test_only_an_inherited_true_marker_with_an_integer_seq_counts() -> None:
    assert inherited_count({}, 4, [(3, {"inherited": 1})]) == 0
    assert inherited_count({}, 4, [(3, {"inherited": "true"})]) == 0
    assert inherited_count({}, 4, [("3", {"inherited": True})]) == 0
    assert inherited_count({}, 4, [(3, [True])]) == 0
    assert inherited_count({}, 2, [(3, {"inherited": True})]) == 3


def test_each_sign_of_a_seed_alone_makes_a_fork() -> None:
    assert lineage_of({"isSeeded": True}, 0) == Lineage(None, "fork", True, 0, None)
    assert lineage_of({"isSeeded": "yes"}, 0) == Lineage(None, "root", False, 0, None)
    assert lineage_of({}, 1) == Lineage(None, "fork", True, 1, 0)
    assert lineage_of({"parentSession": "p"}, 0) == Lineage("p", "fork", False, 0, None)
    assert lineage_of({}, 0, catalog_parent="c") == Lineage("c", "fork", False, 0, None)
    assert lineage_of({"parentSession": "p"}, 0, catalog_parent="c").parent == "p"


def test_each_sign_of_a_subagent_alone_makes_a_subagent() -> None:
    assert lineage_of({"origin": "subagent"}, 0).relation == "subagent"
    assert lineage_of({"origin": "fork"}, 0).relation == "root"
    assert lineage_of({}, 0, has_descriptor=True).relation == "subagent"
    assert lineage_of({"delegationDepth": 1}, 0).relation == "subagent"
    assert lineage_of({"delegationDepth": 0}, 0).relation == "root"
    assert lineage_of({"delegationDepth": "2"}, 0).relation == "root"
    assert lineage_of({"delegationDepth": 1}, 2) == Lineage(None, "forked-subagent", True, 2, 1)
