from collections.abc import Callable
from pathlib import Path

import pytest

from ledgerviz.simulate import SCENARIOS


def _contents(files: list[Path]) -> list[bytes]:
    return [file.read_bytes() for file in files]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_same_seed_gives_identical_bytes(name: str, written: Callable, tmp_path: Path) -> None:
    from ledgerviz.simulate import write_scenario

    first = written(name, 11)
    target = tmp_path / ("out" if SCENARIOS[name].multi_session else "out.jsonl")
    again = write_scenario(name, target, seed=11, turns=40 if name == "large" else None)
    assert [f.name for f in again] == [f.name for f in first]
    assert _contents(again) == _contents(first)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_different_seed_gives_different_bytes(name: str, written: Callable) -> None:
    assert _contents(written(name, 11)) != _contents(written(name, 12))
