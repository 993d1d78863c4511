"""Standard output while a command runs: what its encoding cannot hold is escaped, and a
failure to write it (a pipe whose reader has gone, a full disk) is told apart from every
other ``OSError``, so that the command says so in one line instead of a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, TextIO

from ledgerviz.cli.output import OutputError, describe_write_error


class _Guarded:
    """A text stream whose ``write`` and ``flush`` raise :class:`OutputError` (about
    stdout) for an ``OSError``; everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as error:
            raise OutputError(describe_write_error(error, "stdout")) from error

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            raise OutputError(describe_write_error(error, "stdout")) from error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def guarded_stdout() -> Iterator[None]:
    """Run the block with ``sys.stdout`` guarded and escaping what its encoding cannot
    hold (a session id under an ASCII locale), then flush it, so that a failure is met
    here and not at exit. A process started with stdout closed has none to guard."""
    stream = sys.stdout
    if stream is None:
        yield
        return
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")
    sys.stdout = _Guarded(stream)  # type: ignore[assignment]
    try:
        yield
        sys.stdout.flush()
    finally:
        sys.stdout = stream


def discard_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's last flush of
    what a failed stdout did not take raises nothing more."""
    # no file descriptor: a test's captured stdout, or none at all (started with it closed)
    with suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
