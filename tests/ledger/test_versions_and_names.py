"""The surface types of each format version (format §13) and file names made valid Unicode."""

from __future__ import annotations

import pytest

from ledgerviz.ledger.sources import valid_unicode
from ledgerviz.ledger.vocabulary import surface_types

MESSAGES = {"user/message", "assistant/message", "tool/result"}


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (None, MESSAGES),  # pre-release
        (0, MESSAGES),
        (1, MESSAGES),
        (2, MESSAGES),
        (3, MESSAGES | {"system/message"}),  # the system prompt became surface node 0
        (4, MESSAGES | {"system/message", "developer/message"}),
    ],
)
def test_surface_types_by_version(version: int | None, expected: set[str]) -> None:
    assert surface_types(version) == expected


def test_file_names_become_valid_unicode() -> None:
    assert valid_unicode("plain é.jsonl") == "plain é.jsonl"
    # the byte 0xE9 of a Latin-1 name, held by the file system decoder as U+DCE9
    assert valid_unicode("caf\udce9.jsonl") == "caf\\xe9.jsonl"
    # a lone surrogate no file name produces: its three bytes ED A0 80, none valid UTF-8
    assert valid_unicode("x\ud800") == "x\\xed\\xa0\\x80"
