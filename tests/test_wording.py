"""Counted nouns: singular for exactly one, plural otherwise."""

from ledgerviz.wording import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "turn") == "1 turn"
    assert counted(1, "tool call") == "1 tool call"
    assert counted(0, "event") == "0 events"
    assert counted(2, "turn") == "2 turns"
    assert counted(11, "tool call") == "11 tool calls"
