"""Two sessions aligned by what happened: where they part and what differs after that.

``compare.align`` and ``compare.signatures`` use the standard library only; the
DataFrames of a :class:`SessionDiff` are built on demand.
"""

from ledgerviz.compare.diff import diff
from ledgerviz.compare.session_diff import KINDS, DiffSide, Divergence, SessionDiff

__all__ = ["KINDS", "DiffSide", "Divergence", "SessionDiff", "diff"]
