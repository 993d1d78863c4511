"""Fixtures that write small ledger files for reader tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from ledger_lines import Line, encode


@pytest.fixture
def write_ledger(tmp_path: Path) -> Callable[..., Path]:
    """Return a function writing ``lines`` (header first) to a fresh file and returning its path."""
    counter = iter(range(1_000_000))

    def write(lines: list[Line], *, tail: bytes = b"", name: str | None = None) -> Path:
        path = tmp_path / (name or f"ledger-{next(counter)}.jsonl")
        path.write_bytes(encode(lines) + tail)
        return path

    return write
