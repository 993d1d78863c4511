"""The plotly.js the report embeds: the shipped small bundle (plotly.js's published gl2d
partial bundle, ``scripts/fetch_plotly_bundle.py``) is the plotly.js version plotly.py embeds,
is the file its manifest's checksum names, and is embedded only where it draws every figure;
otherwise plotly.py's full bundle is."""

from __future__ import annotations

import hashlib
import re

import plotly.offline
import pytest
from report_packs import blocks, unpacked

import ledgerviz
from ledgerviz.examples import example_paths
from ledgerviz.plot import traces
from ledgerviz.report import render_report
from ledgerviz.report.plotlyjs import BUNDLE_DIR, plotlyjs_for, small_bundle_manifest

SMALL_FILE = "plotly-gl2d.min.js"


def small_bytes() -> bytes:
    return BUNDLE_DIR.joinpath(SMALL_FILE).read_bytes()


def footer(document: str) -> str:
    return re.findall(r"<footer>(.*?)</footer>", document)[0]


def test_the_small_bundle_is_plotly_pys_plotlyjs_version() -> None:
    version = plotly.offline.get_plotlyjs_version()
    manifest = small_bundle_manifest()
    assert manifest["version"] == version
    assert manifest["package"] == f"plotly.js@{version}"
    assert manifest["file"] == f"dist/{SMALL_FILE}"
    header = small_bytes()[:200].decode().splitlines()  # plotly.js's own comment at the top
    assert header[1] == f"* plotly.js (gl2d - minified) v{version}"


def test_the_small_bundle_is_the_file_its_checksum_names() -> None:
    manifest = small_bundle_manifest()
    assert hashlib.sha256(small_bytes()).hexdigest() == manifest["sha256"]
    assert re.fullmatch(r"sha512-[A-Za-z0-9+/]{86}==", manifest["npm_integrity"])
    assert BUNDLE_DIR.joinpath("LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_it_is_a_third_of_the_full_bundle() -> None:
    assert len(small_bytes()) * 3 < len(plotly.offline.get_plotlyjs().encode("utf-8"))


def test_the_examples_report_embeds_the_small_bundle() -> None:
    document = render_report(ledgerviz.load(example_paths()[:3]), policy="fork")
    assert blocks(document)["lv-plotly"] == small_bytes()
    version = small_bundle_manifest()["version"]
    assert f"(plotly.js embedded: {version}, its gl2d partial bundle)" in footer(document)


def test_webgl_timelines_keep_the_small_bundle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(traces, "WEBGL_POINTS", 0)
    document = render_report(ledgerviz.load(example_paths()[:2]), policy="fork")
    bodies = unpacked(document)
    assert 'data-webgl="1"' in bodies and '"type":"scattergl"' in bodies
    assert blocks(document)["lv-plotly"] == small_bytes()


def test_a_trace_type_outside_the_small_bundle_takes_the_full_one() -> None:
    full = plotly.offline.get_plotlyjs().encode("utf-8")
    assert plotlyjs_for({"scatter", "heatmap"}).code == full
    assert plotlyjs_for({"bar"}).label.endswith("its full bundle")
    assert plotlyjs_for({"scatter", "scattergl"}).code == small_bytes()
    assert plotlyjs_for(set()).code == small_bytes()


def test_another_plotly_py_version_takes_its_own_full_bundle(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plotly.offline, "get_plotlyjs_version", lambda: "99.0.0")
    document = render_report(ledgerviz.load(example_paths()[:1]), policy="fork")
    assert blocks(document)["lv-plotly"] == plotly.offline.get_plotlyjs().encode("utf-8")
    assert "its full bundle)" in footer(document)
