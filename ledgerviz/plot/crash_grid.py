"""The crash-point grid: one session cut after every event, each cut under every policy,
coloured by whether the providers accept the next request and labelled with what the policy
appends."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, NamedTuple

from ledgerviz.display.palette import FONT, STATUS_COLOR
from ledgerviz.html import plotly_text
from ledgerviz.plot.static import StaticFallbackFigure
from ledgerviz.recovery.analysis import POLICIES, Analysis, Policy
from ledgerviz.recovery.providers import PROVIDERS
from ledgerviz.wording import counted

if TYPE_CHECKING:
    from ledgerviz.api import Ledger

SHORT_CODE = {"TOOL_OUTCOME_UNKNOWN": "UNKNOWN", "TOOL_NOT_STARTED": "NOT_STARTED"}
VERDICT_COLOR = {"all": STATUS_COLOR["ok"], "some": STATUS_COLOR["outcome_unknown"],
                 "none": STATUS_COLOR["error"]}
ROW_HEIGHT = 26


class Cut(NamedTuple):
    """One crash point under one policy: what the policy appends, and who accepts the result."""

    kept: int
    last_event: str
    policy: Policy
    appended: str
    accepted_by: tuple[str, ...]

    @property
    def verdict(self) -> str:
        """Return ``all``, ``some`` or ``none``: how many providers accept the next request."""
        if len(self.accepted_by) == len(PROVIDERS):
            return "all"
        return "some" if self.accepted_by else "none"


def appended_text(analysis: Analysis) -> str:
    """Return the events a policy appends, results by their short code, runs counted."""
    start = len(analysis.events) - len(analysis.closers)
    labels = [SHORT_CODE.get(analysis.recovery_code[i] or "", str(analysis.events[i].get("type")))
              for i in range(start, len(analysis.events))]
    runs = [(label, len(list(group))) for label, group in itertools.groupby(labels)]
    return " ".join(label if count == 1 else f"{count}×{label}" for label, count in runs) or "—"


def crash_cuts(ledger: Ledger, session: str | int | None = None) -> list[Cut]:
    """Return every crash point (keep the first n events, n = 1 … all) under every policy."""
    log = ledger.session(0 if session is None else session).sessions[0]
    cuts = []
    for n in range(1, len(log.events) + 1):
        cut = ledger.cut(n, session=log.key)
        last = log.events[n - 1]
        for policy in POLICIES:
            context = cut.context(policy)
            cuts.append(Cut(n, f"{last.get('type')} (seq {last.get('seq')})", policy,
                            appended_text(cut.recovery(policy).analyses[log.key]),
                            tuple(p for p in PROVIDERS if context.valid[p])))
    return cuts


def crash_grid(ledger: Ledger, session: str | int | None = None) -> StaticFallbackFigure:
    """Return the crash-point × policy grid of one session: a cell per cut and policy,
    coloured by how many providers accept the next request, labelled with what is appended."""
    cuts = crash_cuts(ledger, session)
    rows = sorted({(c.kept, c.last_event) for c in cuts})
    labels = [f"{kept} · {plotly_text(last, 60)}" for kept, last in rows]
    column = {policy: i for i, policy in enumerate(POLICIES)}
    level = {verdict: i for i, verdict in enumerate(VERDICT_COLOR)}
    z = [[0.0] * len(POLICIES) for _ in rows]
    text = [[""] * len(POLICIES) for _ in rows]
    hover = [[""] * len(POLICIES) for _ in rows]
    for c in cuts:
        row, col = c.kept - 1, column[c.policy]
        z[row][col] = level[c.verdict]
        text[row][col] = plotly_text(c.appended, 48)
        hover[row][col] = (f"kept {counted(c.kept, 'event')} · {c.policy}<br>appends "
                           f"{plotly_text(c.appended)}<br>accepted by "
                           f"{', '.join(c.accepted_by) or 'no provider'}")
    steps = len(VERDICT_COLOR) - 1
    scale = [(i / steps, color) for i, color in enumerate(VERDICT_COLOR.values())]
    figure = StaticFallbackFigure(data=[{
        "type": "heatmap", "z": z, "x": list(POLICIES), "y": labels, "text": text,
        "texttemplate": "%{text}", "textfont": {"size": 11, "color": "#1f2933"},
        "customdata": hover,
        "hovertemplate": "%{customdata}<extra></extra>", "colorscale": scale, "zmin": 0,
        "zmax": steps, "showscale": False, "xgap": 2, "ygap": 2, "opacity": 0.55}])
    figure.update_layout(
        title={"text": "Every crash point under every policy<br><sup>cell: what the policy "
                       "appends · green: every provider accepts the next request, orange: "
                       "some, red: none</sup>",
               "x": 0.01},
        height=140 + ROW_HEIGHT * len(rows), template="plotly_white", autosize=True,
        font={"family": FONT, "size": 12}, margin={"l": 260, "r": 20, "t": 80, "b": 40},
    )
    figure.update_yaxes(categoryorder="array", categoryarray=labels, autorange="reversed",
                        title_text="crash after event (kept · last event)", fixedrange=True)
    figure.update_xaxes(categoryorder="array", categoryarray=list(POLICIES), side="top",
                        fixedrange=True)
    return figure
