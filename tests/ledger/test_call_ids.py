"""``CallIds``, the compact set of requested call ids a streamed read keeps: it answers
exactly as a Python ``set`` of the same ids (the reference), however the ids look."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerviz.ledger.call_ids import CallIds

ODD_IDS = ["", "a", "ab", "b", "call-1-0", "call-1-00", "é", "\ud800", "\ud800\udc00", "😀",
           "a\x00b", "a" * 300]
"""Prefixes of each other, non-ASCII, a lone surrogate and a pair written as two, a NUL,
a long id: ids that differ only in bytes the table must compare."""


def test_odd_ids_are_held_exactly() -> None:
    ids = CallIds(ODD_IDS[:6])
    assert len(ids) == 6
    assert [call_id in ids for call_id in ODD_IDS] == [True] * 6 + [False] * 6
    assert not ids.isdisjoint(["zz", "ab"]) and ids.isdisjoint(["zz", "call-1-000", "\ud800"])
    ids.update(["ab", "\ud800", "\ud800", "a\x00b"])  # one held, one twice
    assert len(ids) == 8
    assert {c for c in ODD_IDS if c in ids} == {*ODD_IDS[:6], "\ud800", "a\x00b"}
    assert 5 not in ids and None not in ids  # only strings are held


def test_many_ids_grow_the_table_and_stay_found() -> None:
    held = [f"call-{n}-{n % 3}" for n in range(20_000)]
    ids = CallIds()
    for start in range(0, len(held), 700):  # as a reader adds them, a block at a time
        block = held[start:start + 700]
        assert ids.isdisjoint(block)
        ids.update(block)
    assert len(ids) == 20_000
    assert all(call_id in ids for call_id in held)
    assert not any(f"{call_id}x" in ids or f"x{call_id}" in ids for call_id in held)


@settings(max_examples=200, deadline=None)
@given(batches=st.lists(st.lists(st.text(max_size=6), max_size=8), max_size=30),
       probes=st.lists(st.text(max_size=6), max_size=20))
def test_it_answers_as_a_set_does(batches: list[list[str]], probes: list[str]) -> None:
    ids, reference = CallIds(), set()
    for batch in batches:
        assert ids.isdisjoint(batch) == reference.isdisjoint(batch)
        ids.update(batch)
        reference.update(batch)
        assert len(ids) == len(reference)
    assert [p in ids for p in probes] == [p in reference for p in probes]
    assert all(call_id in ids for call_id in reference)
