"""Execute the example notebooks and store them, outputs and pictures included, as documents.

Each notebook is run top to bottom (nbclient, kernel ``python3``, working directory
``notebooks/``) with ``LEDGERVIZ_STATIC_IMAGES=1``, so every figure carries a PNG that
viewers running no script (GitHub's) show, and the explorer a snapshot of its view. Every
output is kept except what only a live kernel can draw: widget views (their state is not
stored) and HTML that needs a script. nbval still compares only the cells marked
``# NBVAL_CHECK_OUTPUT``. Run state (widget state, timings, kernel versions) is removed
from the metadata, and each code cell's execution count is its position among the code
cells, the same on every run.

    python notebooks/refresh.py                 # every notebooks/*.ipynb
    python notebooks/refresh.py notebooks/01-incident-review.ipynb
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat import NotebookNode

NOTEBOOKS = Path(__file__).resolve().parent
CHECK_MARK = "# NBVAL_CHECK_OUTPUT"
KERNEL = "python3"
KEPT_NOTEBOOK_METADATA = ("kernelspec",)
RUN_STATE_CELL_METADATA = ("execution", "collapsed", "scrolled")
IMAGES_ENV = "LEDGERVIZ_STATIC_IMAGES"
LIVE_ONLY_MIMETYPES = ("application/vnd.jupyter.widget-view+json",)


def is_checked(cell: NotebookNode) -> bool:
    """Return whether nbval compares this cell's outputs (a code cell carrying the mark)."""
    return cell.cell_type == "code" and any(
        line.strip() == CHECK_MARK for line in cell.source.splitlines()
    )


def execute(notebook: NotebookNode, timeout: int) -> None:
    """Run every cell of ``notebook`` in place, with ``notebooks/`` as working directory."""
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=timeout,
        record_timing=False,
        coalesce_streams=True,  # one output per stream, however the kernel split the text
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()


def static_outputs(outputs: list[NotebookNode]) -> list[NotebookNode]:
    """Return ``outputs`` without what needs a live kernel or a script: widget views, HTML
    holding a ``<script>`` (an output left with nothing but that is dropped)."""
    kept = []
    for output in outputs:
        data = output.get("data")
        if data is not None:
            for mimetype in LIVE_ONLY_MIMETYPES:
                data.pop(mimetype, None)
            if "<script" in data.get("text/html", ""):
                data.pop("text/html")
            if not data:
                continue
        kept.append(output)
    return kept


def clean(notebook: NotebookNode) -> NotebookNode:
    """Return ``notebook`` with its static outputs, execution counts by position, no run state."""
    notebook.metadata = nbformat.from_dict(
        {
            **{k: notebook.metadata[k] for k in KEPT_NOTEBOOK_METADATA if k in notebook.metadata},
            "language_info": {"name": "python"},
        }
    )
    code_cells = 0
    for cell in notebook.cells:
        for key in RUN_STATE_CELL_METADATA:
            cell.metadata.pop(key, None)
        if cell.cell_type != "code":
            continue
        code_cells += 1
        cell.execution_count = code_cells
        cell.outputs = static_outputs(cell.outputs)
        for output in cell.outputs:
            if "execution_count" in output:
                output.execution_count = cell.execution_count
    return notebook


def refresh(path: Path, timeout: int) -> int:
    """Execute and clean the notebook at ``path``, write it back; return its checked cells."""
    notebook = nbformat.read(path, as_version=4)
    execute(notebook, timeout)
    clean(notebook)
    nbformat.validate(notebook)
    nbformat.write(notebook, path)
    return sum(is_checked(cell) for cell in notebook.cells)


def main(argv: list[str] | None = None) -> int:
    """Refresh the notebooks named in ``argv`` (default: all of them); return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to refresh (default: notebooks/*.ipynb)")
    parser.add_argument("--timeout", type=int, default=600,
                        help="seconds a single cell may run (default: 600)")
    args = parser.parse_args(argv)
    os.environ[IMAGES_ENV] = "1"  # the kernels inherit it: figures carry PNG images
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        checked = refresh(path, args.timeout)
        print(f"{path.name}: executed and stored with its outputs ({checked} checked cells)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
