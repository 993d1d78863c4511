"""ledgerviz: agent session ledgers as DataFrames, a recovery engine, and timelines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Ledger",
    "LedgerError",
    "SessionDiff",
    "__version__",
    "diff",
    "diff_timeline",
    "explore",
    "load",
    "timeline",
    "to_otlp",
    "write_report",
]

if TYPE_CHECKING:
    from ledgerviz.api import Ledger, load
    from ledgerviz.compare import SessionDiff, diff
    from ledgerviz.export.otlp import to_otlp
    from ledgerviz.ledger import LedgerError
    from ledgerviz.plot import diff_timeline, timeline
    from ledgerviz.report import write_report
    from ledgerviz.widgets import explore

_LAZY = {
    "Ledger": "ledgerviz.api",
    "load": "ledgerviz.api",
    "LedgerError": "ledgerviz.ledger",
    "SessionDiff": "ledgerviz.compare",
    "diff": "ledgerviz.compare",
    "timeline": "ledgerviz.plot",
    "diff_timeline": "ledgerviz.plot",
    "explore": "ledgerviz.widgets",
    "to_otlp": "ledgerviz.export.otlp",
    "write_report": "ledgerviz.report",
}


def __dir__() -> list[str]:
    """List the public names, the lazy ones included (tab completion shows no others)."""
    return sorted(__all__)


def __getattr__(name: str) -> Any:
    """Import the heavy layers (pandas, plotly, ipywidgets) only when they are used."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ledgerviz' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
