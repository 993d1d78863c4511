"""Scenario ledgers written once per test session."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ledgerviz.simulate import SCENARIOS, write_scenario

SMALL_TURNS = {"large": 40}


def read_ledger(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return the header and committed events of a ledger (a torn last line is left out)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    complete = lines[:-1]
    return json.loads(complete[0]), [json.loads(line) for line in complete[1:]]


@pytest.fixture(scope="session")
def written(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., list[Path]]:
    """Return a function writing (once) a scenario for a seed and returning its files."""
    cache: dict[tuple[str, int], list[Path]] = {}

    def write(name: str, seed: int = 7) -> list[Path]:
        if (name, seed) not in cache:
            folder = tmp_path_factory.mktemp(f"{name}-{seed}")
            target = folder / ("out" if SCENARIOS[name].multi_session else "out.jsonl")
            cache[name, seed] = write_scenario(name, target, seed=seed, turns=SMALL_TURNS.get(name))
        return cache[name, seed]

    return write
