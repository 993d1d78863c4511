"""Regenerating the example ledgers bundled in ``ledgerviz/examples`` and their catalogue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ledgerviz.simulate.scenarios import get_scenario, write_scenario

EXAMPLE_SEED = 7
EXAMPLE_SCENARIOS = (
    "clean",
    "tool-error",
    "provider-error",
    "cancel",
    "scheduler-failure",
    "crash-before-dispatch",
    "crash-mid-dispatch",
    "torn-write",
    "resume-synthesize",
    "resume-fork",
    "subagent",
    "compaction",
)


def bundled_examples_dir() -> Path:
    """Return the source folder of the bundled examples (``ledgerviz/examples``)."""
    return Path(__file__).resolve().parent.parent / "examples"


def regenerate_examples(target: Path | None = None) -> list[Path]:
    """Write every example ledger and ``catalog.json`` into ``target``; return the written files.

    ``target`` defaults to the package's own examples folder.
    """
    folder = Path(target) if target is not None else bundled_examples_dir()
    folder.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    written: list[Path] = []
    for name in EXAMPLE_SCENARIOS:
        scenario = get_scenario(name)
        relative = name if scenario.multi_session else f"{name}.jsonl"
        files = write_scenario(name, folder / relative, seed=EXAMPLE_SEED)
        written += files
        entries.append(
            {
                "name": name,
                "path": relative,
                "files": [file.relative_to(folder).as_posix() for file in files],
                "scenario": name,
                "seed": EXAMPLE_SEED,
                "turns": scenario.default_turns,
                "shows": scenario.description,
            }
        )
    catalog_file = folder / "catalog.json"
    text = json.dumps({"examples": entries}, indent=2, ensure_ascii=False) + "\n"
    catalog_file.write_text(text, encoding="utf-8")
    return [*written, catalog_file]


if __name__ == "__main__":
    for path in regenerate_examples():
        print(path)
