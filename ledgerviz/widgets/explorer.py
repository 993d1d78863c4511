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
from ledgerviz.plot.incident import incident_view
from ledgerviz.plot.timeline import XRange, fork_story_spec, timeline_spec
from ledgerviz.recovery import ForkRefused
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES, Analysis, Policy
from ledgerviz.widgets.context_pane import context_html
from ledgerviz.widgets.details import event_choices, event_details_html, index_of_seq
from ledgerviz.widgets.diff_explorer import DiffExplorer
from ledgerviz.widgets.figure_display import FitWidth, sync_figure_state
from ledgerviz.widgets.figure_update import FigureUpdater
from ledgerviz.widgets.live_figure import LiveFigure
from ledgerviz.widgets.search import find_events
from ledgerviz.widgets.session_filter import LISTED, STATUSES, matching, session_flags
from ledgerviz.widgets.snapshot import snapshot_html
from ledgerviz.widgets.summary import crash_summary
from ledgerviz.wording import counted, one_or_many

if TYPE_CHECKING:
    from plotly.callbacks import Points


HALF = {"width": "50%", "min_width": "320px"}
ROW = widgets.Layout(flex_flow="row wrap", align_items="center")
"""A row of controls: when the output is narrow, whole controls move to the next line."""
KEPT = widgets.Layout(flex="0 0 auto", align_items="center")
"""Controls kept together on one line (a label and its buttons)."""
FIGURE_CLASS = "lv-figure"
"""The class the figure widget carries, so the stylesheet stretches it to the output width."""
EXPLORER_CLASS = "lv-explorer"
"""The class of the explorer's box, by which a page (or a browser test) finds it."""
BUSY_CLASS = "lv-busy"
"""The class the explorer's box carries while it computes a change (its panes then fade)."""
STYLE = (f"<style>.{BUSY_CLASS} .{FIGURE_CLASS}, .{BUSY_CLASS} .lv-pane "
         "{opacity: .4; transition: opacity .2s}</style>")
CUTS_KEPT = 16
CONTEXT_AT_ONCE = 200_000
"""A cut of at most this many events shows its next model request at once; a longer one's
(projected and checked against every provider over the whole request: about 2.4 s at 1M
events) waits until the reader asks for it with ``show_context``, and then follows every
view, as a shorter one's does."""
DETAIL_LIMIT = 2_000
PICKER_WINDOW = 400


