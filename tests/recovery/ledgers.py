"""Loaders for the recovery tests: the conformance vectors and the dsh fixtures."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data"
CONFORMANCE = DATA / "conformance"
DSH = DATA / "dsh"


@cache
def conformance_input(name: str) -> tuple[dict[str, Any], tuple[dict[str, Any], ...]]:
    """Return (header, events) of one conformance input file, parsed once."""
    lines = (CONFORMANCE / "inputs" / name).read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), tuple(json.loads(line) for line in lines[1:])


def conformance_cases() -> list[dict[str, Any]]:
    """Return every case of closers.jsonl."""
    with (CONFORMANCE / "closers.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def read_ledger(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return (header, events) of a small JSONL ledger (test helper, no validation)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:] if line]


def dsh_fixture(fragment: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return (header, events) of the single dsh fixture whose name contains ``fragment``."""
    (path,) = [p for p in DSH.glob("*.jsonl") if fragment in p.name]
    return read_ledger(path)
