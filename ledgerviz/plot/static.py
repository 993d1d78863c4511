"""Static fallbacks of figures for viewers that run no live plotly: HTML that nbconvert's export
shows, and (opt-in) a PNG image for viewers that run no script at all, such as GitHub's.

A :class:`StaticFallbackFigure` is a ``go.Figure`` whose notebook display carries, beside
plotly's own mimetype (what JupyterLab draws), either plotly's HTML (plotly.js inlined in the
first figure a kernel displays, then reused) or, when images are on, a PNG drawn by kaleido
through a local Chromium. Images are off unless :func:`static_images` turns them on or the
``LEDGERVIZ_STATIC_IMAGES=1`` environment variable is set (``notebooks/refresh.py`` does), so
no browser is ever started on a user's normal display path.
"""

from __future__ import annotations

import os
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

IMAGES_ENV = "LEDGERVIZ_STATIC_IMAGES"
IMAGE_WIDTH = 1100
"""Pixel width of a static image (its height is the figure's own)."""
CONFIG = {"displaylogo": False, "responsive": True}
PLOTLY_MIME = "application/vnd.plotly.v1+json"
IMAGE_RENDERER = "plotly_mimetype+png"

_settings: dict[str, Any] = {"images": None, "plotlyjs_sent": False}


def static_images(enabled: bool | None = True) -> None:
    """Turn static PNG images of figures on or off (None: follow ``LEDGERVIZ_STATIC_IMAGES``).

    While images are on, plain plotly figures (not only ledgerviz's) render as plotly's
    mimetype plus a PNG too, so a stored notebook shows every figure without a script.
    """
    _settings["images"] = enabled
    _use_image_renderer()


def _use_image_renderer() -> None:
    """Point plotly's default renderer at mimetype + PNG while images are on."""
    if images_enabled():
        pio.renderers["png"].width = IMAGE_WIDTH
        pio.renderers.default = IMAGE_RENDERER
    elif pio.renderers.default == IMAGE_RENDERER:
        pio.renderers.default = "plotly_mimetype"


def images_enabled() -> bool:
    """Return whether figure displays carry a PNG image instead of plotly's HTML."""
    chosen = _settings["images"]
    return os.environ.get(IMAGES_ENV) == "1" if chosen is None else bool(chosen)


def figure_png(figure: go.Figure, width: int = IMAGE_WIDTH) -> bytes:
    """Return ``figure`` as a PNG drawn by kaleido (which drives a local Chromium)."""
    try:
        import kaleido  # noqa: F401  (plotly finds it; checked here for a clear message)
    except ImportError as missing:
        raise ImportError("static images need kaleido: pip install 'ledgerviz[static]' "
                          "(and a Chromium, e.g. apt-get install chromium)") from missing
    return pio.to_image(figure, format="png", width=width, height=figure.layout.height)


def figure_html(figure: go.Figure) -> str:
    """Return plotly's HTML for ``figure``: plotly.js is inlined in the first figure this
    process renders, later ones reuse it (so an exported notebook carries it once)."""
    first = not _settings["plotlyjs_sent"]
    _settings["plotlyjs_sent"] = True
    return pio.to_html(figure, full_html=False, include_plotlyjs=first, config=CONFIG,
                       default_width="100%")


def figure_bundle(figure: go.Figure) -> dict[str, Any]:
    """Return the notebook display of ``figure``: plotly's mimetype, a static fallback (PNG when
    images are on, else HTML) and a plain-text line."""
    bundle = pio.renderers["plotly_mimetype"].to_mimebundle(figure.to_dict())
    bundle[PLOTLY_MIME]["config"] = CONFIG
    if images_enabled():
        bundle["image/png"] = figure_png(figure)
    else:
        bundle["text/html"] = figure_html(figure)
    title = figure.layout.title.text or "figure"
    bundle["text/plain"] = f"<{type(figure).__name__}: {title.split('<br>')[0]}>"
    return bundle


class StaticFallbackFigure(go.Figure):
    """A ``go.Figure`` whose notebook display carries a static fallback (see the module)."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None,
                          **_kwargs: Any) -> dict[str, Any]:
        bundle = figure_bundle(self)
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        return {k: v for k, v in bundle.items() if not exclude or k not in exclude}


# Only when images are on from the start: reading plotly's renderers imports nbformat and
# jsonschema, about 2 s before anything could be drawn.
if images_enabled():
    _use_image_renderer()