class Explorer(widgets.VBox):
    """An ipywidgets box exploring one session of a ledger under each recovery policy.

    Controls: ``session`` (Dropdown of the sessions that ``session_find`` (Text: part of a
    session id or file) and ``session_status`` (Dropdown of :data:`STATUSES`) match, at most
    :data:`LISTED`; ``sessions_shown`` says how many match), ``policy`` (ToggleButtons),
    ``crash_point`` (IntSlider: keep the first n events, as if the process died there),
    ``previous_incident`` and ``next_incident`` (Buttons walking the incidents: fork points,
    calls without a result, turns not completed), ``event`` (Dropdown of event indices, up
    to :data:`PICKER_WINDOW` around the selection; clicking a point of the timeline selects
    the event at that seq), ``find`` (Text: a seq, call id, tool name or message text; its
    ``matches`` Dropdown selects one). Outputs: ``summary`` (Label), ``figure`` (one plotly
    FigureWidget, updated in place with only what changed), ``details`` and ``context``
    (HTML panes, every ledger string escaped; a cut over :data:`CONTEXT_AT_ONCE` events
    shows its next request once ``show_context`` is clicked).

    The timeline opens on the first incident (the event picker too) with the whole session
    as an overview strip; a zoom or pan redraws the range in view, item by item once few
    enough. While a change is computed the box carries :data:`BUSY_CLASS`; the summary is
    the last pane to change, so once it names the new view every pane shows it.
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
        self._incidents: list[int] = []
        self._x_range: XRange = "incident"
        self._opening = True  # a session opened: the picker starts at its first incident
        self._shown_range: tuple[float, float] | None = None
        key = session if session is not None else keys[0]
        total = self._event_count(key)
        self._texts = [f"{log.key} {log.path}" for log in ledger.sessions]
        self._flags: dict[str, frozenset[str]] | None = None
        self.session = widgets.Dropdown(value=None, description="Session")
        self.session_find = widgets.Text(placeholder="filter: session id or file",
                                         layout=widgets.Layout(width="220px"))
        self.session_status = widgets.Dropdown(options=[(label, flag) for flag, label
                                                        in STATUSES.items()],
                                               value="", layout=widgets.Layout(width="230px"))
        self.sessions_shown = widgets.Label()
        self._list_sessions(key)
        self.policy = widgets.ToggleButtons(options=list(POLICIES), value=policy,
                                            style={"button_width": "auto"},
                                            layout=widgets.Layout(width="auto"))
        self.crash_point = widgets.IntSlider(
            value=total, min=min(1, total), max=total, description="Crash after",
            continuous_update=False, layout=widgets.Layout(flex="1 1 320px"),
            style={"description_width": "initial"},
        )
        self.summary = widgets.Label()
        self.summary.add_class("lv-summary")
        # the timeline names its template: plotly's default would be built (about 30 ms
        # at first) only to be replaced
        self.figure = LiveFigure(layout={"template": {}})
        self.figure.add_class(FIGURE_CLASS)
        self._updater = FigureUpdater(self.figure, self._on_click)
        self.previous_incident = widgets.Button(description="◀ incident",
                                                tooltip="the incident before the selection")
        self.next_incident = widgets.Button(description="incident ▶",
                                            tooltip="the incident after the selection")
        self.incident = widgets.Label()
        self.event = widgets.Dropdown(description="Event", layout=widgets.Layout(width="95%"))
        self.find = widgets.Text(description="Find", continuous_update=False,
                                 placeholder="seq, call id, tool or text, then Enter")
        self.find.add_class("lv-find")
        self.matches = widgets.Dropdown(description="Matches", layout=widgets.Layout(width="95%"))
        self.details = widgets.HTML()
        self.context = widgets.HTML()
        self.show_context = widgets.Button(description="show the next model request",
                                           layout=widgets.Layout(width="auto"))
        self._context_asked = False
        for pane in (self.details, self.context):
            pane.add_class("lv-pane")
        super().__init__(children=[
            widgets.HTML(fragment_style() + STYLE),
            widgets.HBox([self.session, self.session_find, self.session_status,
                          self.sessions_shown], layout=ROW),
            widgets.HBox([widgets.HBox([widgets.Label("Policy"), self.policy], layout=KEPT),
                          self.crash_point], layout=ROW),
            self.summary,
            widgets.HBox([self.previous_incident, self.next_incident, self.incident]),
            self.figure,
            FitWidth(self.figure),
            widgets.HBox([widgets.VBox([self.find, self.matches, self.event, self.details],
                                       layout=HALF),
                          widgets.VBox([self.show_context, self.context], layout=HALF)]),
        ])
        self.add_class(EXPLORER_CLASS)
        self.session.observe(self._on_session, names="value")
        self.session_find.observe(self._on_session_filter, names="value")
        self.session_status.observe(self._on_session_filter, names="value")
        self.policy.observe(self._on_view, names="value")
        self.crash_point.observe(self._on_view, names="value")
        self.event.observe(self._on_event, names="value")
        self.find.observe(self._on_find, names="value")
        self.matches.observe(self._on_match, names="value")
        self.previous_incident.on_click(lambda _button: self._step_incident(-1))
        self.next_incident.on_click(lambda _button: self._step_incident(1))
        self.show_context.on_click(self._on_show_context)
        self.figure.layout.on_change(self._on_zoom, "xaxis.range")
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

    @property
    def incidents(self) -> list[int]:
        """Return the seqs of the incidents of the view shown (``layout.meta.incidents``)."""
        return list(self._incidents)

    def focus_seq(self, seq: int) -> bool:
        """Select the event with ``seq`` and show the timeline around it unless it is in view
        already; return whether such an event exists."""
        if not self.select_seq(seq):
            return False
        shown = self._shown_range
        if shown is not None and shown[0] <= seq <= shown[1]:
            return True
        seqs = [s for s in self.analysis.seqs if s is not None]
        window = incident_view(seq, min(seqs), max(seqs)) if seqs else None
        if window is not None:
            self._x_range = window
            self._draw()
        return True

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
        """Return the timeline shown, over the x range chosen (the first incident's at
        first): under the fork policy, the story of the cut and the child ``fork`` would
        write at it when there is a boundary; else the cut alone."""
        policy = self.policy.value
        story = self._story(view) if policy == "fork" else None
        spec = None if story is None else fork_story_spec(
            story, policy, detail_limit=DETAIL_LIMIT, name_session=False,
            x_range=self._x_range, redrawn=True)
        if spec is not None:
            return spec
        return timeline_spec(view.recovery(policy).frames, session=self.session.value,
                             policy=policy, fork_points=analysis.fork_points, axis="order",
                             detail_limit=DETAIL_LIMIT, name_session=False,
                             x_range=self._x_range, redrawn=True)

    def _draw(self) -> None:
        """Draw the timeline of the shown view over the chosen x range."""
        with paused_gc():
            view = self._view()
            spec = self._spec(view, self.analysis)
            # a redraw unsets in the browser what it lacks, and plotly.js then falls back to
            # its defaults: an unset range shows [-1, 6] (autorange is not redone), an emptied
            # range slider stays visible (a session switched to without incidents showed so):
            # a whole view names its range and hides the slider
            xaxis = spec["layout"]["xaxis"]
            if "range" not in xaxis:
                xaxis["range"] = _extent(spec["data"])
                xaxis["rangeslider"] = {"visible": False}
            self._incidents = list(spec["layout"].get("meta", {}).get("incidents", []))
            shown = spec["layout"]["xaxis"].get("range")
            self._shown_range = None if shown is None else (shown[0], shown[1])
            self._updater.show(spec)

    def _on_zoom(self, _layout: Any, x_range: Any) -> None:
        """Redraw the range the reader zoomed or panned to (finer where few items are in it),
        unless it is drawn already. The redraw sends no range (the kernel holds this one
        already, and a double click's ``autorange`` is never sent back): a browser zoomed
        again while the kernel drew is not thrown back, and ends on the range asked last."""
        if self._syncing or self._analysis is None or x_range is None or len(x_range) != 2:
            return
        wanted = (float(x_range[0]), float(x_range[1]))
        if self._shown_range is not None and all(
                abs(a - b) < 1e-6 for a, b in zip(wanted, self._shown_range, strict=True)):
            return
        self._x_range = wanted
        self._syncing = True
        try:
            self._draw()
        finally:
            self._syncing = False

    def _step_incident(self, step: int) -> None:
        """Select the incident before (``step`` -1) or after (+1) the selected event."""
        index = self.event.value
        here = None if index is None else self.analysis.seqs[index]
        if here is None:
            targets = self._incidents[:1] if step > 0 else self._incidents[-1:]
        elif step > 0:
            targets = [s for s in self._incidents if s > here][:1]
        else:
            targets = [s for s in self._incidents if s < here][-1:]
        if targets:
            self.focus_seq(targets[0])

    def _show_incident(self) -> None:
        """Say which incident is selected, of how many, and enable the buttons that move."""
        index = self.event.value
        here = None if index is None or self._analysis is None else self.analysis.seqs[index]
        count = len(self._incidents)
        self.previous_incident.disabled = not any(
            here is None or s < here for s in self._incidents)
        self.next_incident.disabled = not any(here is None or s > here for s in self._incidents)
        if not count:
            self.incident.value = "no incidents"
        elif here in self._incidents:
            self.incident.value = (f"incident {self._incidents.index(here) + 1} of {count} · "
                                   f"seq {here}")
        else:
            self.incident.value = counted(count, "incident")

    def _list_sessions(self, current: str) -> None:
        """List in the session picker the first :data:`LISTED` sessions the filter matches,
        ``current`` (kept selected) first when it does not match, and say how many match."""
        keys = self.ledger.keys
        found = matching(keys, self._texts, self.session_find.value, self.session_status.value,
                         self._session_flags)
        listed = found[:LISTED]
        if current not in listed:
            listed.insert(0, current)
        self._syncing, syncing = True, self._syncing
        try:
            self.session.options = [(visible_bidi(k), k) for k in listed]
            self.session.value = current
        finally:
            self._syncing = syncing
        shown = (f"{len(found):,} of {counted(len(keys), 'session', ',')} "
                 f"{one_or_many(len(found), 'matches', 'match')}")
        if len(found) > LISTED:
            shown += f" · the first {LISTED} listed"
        self.sessions_shown.value = shown
        for control in (self.session_find, self.session_status, self.sessions_shown):
            control.layout.display = None if len(keys) > 1 else "none"

    def _session_flags(self, key: str) -> frozenset[str]:
        """Return the status flags of session ``key`` (every session's, worked out from
        their fork-policy analyses when the status filter is first used)."""
        if self._flags is None:
            analyses = self.ledger.recovery("fork").analyses
            self._flags = {k: session_flags(analysis) for k, analysis in analyses.items()}
        return self._flags[key]

    def _on_session_filter(self, _change: dict[str, Any]) -> None:
        self._list_sessions(self.session.value)

    def _on_session(self, _change: dict[str, Any]) -> None:
        if self._syncing:
            return
        self._list_sessions(self.session.value)  # the session left goes if it did not match
        total = self._event_count(self.session.value)
        self._syncing = True
        try:
            self.crash_point.min = 0
            self.crash_point.max = total
            self.crash_point.min = min(1, total)
            self.crash_point.value = total
        finally:
            self._syncing = False
        self.find.value = ""  # nor do a search and its matches
        self._analysis = None  # a selection never carries over to another session
        self._x_range = "incident"
        self._opening = True
        self._render()

    def _on_view(self, _change: dict[str, Any]) -> None:
        if not self._syncing:
            self._render()

    def _on_event(self, change: dict[str, Any]) -> None:
        if not self._syncing and change["new"] is not None:
            self.details.value = event_details_html(self.analysis, change["new"],
                                                    self._calls_frame())
            self._show_incident()

    def _on_find(self, change: dict[str, Any]) -> None:
        """List what the find box matches and show the first match."""
        matches, total = (find_events(self.analysis, self._messages_frame(), change["new"])
                           if change["new"].strip() else ([], 0))
        self._syncing, syncing = True, self._syncing
        try:
            self.matches.options = matches
            self.matches.value = None
        finally:
            self._syncing = syncing
        self.matches.description = (f"{total:,} match{'es' * (total != 1)}"
                                    if change["new"].strip() else "Matches")
        if matches:
            self.matches.value = matches[0][1]

    def _on_match(self, change: dict[str, Any]) -> None:
        if not self._syncing and change["new"] is not None:
            self.focus_seq(change["new"])

    def _on_click(self, _trace: Any, points: Points, _state: Any) -> None:
        for x in points.xs:
            if isinstance(x, int | float) and math.isfinite(x) and self.select_seq(round(x)):
                return

    def _render(self) -> None:
        """Show the chosen session, policy and crash point, the box marked busy meanwhile.
        The cyclic garbage collector waits meanwhile: a change allocates many objects and no
        cycles, and a collection would walk every event of the ledger."""
        self.add_class(BUSY_CLASS)
        self.summary.value = f"computing {self.session.value} · {self.policy.value} …"
        try:
            with paused_gc():
                self._show()
        finally:
            self.remove_class(BUSY_CLASS)

    def _show(self) -> None:
        """Update every pane, the summary last."""
        key, policy = self.session.value, self.policy.value
        view = self._view()
        recovery = view.recovery(policy)
        analysis = recovery.analyses[key]
        kept = self._still_shown(analysis)
        self._analysis = analysis
        self._syncing, syncing = True, self._syncing
        try:
            self._draw()
        finally:
            self._syncing = syncing
        self._show_events(analysis, kept)
        self._show_context(view)
        self.summary.value = crash_summary(analysis, self.crash_point.value,
                                           self._event_count(key))

    def _show_context(self, view: Ledger) -> None:
        """Fill the context pane, or (a cut over :data:`CONTEXT_AT_ONCE` events before the
        reader asked for its next request) say how to see it."""
        events = self.crash_point.value
        shown = self._context_asked or events <= CONTEXT_AT_ONCE
        self.show_context.layout.display = None if not shown else "none"
        self.context.value = self._context_html(view) if shown else (
            f"<div class='lv lv-context'><i>The next model request of these "
            f"{events:,} events is built when asked for.</i></div>")

    def _on_show_context(self, _button: widgets.Button) -> None:
        self._context_asked = True
        self.add_class(BUSY_CLASS)
        try:
            with paused_gc():
                self._show_context(self._view())
        finally:
            self.remove_class(BUSY_CLASS)

    def _calls_frame(self) -> pd.DataFrame:
        """Return the calls frame of the shown cut and policy (the timeline built it)."""
        return self._view().recovery(self.policy.value).frames.calls

    def _messages_frame(self) -> pd.DataFrame:
        """Return the messages frame of the shown cut and policy (built on the first find)."""
        return self._view().recovery(self.policy.value).frames.messages

    def _still_shown(self, analysis: Analysis) -> int | None:
        """Return the index in ``analysis`` of the event selected so far, if it is still there.

        An event stays selected when an event with its seq, type and in-file flag remains
        (a closer computed at a cut may reuse the seq of a recorded event that was cut away).
        """
        old, index = self._analysis, self.event.value
        if old is None or index is None or old.seqs[index] is None:
            return None
        new = index_of_seq(analysis, old.seqs[index])
        if new is None or analysis.marks.recorded[new] != old.marks.recorded[index]:
            return None
        return new if analysis.events[new].get("type") == old.events[index].get("type") else None

    def _show_events(self, analysis: Analysis, index: int | None) -> None:
        """Fill the event picker and select ``index``, or else (on a session opened) the
        first incident's event, or else the last recorded event (the crash point's)."""
        if index is None and self._opening and self._incidents:
            index = index_of_seq(analysis, self._incidents[0])
        self._opening = False
        if index is None:
            recorded = analysis.marks.recorded  # not the list of every event's flag
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
        self._show_incident()


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


def _extent(traces: list[dict[str, Any]]) -> list[float]:
    """Return the x range holding every point of ``traces``, a seq of margin each side."""
    xs = pd.to_numeric(pd.Series([x for trace in traces for x in trace.get("x", ())],
                                 dtype=object), errors="coerce").dropna()
    return [float(xs.min()) - 1, float(xs.max()) + 1] if len(xs) else [-1.0, 1.0]


def explore(ledger: Ledger | SessionDiff, *, session: str | None = None,
            policy: Policy = "synthesize") -> Explorer | DiffExplorer:
    """Return an :class:`Explorer` over ``ledger``, opened on ``session`` (default: the first);
    given a :class:`~ledgerviz.compare.SessionDiff`, a :class:`DiffExplorer` of it."""
    if isinstance(ledger, SessionDiff):
        return DiffExplorer(ledger)
    return Explorer(ledger, session=session, policy=policy)
