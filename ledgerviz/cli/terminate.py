"""SIGTERM as an exception while a command runs, so that its cleanup runs too.

The default action of SIGTERM ends the process at once: no ``finally`` runs, and a
command writing its output leaves its temporary file behind. While
:func:`terminate_as_exception` is active, SIGTERM raises :class:`Terminated` in the main
thread instead, which unwinds every ``with`` and ``finally`` on its way out.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

TERMINATED_EXIT = 128 + signal.SIGTERM
"""Exit code of a command ended by SIGTERM (143, as a shell reports it)."""


class Terminated(BaseException):
    """SIGTERM was received (a ``BaseException``: no ``except Exception`` swallows it)."""


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextmanager
def terminate_as_exception() -> Iterator[None]:
    """Make SIGTERM raise :class:`Terminated` within the block (in the main thread only,
    where Python runs signal handlers); the previous handler is restored after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
