"""Hook the HTML displays of the lower layers' objects into IPython.

``SessionLog`` (ledger layer), ``Analysis`` (recovery layer) and ``Frames`` keep plain-text
reprs of their own, since those layers never import this one; in a running IPython their
HTML display is registered here instead (``Ledger``, ``RecoveryView`` and ``Context`` carry
``_repr_html_`` themselves).
"""

from __future__ import annotations

import sys

from ledgerviz.display.reprs import analysis_html, frames_html, session_html
from ledgerviz.frames import Frames
from ledgerviz.ledger import SessionLog
from ledgerviz.recovery.analysis import Analysis

HTML_DISPLAYS = ((SessionLog, session_html), (Analysis, analysis_html), (Frames, frames_html))


def register_formatters(shell: object | None = None) -> bool:
    """Register the HTML displays with ``shell`` (default: the running IPython, if any);
    return whether a shell was found. IPython is never imported here."""
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return False
    formatter = shell.display_formatter.formatters["text/html"]  # type: ignore[attr-defined]
    for kind, render in HTML_DISPLAYS:
        formatter.for_type(kind, render)
    return True
