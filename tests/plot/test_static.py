"""Static fallbacks of figures: plotly's HTML (plotly.js once), or a PNG when images are on."""

from __future__ import annotations

from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.plot import static
from ledgerviz.plot.static import PLOTLY_MIME, StaticFallbackFigure, figure_bundle

HOSTILE = Path(__file__).resolve().parents[1] / "browser" / "data" / "hostile.v4.jsonl"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new kernel would: plotly.js not sent, images following the env."""
    monkeypatch.setitem(static._settings, "plotlyjs_sent", False)
    monkeypatch.setitem(static._settings, "images", None)
    monkeypatch.delenv(static.IMAGES_ENV, raising=False)


def test_html_fallback_inlines_plotlyjs_in_the_first_figure_only(fresh: None) -> None:
    figure = ledgerviz.timeline(ledgerviz.load(HOSTILE), policy="fork")
    assert isinstance(figure, StaticFallbackFigure)
    first, second = figure._repr_mimebundle_(), figure._repr_mimebundle_()
    assert set(first) == {PLOTLY_MIME, "text/html", "text/plain"}
    assert "Plotly.newPlot" in first["text/html"] and "Plotly.newPlot" in second["text/html"]
    # plotly.js itself (megabytes) travels once; the second figure reuses it
    assert len(first["text/html"]) > 1_000_000 > 100_000 > len(second["text/html"])
    assert [t["name"] for t in first[PLOTLY_MIME]["data"]] == [t.name for t in figure.data]
    assert "<img" not in first["text/plain"] and first["text/plain"].startswith("<")


def test_images_replace_the_html_when_turned_on(fresh: None,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    figure = ledgerviz.timeline(ledgerviz.load(HOSTILE), policy="fork")
    monkeypatch.setenv(static.IMAGES_ENV, "1")
    bundle = figure_bundle(figure)
    assert set(bundle) == {PLOTLY_MIME, "image/png", "text/plain"}
    assert bundle["image/png"].startswith(PNG_SIGNATURE)
    static.static_images(False)  # an explicit choice wins over the environment
    assert "image/png" not in figure_bundle(figure)


def test_include_and_exclude_are_honoured(fresh: None) -> None:
    figure = ledgerviz.timeline(ledgerviz.load(HOSTILE))
    assert set(figure._repr_mimebundle_(include=["text/plain"])) == {"text/plain"}
    assert "text/html" not in figure._repr_mimebundle_(exclude=["text/html"])


def _imported(code: str, **env: str) -> str:
    """Return what ``code`` prints in a new interpreter (a new kernel, as far as imports go)."""
    import os
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if k != static.IMAGES_ENV} | env
    done = subprocess.run([sys.executable, "-c", code], env=environment, check=True,
                          capture_output=True, text=True)
    return done.stdout.strip()


def test_plotly_renderers_are_left_unimported_while_images_are_off() -> None:
    # they import nbformat and jsonschema: about 2 s before a report could start
    code = "import sys, ledgerviz.report; print('plotly.io._renderers' in sys.modules)"
    assert _imported(code) == "False"


def test_images_on_from_the_start_set_the_default_renderer() -> None:
    code = ("import plotly.io as pio, ledgerviz.plot.static as static; "
            "print(pio.renderers.default == static.IMAGE_RENDERER)")
    assert _imported(code, **{static.IMAGES_ENV: "1"}) == "True"
