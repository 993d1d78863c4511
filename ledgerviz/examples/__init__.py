"""Example ledgers bundled with ledgerviz, written by :mod:`ledgerviz.simulate`."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

CATALOG_FILE = "catalog.json"


def examples_dir() -> Path:
    """Return the folder that holds the bundled example ledgers and their catalogue."""
    return Path(str(resources.files(__name__)))


def catalog() -> list[dict[str, Any]]:
    """Return the catalogue entries: name, path, files, scenario, seed, turns, shows."""
    text = (resources.files(__name__) / CATALOG_FILE).read_text(encoding="utf-8")
    return json.loads(text)["examples"]


def example_path(name: str) -> Path:
    """Return the ledger file (or, for a multi-session example, the folder) of example ``name``."""
    entries = {entry["name"]: entry for entry in catalog()}
    if name not in entries:
        raise KeyError(f"no example named {name!r}; examples: {', '.join(entries)}")
    return examples_dir() / entries[name]["path"]


def example_paths() -> list[Path]:
    """Return every example's file or folder, in catalogue order."""
    return [examples_dir() / entry["path"] for entry in catalog()]
