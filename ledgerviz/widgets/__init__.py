"""The notebook explorer (ipywidgets): ``explore(ledger)`` returns an :class:`Explorer`."""

from ledgerviz.widgets.diff_explorer import DiffExplorer
from ledgerviz.widgets.explorer import Explorer, explore

__all__ = ["DiffExplorer", "Explorer", "explore"]
