"""docs/mutation-survivors.md names only functions that exist, or says where they went."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = (ROOT / "docs" / "mutation-survivors.md").read_text(encoding="utf-8")
MOVED_TABLE = RECORD.partition("| named here | now |")[2].partition("\n\n")[0]
"""The table saying where the functions went."""

MUTANT = re.compile(r"`([a-z_]+(?:\.[a-z_]+)*)\.x(?:_|\.)([A-Za-z0-9_.]+?)__mutmut_\d+`")
"""A mutant's name: module, then ``x_`` and a function or ``x.`` and a class's method."""
MOVED = re.compile(r"^\| `([A-Za-z0-9_.]+)` \| (?:`([A-Za-z0-9_.]+)`|removed)", re.MULTILINE)
"""A row of the "Where the functions named here are now" table: old name, new or removed."""


def defined(name: str) -> bool:
    """Return whether dotted ``name`` (module, then function or class and method) is defined
    in the package's source."""
    parts = name.split(".")
    for split in range(len(parts) - 1, 0, -1):
        path = ROOT / "ledgerviz" / Path(*parts[:split]).with_suffix(".py")
        if path.exists():
            break
    else:
        return False
    scope = ast.parse(path.read_text(encoding="utf-8")).body
    for part in parts[split:]:
        found = [node for node in scope if isinstance(
            node, ast.FunctionDef | ast.ClassDef) and node.name == part]
        if not found:
            return False
        scope = found[0].body
    return True


def test_every_function_a_mutant_names_exists_or_is_said_to_have_moved() -> None:
    named = {f"{module}.{function}" for module, function in MUTANT.findall(RECORD)}
    moved = {old: new for old, new in MOVED.findall(MOVED_TABLE)}
    assert len(named) > 50 and len(moved) >= 10
    assert sorted(name for name in named if not defined(name) and name not in moved) == []
    assert sorted(new for new in moved.values() if new and not defined(new)) == []
    assert sorted(old for old in moved if defined(old)) == []
