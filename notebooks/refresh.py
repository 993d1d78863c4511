"""Execute the example notebooks and store them clean enough to diff.

Each notebook is run top to bottom (nbclient, kernel ``python3``, working directory
``notebooks/``). Only the cells that nbval checks (marked ``# NBVAL_CHECK_OUTPUT``) keep
their outputs; every other output (plotly figures, widgets, rich tables) is dropped, and
run state (widget state, timings, kernel versions) is removed from the metadata.

Execution counts are None everywhere except in checked cells: nbval refuses a cell that
has outputs but no execution count ("unrun reference cell"), so a checked cell gets its
position among the code cells, which is the same on every run.

    python notebooks/refresh.py                 # every notebooks/*.ipynb
    python notebooks/refresh.py notebooks/01-incident-review.ipynb
"""

from __future__ import annotations

import argparse
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
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()


def clean(notebook: NotebookNode) -> NotebookNode:
    """Return ``notebook`` with outputs and execution counts only in checked cells, no run state."""
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
        checked = is_checked(cell)
        cell.execution_count = code_cells if checked else None
        cell.outputs = cell.outputs if checked else []
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
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        checked = refresh(path, args.timeout)
        print(f"{path.name}: executed, {checked} checked cells kept their outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
