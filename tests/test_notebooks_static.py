"""The committed example notebooks read as documents without a kernel: exported by nbconvert
(nothing executed), every figure cell shows a static picture, and no output needs a script."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
FIGURE_CALLS = ("timeline(", "crash_grid(", "explore(", "px.")
PNG_IMG = re.compile(r'<img[^>]+src="data:image/png;base64,')


def figure_cells(notebook: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The code cells that draw a figure or the explorer (read from their source)."""
    return [cell for cell in notebook.cells if cell.cell_type == "code"
            and any(call in cell.source for call in FIGURE_CALLS)]


def test_every_notebook_has_figures() -> None:
    assert [p.name for p in NOTEBOOKS] == ["01-incident-review.ipynb",
                                          "02-recovery-semantics.ipynb",
                                          "03-many-sessions.ipynb"]
    for path in NOTEBOOKS:
        assert figure_cells(nbformat.read(path, as_version=4)), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_figure_cell_carries_a_static_picture(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    for cell in figure_cells(notebook):
        pictures = [output for output in cell.outputs
                    if "image/png" in output.get("data", {})
                    or PNG_IMG.search(output.get("data", {}).get("text/html", ""))]
        assert pictures, f"{path.name}: no static picture for {cell.source!r}"
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            assert "application/vnd.jupyter.widget-view+json" not in data, path.name
            assert "<script" not in data.get("text/html", ""), path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_nbconvert_export_shows_each_figure_as_an_image(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    body, _resources = HTMLExporter().from_notebook_node(notebook)
    assert len(PNG_IMG.findall(body)) >= len(figure_cells(notebook))


def test_text_about_static_rendering_matches_the_outputs() -> None:
    """A note saying what a static rendering shows sits above a cell that shows a picture."""
    for path in NOTEBOOKS:
        cells = nbformat.read(path, as_version=4).cells
        for i, cell in enumerate(cells):
            if cell.cell_type != "markdown" or "static rendering" not in cell.source:
                continue
            assert "shows nothing" not in cell.source, path.name
            following = next(c for c in cells[i + 1:] if c.cell_type == "code")
            assert any("image/png" in o.get("data", {})
                       or PNG_IMG.search(o.get("data", {}).get("text/html", ""))
                       for o in following.outputs), path.name
