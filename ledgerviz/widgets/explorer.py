"""The notebook explorer: session, policy and crash point drive a timeline, event details and the
projected next model request."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import pandas as pd

from ledgerviz.api import Ledger
from ledgerviz.compare.session_diff import SessionDiff
from ledgerviz.display.fragments import fragment_style
from ledgerviz.html import visible_bidi
from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.plot.timeline import fork_story_spec, timeline_spec
from ledgerviz.recovery import ForkRefused
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES, Analysis, Policy
from ledgerviz.widgets.context_pane import context_html
from ledgerviz.widgets.details import event_choices, event_details_html, index_of_seq
from ledgerviz.widgets.diff_explorer import DiffExplorer
from ledgerviz.widgets.figure_display import FitWidth, sync_figure_state
from ledgerviz.widgets.figure_update import FigureUpdater
from ledgerviz.widgets.live_figure import LiveFigure
from ledgerviz.widgets.snapshot import snapshot_html
from ledgerviz.widgets.summary import crash_summary

if TYPE_CHECKING:
    from plotly.callbacks import Points


HALF = {"width": "50%", "min_width": "320px"}
FIGURE_CLASS = "lv-figure"
"""The class the figure widget carries, so the stylesheet stretches it to the output width."""
EXPLORER_CLASS = "lv-explorer"
"""The class of the explorer's box, by which a page (or a browser test) finds it."""
CUTS_KEPT = 16
DETAIL_LIMIT = 2_000
PICKER_WINDOW = 400


