"""The bundled example ledgers are exactly what the simulator writes today."""

import json
from pathlib import Path

import pytest

from ledgerviz.examples import catalog, example_path, example_paths, examples_dir
from ledgerviz.ledger import read_sessions
from ledgerviz.simulate import SCENARIOS
from ledgerviz.simulate.examples import regenerate_examples


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.suffix in {".jsonl", ".json"}
    }


def test_regenerating_the_examples_changes_no_byte(tmp_path: Path) -> None:
    regenerate_examples(tmp_path)
    fresh, bundled = _tree(tmp_path), _tree(examples_dir())
    assert sorted(fresh) == sorted(bundled)
    changed = [name for name in fresh if fresh[name] != bundled[name]]
    assert changed == [], "run: python -m ledgerviz.simulate.examples"


def test_catalog_entries_name_existing_small_files() -> None:
    entries = catalog()
    assert {e["scenario"] for e in entries} == set(SCENARIOS) - {"large"}
    for entry in entries:
        assert entry["shows"] == SCENARIOS[entry["scenario"]].description
        for name in entry["files"]:
            size = (examples_dir() / name).stat().st_size
            assert 1_000 < size < 20_000, (name, size)
    stored = json.loads((examples_dir() / "catalog.json").read_text(encoding="utf-8"))
    assert stored["examples"] == entries


def test_accessors_find_files_and_folders() -> None:
    assert example_path("clean") == examples_dir() / "clean.jsonl"
    assert example_path("subagent").is_dir()
    assert example_paths() == [example_path(e["name"]) for e in catalog()]
    sessions = read_sessions(example_path("subagent"))
    assert sorted(s.header.get("origin", "root") for s in sessions) == ["root", "subagent"]
    with pytest.raises(KeyError, match="no example named 'nope'"):
        example_path("nope")
