"""A plotly FigureWidget whose browser module is ready within anywidget's start-up deadline.

anywidget (0.9.16 and later) holds every message for a model until the model's module has
loaded and initialised, and gives it 2 s: past that, its ``ready`` promise rejects once and for
good, and every later message to the model (each trace and layout change, each full resync) is
dropped without a word. plotly's FigureWidget module is its 5 MB bundle with plotly.js inside;
a page that loads it for the first time (a fresh JupyterLab tab, a busy machine) sometimes
spends longer than that compiling it, and the figure then stays as its model was opened: empty
axes that never change.

:class:`LiveFigure` is a FigureWidget whose module is a few lines: it is ready at once, loads
plotly's own bundle (sent zlib-compressed as a binary buffer: 1.75 MB instead of 5 MB of JSON
text) when a view first needs it, once per page, and initialises plotly's model and view code
with it. Before a view draws, it asks the kernel for
the whole figure (the changes that came before plotly's code listened are in it), so the first
drawing is the figure as the kernel holds it.
"""

from __future__ import annotations

import functools
import zlib
from pathlib import Path
from typing import Any

import plotly
import plotly.graph_objects as go
import traitlets
from plotly.basewidget import BaseFigureWidget

from ledgerviz.ledger.gcpause import paused_gc
from ledgerviz.widgets.figure_display import sync_figure_state

BUNDLE_LEVEL = 1
"""zlib's level for plotly's bundle: 5.0 MB to 1.75 MB in about 0.15 s, once per process (the
default level, 6, gives 1.5 MB in 0.4 s of the first display)."""
SYNC_WAIT_MS = 5_000
"""How long a view waits for the kernel's whole figure before it draws the state it has (no
kernel: a page showing saved widget state; a kernel busy with other cells)."""

_ESM = """
const BUNDLES = Symbol.for("ledgerviz.plotly-widget-bundles");

// plotly's widget module (inflated from the compressed bytes the kernel sent), imported once
// per page and bundle version.
async function imported(packed) {
  const inflated = new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate"));
  const code = await new Response(inflated).text();
  const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
  try {
    return await import(url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

function plotlyModule(model) {
  const bundles = (globalThis[BUNDLES] ??= new Map());
  const key = model.get("_bundle_key");
  if (!bundles.has(key)) bundles.set(key, imported(model.get("_bundle")));
  return bundles.get(key);
}

// Resolve once the kernel has sent the whole figure again (or after SYNC_WAIT_MS).
function wholeFigure(model) {
  const token = `${Date.now()}-${Math.random()}`;
  return new Promise((resolve) => {
    const done = () => {
      model.off("change:_synced", check);
      clearTimeout(timer);
      resolve();
    };
    const check = () => { if (model.get("_synced") === token) done(); };
    const timer = setTimeout(done, SYNC_WAIT_MS);
    model.on("change:_synced", check);
    model.send({ type: "sync", token });
  });
}

export default () => {
  let modelProxy = null;
  let plotlyWidget = null;
  return {
    initialize({ model }) {
      modelProxy = model;  // plotly's model code listens on it for the model's whole life
    },
    async render({ model, el }) {
      plotlyWidget ??= plotlyModule(modelProxy).then((bundle) => {
        const widget = bundle.default();
        widget.initialize({ model: modelProxy });
        return widget;
      });
      const widget = await plotlyWidget;
      await wholeFigure(model);
      return widget.render({ model, el });
    },
  };
};
""".replace("SYNC_WAIT_MS", str(SYNC_WAIT_MS))


def _plotly_bundle() -> str:
    """Return the text of plotly's FigureWidget module, the module plotly itself sends (anywidget
    turns the class's file path into a ``FileContents`` whose text is its ``str``)."""
    esm = BaseFigureWidget._esm
    return esm.read_text(encoding="utf-8") if isinstance(esm, Path) else str(esm)


@functools.cache
def _packed_bundle() -> bytes:
    """Return :func:`_plotly_bundle` zlib-compressed (what the browser inflates)."""
    return zlib.compress(_plotly_bundle().encode("utf-8"), BUNDLE_LEVEL)


class LiveFigure(go.FigureWidget):
    """A plotly FigureWidget that draws whole in the browser however long plotly's bundle takes
    to load there (see the module's docstring)."""

    _esm = _ESM
    _bundle = traitlets.Bytes().tag(sync=True)
    """plotly's widget module zlib-compressed, which the small module above imports."""
    _bundle_key = traitlets.Unicode().tag(sync=True)
    """Names the bundle, so a page imports each version once."""
    _synced = traitlets.Unicode("").tag(sync=True)
    """The token of the browser's last request for the whole figure, sent after the figure."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # the first figure of a process loads plotly's validators (a 3 MB JSON file, many
        # small dicts, no cycles): with the collector on, each young collection also walks
        # a loaded ledger's objects (0.25 s, not 0.02, beside a 1M-event session)
        with paused_gc():
            super().__init__(*args, **kwargs)
        self._bundle = _packed_bundle()
        self._bundle_key = f"plotly-{plotly.__version__}-{len(self._bundle)}"
        self.on_msg(self._on_browser_message)

    def _on_browser_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "sync":
            self._send_whole_figure(str(content.get("token", "")))

    def _send_whole_figure(self, token: str) -> None:
        """Send the browser the figure's traces and layout with ``token`` as ``_synced``, in
        one message, so a view waiting for ``token`` draws from the figure that came with it.
        A trait equal to what was last sent is left out: the browser holds it already."""
        with self.hold_sync():
            sync_figure_state(self)
            self._synced = token