class Explorer(widgets.VBox):
    """An ipywidgets box exploring one session of a ledger under each recovery policy.

    Controls: ``session`` (Dropdown), ``policy`` (ToggleButtons), ``crash_point`` (IntSlider:
    keep the first n events, as if the process died there), ``event`` (Dropdown of event
    indices, up to :data:`PICKER_WINDOW` around the selection; ``find`` jumps to a seq, and
    clicking a point of the timeline selects the event at that seq). Outputs: ``summary``
    (Label), ``figure`` (one plotly FigureWidget, updated in place with only what changed),
    ``details`` and ``context`` (HTML panes, every ledger string escaped).

    The recovery of each (crash point, policy) is computed once; the last
    :data:`CUTS_KEPT` cuts are kept.
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
        self._cuts: OrderedDict[tuple[str, int], Ledger] = OrderedDict()
        self._contexts: dict[tuple[str, int, str], str] = {}
        self._stories: dict[tuple[str, int], Ledger | None] = {}
        self._analysis: Analysis | None = None
        self._picker_range = range(0)
        key = session if session is not None else keys[0]
        total = self._event_count(key)
        self.session = widgets.Dropdown(options=[(visible_bidi(k), k) for k in keys], value=key,
                                        description="Session")
        self.policy = widgets.ToggleButtons(options=list(POLICIES), value=policy,
                                            description="Policy",
                                            style={"description_width": "initial"})
        self.crash_point = widgets.IntSlider(
            value=total, min=min(1, total), max=total, description="Crash after",
            continuous_update=False, layout=widgets.Layout(width="70%"),
            style={"description_width": "initial"},
        )
        self.summary = widgets.Label()
        self.summary.add_class("lv-summary")
        # the timeline names its template: plotly's default would be built (about 30 ms
        # at first) only to be replaced
        self.figure = LiveFigure(layout={"template": {}})
        self.figure.add_class(FIGURE_CLASS)
        self._updater = FigureUpdater(self.figure, self._on_click)
        self.event = widgets.Dropdown(description="Event", layout=widgets.Layout(width="95%"))
        self.find = widgets.Text(description="Go to seq", placeholder="seq, then Enter",
                                 continuous_update=False)
        self.details = widgets.HTML()
        self.context = widgets.HTML()
        super().__init__(children=[
            widgets.HTML(fragment_style()),
            widgets.HBox([self.session, self.policy]),
            self.crash_point,
            self.summary,
            self.figure,
            FitWidth(self.figure),
            widgets.HBox([widgets.VBox([self.find, self.event, self.details], layout=HALF),
                          widgets.VBox([self.context], layout=HALF)]),
        ])
        self.add_class(EXPLORER_CLASS)
        self.session.observe(self._on_session, names="value")
        self.policy.observe(self._on_view, names="value")
        self.crash_point.observe(self._on_view, names="value")
        self.event.observe(self._on_event, names="value")
        self.find.observe(self._on_find, names="value")
        self._render()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """Return the widget's display plus a static snapshot of its view as ``text/html``."""
        sync_figure_state(self.figure)
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
        self.select_index(index)
        return True

    def select_index(self, index: int) -> None:
        """Select event ``index`` of the analysis, moving the picker's window to it if needed."""
        if index not in self._picker_range:
            self._fill_picker(self.analysis, index)
        self.event.value = index

    def _event_count(self, key: str) -> int:
        return next(len(log.events) for log in self.ledger.sessions if log.key == key)

    def _view(self) -> Ledger:
        """Return the one-session ledger cut at the crash point; the last :data:`CUTS_KEPT`
        cuts are kept, so each policy's recovery of a cut is computed once."""
        wanted = (self.session.value, self.crash_point.value)
        if wanted in self._cuts:
            self._cuts.move_to_end(wanted)
        else:
            self._cuts[wanted] = self.ledger.cut(wanted[1], session=wanted[0], reuse=True)
            while len(self._cuts) > CUTS_KEPT:
                dropped, _ = self._cuts.popitem(last=False)
                self._contexts = {k: v for k, v in self._contexts.items() if k[:2] != dropped}
                self._stories.pop(dropped, None)
        return self._cuts[wanted]

    def _context_html(self, view: Ledger) -> str:
        """Return the context pane of the shown cut and policy (built once per pair)."""
        key = (self.session.value, self.crash_point.value, self.policy.value)
        if key not in self._contexts:
            self._contexts[key] = context_html(view.context(self.policy.value,
                                                            session=key[0]))
        return self._contexts[key]

    def _story(self, view: Ledger) -> Ledger | None:
        """Return the shown cut plus the child ``fork`` would write at it (built once per
        cut), or None when the cut has no fork boundary."""
        key = (self.session.value, self.crash_point.value)
        if key not in self._stories:
            try:
                self._stories[key] = view.with_fork()
            except ForkRefused:
                self._stories[key] = None
        return self._stories[key]

    def _spec(self, view: Ledger, analysis: Analysis) -> dict[str, Any]:
        """Return the timeline shown: under the fork policy, the story of the cut and the
        child ``fork`` would write at it when there is a boundary; else the cut alone."""
        policy = self.policy.value
        story = self._story(view) if policy == "fork" else None
        spec = None if story is None else fork_story_spec(
            story, policy, detail_limit=DETAIL_LIMIT, name_session=False)
        if spec is not None:
            return spec
        return timeline_spec(view.recovery(policy).frames, session=self.session.value,
                             policy=policy, fork_points=analysis.fork_points, axis="order",
                             detail_limit=DETAIL_LIMIT, name_session=False)

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
            self.details.value = event_details_html(self.analysis, change["new"],
                                                    self._calls_frame())

    def _on_find(self, change: dict[str, Any]) -> None:
        text = change["new"].strip()
        if text.lstrip("-").isdigit():
            found = self.select_seq(int(text))
            self.find.description = "Go to seq" if found else "no such seq"

    def _on_click(self, _trace: Any, points: Points, _state: Any) -> None:
        for x in points.xs:
            if isinstance(x, int | float) and math.isfinite(x) and self.select_seq(round(x)):
                return

    def _render(self) -> None:
        """Show the chosen session, policy and crash point. The cyclic garbage collector
        waits meanwhile: a change allocates many objects and no cycles, and a collection
        would walk every event of the ledger."""
        with paused_gc():
            self._show()

    def _show(self) -> None:
        key, policy = self.session.value, self.policy.value
        view = self._view()
        recovery = view.recovery(policy)
        analysis = recovery.analyses[key]
        kept = self._still_shown(analysis)
        self._analysis = analysis
        self.summary.value = crash_summary(analysis, self.crash_point.value,
                                           self._event_count(key))
        self._updater.show(self._spec(view, analysis))
        self._show_events(analysis, kept)
        self.context.value = self._context_html(view)

    def _calls_frame(self) -> pd.DataFrame:
        """Return the calls frame of the shown cut and policy (the timeline built it)."""
        return self._view().recovery(self.policy.value).frames.calls

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
        if index is None:  # the last recorded event
            recorded = analysis.recorded
            index = next((i for i in range(len(recorded) - 1, -1, -1) if recorded[i]), None)
        self._syncing = True
        try:
            self._fill_picker(analysis, index)
            self.event.value = index
        finally:
            self._syncing = False
        self.details.value = (
            "<i>no event</i>" if index is None
            else event_details_html(analysis, index, self._calls_frame())
        )


    def _fill_picker(self, analysis: Analysis, around: int | None) -> None:
        """Offer the :data:`PICKER_WINDOW` events around index ``around`` in the picker."""
        count = len(analysis.events)
        centre = count - 1 if around is None else around
        start = max(0, min(centre - PICKER_WINDOW // 2, count - PICKER_WINDOW))
        self._picker_range = range(start, min(count, start + PICKER_WINDOW))
        self._syncing, syncing = True, self._syncing
        try:
            self.event.options = event_choices(analysis, self._picker_range)
        finally:
            self._syncing = syncing


def explore(ledger: Ledger | SessionDiff, *, session: str | None = None,
            policy: Policy = "synthesize") -> Explorer | DiffExplorer:
    """Return an :class:`Explorer` over ``ledger``, opened on ``session`` (default: the first);
    given a :class:`~ledgerviz.compare.SessionDiff`, a :class:`DiffExplorer` of it."""
    if isinstance(ledger, SessionDiff):
        return DiffExplorer(ledger)
    return Explorer(ledger, session=session, policy=policy)
