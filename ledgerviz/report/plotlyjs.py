"""Which plotly.js the HTML report embeds: the small bundle shipped with ledgerviz
(``report/bundle/``, plotly.js's published ``gl2d`` partial bundle, fetched by
``scripts/fetch_plotly_bundle.py``) when every figure's trace type is in it and it is the
plotly.js that the installed plotly.py embeds; otherwise plotly.py's full bundle.

The small bundle is a third of the full one's size and starts several times faster in the
page, which is most of what a report of small sessions costs the browser.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib.resources import files
from typing import Any, NamedTuple

BUNDLE_DIR = files(__package__).joinpath("bundle")


class PlotlyJs(NamedTuple):
    """A plotly.js bundle: what the report's footer calls it (version, which bundle), and its
    code."""

    label: str
    code: bytes


@cache
def small_bundle_manifest() -> dict[str, Any]:
    """Return the shipped small bundle's manifest (version, traces, file, SHA-256)."""
    return json.loads(BUNDLE_DIR.joinpath("manifest.json").read_text(encoding="utf-8"))


def small_bundle_fits(trace_types: Iterable[str]) -> bool:
    """Return whether the small bundle draws every one of ``trace_types`` and is the
    plotly.js version that plotly.py embeds (whose figures and template the report holds)."""
    from plotly.offline import get_plotlyjs_version

    manifest = small_bundle_manifest()
    return (manifest["version"] == get_plotlyjs_version()
            and set(trace_types) <= set(manifest["traces"]))


@cache
def _bundle(small: bool) -> PlotlyJs:
    from plotly.offline import get_plotlyjs, get_plotlyjs_version

    if small:
        manifest = small_bundle_manifest()
        name = manifest["file"].rsplit("/", 1)[-1]
        return PlotlyJs(f"{manifest['version']}, its gl2d partial bundle",
                        BUNDLE_DIR.joinpath(name).read_bytes())
    return PlotlyJs(f"{get_plotlyjs_version()}, its full bundle", get_plotlyjs().encode("utf-8"))


def plotlyjs_for(trace_types: Iterable[str]) -> PlotlyJs:
    """Return the plotly.js bundle a page of figures with ``trace_types`` embeds."""
    return _bundle(small_bundle_fits(trace_types))
