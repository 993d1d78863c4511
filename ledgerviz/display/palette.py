"""The colours every ledgerviz display shares (figures, reports, reprs), with no dependency."""

from __future__ import annotations

from typing import Final

STATUS_COLOR: Final = {
    "ok": "#2f9e5b",
    "error": "#d64545",
    "outcome_unknown": "#f08c00",
    "not_started": "#6c7fa3",
}

FONT: Final = "Inter, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
