"""Progress bars for long work (loading, analysing, reporting large ledgers), drawn by tqdm:
a widget bar in notebooks, a line on stderr in a terminal, nothing when not interactive.

The ledger and recovery layers stay free of it: they take an optional callback, which the
bars made here fill.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from ledgerviz.ledger.sources import Source, expand_path

EVENTS_THRESHOLD = 300_000
"""Events from which analysing and reporting show progress."""
BYTES_THRESHOLD = 64 << 20
"""File bytes from which loading shows progress (about 300,000 events of a typical ledger)."""
TURNS_THRESHOLD = 20_000
"""Turns simulated from which ``ledgerviz simulate`` shows progress (about 300,000 events)."""
SPANS_THRESHOLD = 100_000
"""Spans from which an OTLP export shows progress (about 300,000 events of a typical ledger)."""
FILES_THRESHOLD = 500
"""Ledger files from which an export shows progress (500 sessions: a few seconds)."""

Where = Literal["notebook", "terminal"]


def where_interactive() -> Where | None:
    """Return where a person is watching: a notebook kernel, a terminal (stderr is a tty),
    or None (a script, a pipe, CI), where no progress is drawn."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and type(shell).__name__ == "ZMQInteractiveShell":
        return "notebook"
    return "terminal" if sys.stderr.isatty() else None


def source_size(source: Source) -> int | None:
    """Return the bytes of the files ``source`` names, or None when it holds a stream."""
    if isinstance(source, list | tuple):
        sizes = [source_size(item) for item in source]
        return None if None in sizes else sum(s for s in sizes if s is not None)
    if isinstance(source, str | os.PathLike):
        try:
            return sum(path.stat().st_size for path in expand_path(os.fspath(source)))
        except (OSError, ValueError):
            return None  # the reader reports an unreadable source itself
    return None


@contextmanager
def progress(total: int | Callable[[], int | None] | None, threshold: int, description: str,
             unit: str = "event") -> Iterator[Callable[[int], Any] | None]:
    """Yield a callback advancing a progress bar by n units, or None when ``total`` is
    unknown or under ``threshold`` or nobody is watching; the bar is closed on exit.

    ``total`` may be a function computing it, called only when someone is watching.
    """
    where = where_interactive()
    if where is not None and callable(total):
        total = total()
    if total is None or callable(total) or total < threshold or where is None:
        yield None
        return
    if where == "notebook":
        from tqdm.auto import tqdm
    else:
        from tqdm import tqdm
    bar = tqdm(total=total, desc=description, unit=unit, unit_scale=True, leave=False,
               file=sys.stderr)
    try:
        yield bar.update
    finally:
        bar.close()
