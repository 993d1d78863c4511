"""Two sessions aligned by what happened: where they part and what differs after that.

``compare.align`` and ``compare.signatures`` use the standard library only (a runtime can
import them alone); the names below are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["KINDS", "KIND_WORDS", "DiffSide", "Divergence", "SessionDiff", "diff"]

if TYPE_CHECKING:
    from ledgerviz.compare.api import diff
    from ledgerviz.compare.session_diff import (
        KIND_WORDS,
        KINDS,
        DiffSide,
        Divergence,
        SessionDiff,
    )

_TYPES = ("KINDS", "KIND_WORDS", "DiffSide", "Divergence", "SessionDiff")
_LAZY = {"diff": "ledgerviz.compare.api",
         **dict.fromkeys(_TYPES, "ledgerviz.compare.session_diff")}


def __getattr__(name: str) -> Any:
    """Import the diff and its types (which read ledgers) only when they are used."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ledgerviz.compare' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
