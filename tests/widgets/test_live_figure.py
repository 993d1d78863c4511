"""The explorer's figure: a small browser module that does not wait on plotly's bundle, the
bundle shipped as plotly ships it, and the whole figure sent back when a view asks for it."""

from __future__ import annotations

import gc
import zlib
from pathlib import Path
from typing import Any

import plotly
import plotly.graph_objects as go
from gc_watch import collections_started
from widget_ledgers import SEMANTIC

import ledgerviz
from ledgerviz.widgets.live_figure import LiveFigure

PLOTLY_BUNDLE = Path(plotly.__file__).parent / "package_data" / "widgetbundle.js"


def sent_messages(figure: LiveFigure) -> list[dict[str, Any]]:
    """Record what ``figure`` sends its browser model from now on."""
    sent: list[dict[str, Any]] = []
    figure._send = lambda msg, buffers=None: sent.append(msg)
    return sent


def from_browser(figure: LiveFigure, content: dict[str, Any]) -> None:
    """Deliver a custom message from the browser the way the comm does."""
    figure._handle_msg({"content": {"data": {"method": "custom", "content": content}},
                        "buffers": []})


def test_the_browser_module_is_small_and_plotlys_bundle_travels_beside_it_compressed() -> None:
    figure = LiveFigure()
    assert len(figure._esm) < 5_000
    text = PLOTLY_BUNDLE.read_text(encoding="utf-8")
    assert len(text) > 1_000_000  # plotly.js is inside: what took past the deadline
    assert zlib.decompress(figure._bundle).decode("utf-8") == text
    assert len(figure._bundle) < len(text) / 2  # sent as bytes: a buffer, not JSON text
    assert plotly.__version__ in figure._bundle_key


def test_a_view_asking_for_the_figure_gets_it_whole_with_its_token_in_one_message() -> None:
    figure = LiveFigure()
    figure.add_traces([go.Scatter(x=[1, 2], y=[3, 4], name="a"), go.Bar(x=[1], y=[2])])
    figure.update_layout(title_text="t")
    assert figure._widget_data == []  # the model was opened empty; the traces came as messages
    sent = sent_messages(figure)
    from_browser(figure, {"type": "sync", "token": "view-1"})
    assert len(sent) == 1
    state = sent[0]["state"]
    assert sent[0]["method"] == "update" and state["_synced"] == "view-1"
    assert [trace["type"] for trace in state["_widget_data"]] == ["scatter", "bar"]
    assert state["_widget_data"][0]["name"] == "a"
    assert state["_widget_layout"]["title"]["text"] == "t"


def test_other_browser_messages_send_nothing() -> None:
    figure = LiveFigure()
    sent = sent_messages(figure)
    from_browser(figure, {"type": "hello"})
    from_browser(figure, {"token": "no type"})
    assert sent == []


def test_the_explorer_draws_into_a_live_figure() -> None:
    explorer = ledgerviz.explore(ledgerviz.load(SEMANTIC))
    assert isinstance(explorer.figure, LiveFigure)
    assert len(explorer.figure.data) > 0


def test_making_a_figure_runs_no_garbage_collection() -> None:
    # plotly's first figure loads its validators (many small dicts, no cycles); with the
    # collector on, each young collection would also walk a loaded ledger's objects
    from plotly.validator_cache import ValidatorCache
    ValidatorCache._json_cache = None  # as in a new process
    with collections_started() as collections:
        LiveFigure(layout={"template": {}})
        assert gc.isenabled()
    assert ValidatorCache._json_cache is not None and collections == []
