"""The notebook explorer: session, policy and crash point drive a timeline, event details and the
projected next model request."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import plotly.graph_objects as go

from ledgerviz.display.fragments import fragment_style
from ledgerviz.plot import timeline_figure
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES, Analysis, Policy
from ledgerviz.widgets.context_pane import context_html
from ledgerviz.widgets.details import event_choices, event_details_html, index_of_seq
from ledgerviz.widgets.snapshot import snapshot_html
from ledgerviz.widgets.summary import crash_summary

if TYPE_CHECKING:
    from plotly.callbacks import Points

    from ledgerviz.api import Ledger

HALF = {"width": "50%", "min_width": "320px"}
FIGURE_CLASS = "lv-figure"
"""The class the figure widget carries, so the stylesheet stretches it to the output width."""


class Explorer(widgets.VBox):
    """An ipywidgets box exploring one session of a ledger under each recovery policy.

    Controls: ``session`` (Dropdown), ``policy`` (ToggleButtons), ``crash_point`` (IntSlider:
    keep the first n events, as if the process died there), ``event`` (Dropdown of event
    indices; clicking a point of the timeline selects the event at that seq). Outputs:
    ``summary`` (Label), ``figure`` (plotly FigureWidget, replaced on every change),
    ``details`` and ``context`` (HTML panes, every ledger string escaped).
    """

    def __init__(self, ledger: Ledger, *, session: str | None = None,
                 policy: Policy = DEFAULT_POLICY) -> None:
        keys = list(ledger.keys)
        if not keys:
            raise ValueError("the ledger holds no sessions to explore")
        if session is not None and session not in keys:
            raise ValueError(f"unknown session {session!r}; the ledger holds {keys!r}")
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES!r}, got {policy!r}")
        self.ledger = ledger
        self._syncing = False
        self._cut: tuple[tuple[str, int], Ledger] | None = None
        self._analysis: Analysis | None = None
        key = session if session is not None else keys[0]
        total = self._event_count(key)
        self.session = widgets.Dropdown(options=keys, value=key, description="Session")
        self.policy = widgets.ToggleButtons(options=list(POLICIES), value=policy,
                                            description="Policy")
        self.crash_point = widgets.IntSlider(
            value=total, min=min(1, total), max=total, description="Crash after",
            continuous_update=False, layout=widgets.Layout(width="70%"),
            style={"description_width": "initial"},
        )
        self.summary = widgets.Label()
        self.figure = go.FigureWidget()
        self.figure.add_class(FIGURE_CLASS)
        self.event = widgets.Dropdown(description="Event", layout=widgets.Layout(width="95%"))
        self.details = widgets.HTML()
        self.context = widgets.HTML()
        super().__init__(children=[
            widgets.HTML(fragment_style()),
            widgets.HBox([self.session, self.policy]),
            self.crash_point,
            self.summary,
            self.figure,
            widgets.HBox([widgets.VBox([self.event, self.details], layout=HALF),
                          widgets.VBox([self.context], layout=HALF)]),
        ])
        self.session.observe(self._on_session, names="value")
        self.policy.observe(self._on_view, names="value")
        self.crash_point.observe(self._on_view, names="value")
        self.event.observe(self._on_event, names="value")
        self._render()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """Return the widget's display plus a static snapshot of its view as ``text/html``."""
        bundle = super()._repr_mimebundle_(**kwargs)
        bundle["text/html"] = snapshot_html(self)
        return bundle

    @property
    def analysis(self) -> Analysis:
        """Return the Analysis shown now (chosen session, policy and crash point)."""
        if self._analysis is None:
            raise RuntimeError("the explorer has not rendered yet")
        return self._analysis

    def select_seq(self, seq: int) -> bool:
        """Select the event with ``seq`` in the event picker; return whether one exists."""
        index = index_of_seq(self.analysis, seq)
        if index is None:
            return False
        self.event.value = index
        return True

    def _event_count(self, key: str) -> int:
        return next(len(log.events) for log in self.ledger.sessions if log.key == key)

    def _view(self) -> Ledger:
        """Return the one-session ledger cut at the crash point, cached while session and cut
        stay the same (so each policy's recovery is computed once per cut)."""
        wanted = (self.session.value, self.crash_point.value)
        if self._cut is None or self._cut[0] != wanted:
            self._cut = (wanted, self.ledger.cut(wanted[1], session=wanted[0]))
        return self._cut[1]

    def _on_session(self, _change: dict[str, Any]) -> None:
        total = self._event_count(self.session.value)
        self._syncing = True
        try:
            self.crash_point.min = 0
            self.crash_point.max = total
            self.crash_point.min = min(1, total)
            self.crash_point.value = total
        finally:
            self._syncing = False
        self._analysis = None  # a selection never carries over to another session
        self._render()

    def _on_view(self, _change: dict[str, Any]) -> None:
        if not self._syncing:
            self._render()

    def _on_event(self, change: dict[str, Any]) -> None:
        if not self._syncing and change["new"] is not None:
            self.details.value = event_details_html(self.analysis, change["new"])

    def _on_click(self, _trace: Any, points: Points, _state: Any) -> None:
        for x in points.xs:
            if isinstance(x, int | float) and math.isfinite(x) and self.select_seq(round(x)):
                return

    def _render(self) -> None:
        key, policy = self.session.value, self.policy.value
        view = self._view()
        recovery = view.recovery(policy)
        analysis = recovery.analyses[key]
        kept = self._still_shown(analysis)
        self._analysis = analysis
        self.summary.value = crash_summary(analysis, self.crash_point.value,
                                           self._event_count(key))
        self._show_figure(timeline_figure(recovery.frames, session=key, policy=policy,
                                          fork_points=analysis.fork_points, axis="order",
                                          name_session=False))
        self._show_events(analysis, kept)
        self.context.value = context_html(view.context(policy, session=key))

    def _show_figure(self, figure: go.Figure) -> None:
        """Put a FigureWidget of ``figure`` in the figure slot; clicks on it select events."""
        old = self.figure
        self.figure = go.FigureWidget(figure)
        self.figure.add_class(FIGURE_CLASS)
        for trace in self.figure.data:
            trace.on_click(self._on_click)
        self.children = tuple(self.figure if child is old else child for child in self.children)
        old.close()

    def _still_shown(self, analysis: Analysis) -> int | None:
        """Return the index in ``analysis`` of the event selected so far, if it is still there.

        An event stays selected when an event with its seq, type and in-file flag remains
        (a closer computed at a cut may reuse the seq of a recorded event that was cut away).
        """
        old, index = self._analysis, self.event.value
        if old is None or index is None or old.seqs[index] is None:
            return None
        new = index_of_seq(analysis, old.seqs[index])
        if new is None or analysis.recorded[new] != old.recorded[index]:
            return None
        return new if analysis.events[new].get("type") == old.events[index].get("type") else None

    def _show_events(self, analysis: Analysis, index: int | None) -> None:
        """Fill the event picker and select ``index``, or else the crash-point event."""
        if index is None:
            recorded = [i for i, in_file in enumerate(analysis.recorded) if in_file]
            index = recorded[-1] if recorded else None
        self._syncing = True
        try:
            self.event.options = event_choices(analysis)
            self.event.value = index
        finally:
            self._syncing = False
        self.details.value = (
            "<i>no event</i>" if index is None else event_details_html(analysis, index)
        )


def explore(ledger: Ledger, *, session: str | None = None,
            policy: Policy = "synthesize") -> Explorer:
    """Return an :class:`Explorer` over ``ledger``, opened on ``session`` (default: the first)."""
    return Explorer(ledger, session=session, policy=policy)
