"""A static snapshot of the explorer's current view: what a notebook shows where widgets do
not run (an HTML export, GitHub's viewer)."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from ledgerviz.display.fragments import fragment_style
from ledgerviz.html import escape
from ledgerviz.plot.sketch import figure_svg
from ledgerviz.plot.static import figure_png, images_enabled
from ledgerviz.wording import counted

if TYPE_CHECKING:
    from ledgerviz.widgets.explorer import Explorer


def figure_fallback(explorer: Explorer) -> str:
    """Return the explorer's current figure as a PNG ``<img>`` (images on), else as an SVG
    sketch of its x range (no plotly.js: a display message stays small)."""
    if images_enabled():
        data = base64.b64encode(figure_png(explorer.figure)).decode("ascii")
        return (f'<img alt="timeline of the session under {escape(explorer.policy.value)}" '
                f'style="max-width:100%" src="data:image/png;base64,{data}">')
    return figure_svg(explorer.figure.to_dict())


def snapshot_html(explorer: Explorer) -> str:
    """Return the explorer's view as static HTML: the controls' values, the summary line, the
    figure, and the details and context panes as they stand."""
    controls = (f"session <b>{escape(explorer.session.value, 120)}</b> · policy "
                f"<b>{escape(explorer.policy.value)}</b> · crash after "
                f"<b>{explorer.crash_point.value}</b> of "
                f"{counted(explorer.crash_point.max, 'event')}")
    return (f'<div class="lv lv-repr lv-snapshot">{fragment_style()}'
            f'<p class="lv-none">A snapshot of the explorer (its controls need a live '
            f"kernel): {controls}</p><p>{escape(explorer.summary.value)}</p>"
            f"{figure_fallback(explorer)}"
            f'<div style="display:flex;gap:16px;flex-wrap:wrap">'
            f'<div style="flex:1 1 320px">{explorer.details.value}</div>'
            f'<div style="flex:1 1 320px">{explorer.context.value}</div></div></div>')
