"""Colours, lane names and legend labels shared by the plotly figures."""

from __future__ import annotations

from typing import Final

from ledgerviz.display.palette import FONT as FONT
from ledgerviz.display.palette import STATUS_COLOR as STATUS_COLOR
from ledgerviz.recovery.vocab import CALL_STATUSES

STATUS_ORDER: Final = CALL_STATUSES

STATUS_LABEL: Final = {
    "ok": "call ok: result recorded",
    "error": "call failed: error result",
    "outcome_unknown": "outcome unknown: dispatched, no result (may have run)",
    "not_started": "not started: requested, never dispatched",
}

STATUS_LEGEND: Final = {
    "ok": "call ok",
    "error": "call failed",
    "outcome_unknown": "outcome unknown (no result)",
    "not_started": "not started",
}
"""Legend names of the call statuses: short, so a legend entry is never cut (hover says more)."""

LEGEND_TURN_DONE: Final = "turn completed"
LEGEND_TURN_OPEN: Final = "turn did not complete"
LEGEND_EVENT: Final = "event the model sees"
LEGEND_LOG_EVENT: Final = "log-only event"
LEGEND_SYNTHETIC: Final = "added by recovery"
LEGEND_ABANDONED: Final = "abandoned event"
LEGEND_FORK: Final = "fork point"

TURN_COLOR: Final = "#9fb3c8"
TURN_UNFINISHED_COLOR: Final = "#e8a3a3"
STEP_COLOR: Final = "#5b7a99"
EVENT_COLOR: Final = "#3c6e9f"
LOG_EVENT_COLOR: Final = "#b4bcc6"
SYNTHETIC_COLOR: Final = "#8a4fbf"
ABANDONED_COLOR: Final = "#9a8c98"
FORK_COLOR: Final = "#c2255c"
BAND_FILL: Final = "rgba(120, 144, 170, 0.08)"
ABANDONED_FILL: Final = "rgba(194, 37, 92, 0.08)"

LANE_TURNS: Final = "turns"
LANE_STEPS: Final = "steps"
LANE_EVENTS: Final = "events"
LANE_CALLS: Final = "tool calls"
LANE_ABANDONED_EVENTS: Final = "abandoned events"
LANE_ABANDONED_CALLS: Final = "abandoned calls"

DIFF_COLOR: Final = {
    "same": "#b4bcc6",
    "changed": "#e8590c",
    "a_only": "#c2255c",
    "b_only": "#1971c2",
}
"""Colours of the alignment kinds in a diff timeline."""

DIFF_LEGEND: Final = {
    "same": "equal events",
    "changed": "changed pair",
    "a_only": "only in a",
    "b_only": "only in b",
}
UNMATCHED_FILL: Final = "rgba(232, 89, 12, 0.08)"
