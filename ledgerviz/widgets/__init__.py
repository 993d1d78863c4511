"""The notebook explorer (ipywidgets): ``explore(ledger)`` returns an :class:`Explorer`."""

from ledgerviz.widgets.explorer import Explorer, explore

__all__ = ["Explorer", "explore"]
