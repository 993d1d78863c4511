"""Where a command writes: never over one of its inputs or any ledger, atomically, errors
as one line.

Every command that writes a file goes through :func:`open_output`::

    output = open_output(args.output, inputs=[log.path for log in ledger.sessions])
    output.write(text)                     # or: with output.writing() as path: ...
                                           # or: with output.writing_text() as file: ...
    print(f"wrote {output.shown}")

:func:`open_output` checks the path before any work is done and
:meth:`Output.write` / :meth:`Output.writing` write a temporary file in the target's
folder and rename it over the target, so a reader never sees half a file and a
failed write leaves the old file as it was (the ``ledgerviz`` command turns SIGTERM into
an exception, so a terminated write removes its temporary file too). An output opened
with ``overwrite=False`` is created exclusively: the temporary file is linked to the
target's name, which fails if anything took that name meanwhile (another process writing
the same ``-o``), so two writers never both succeed. ``-`` means standard output. Every
refusal and every ``OSError`` becomes an :class:`OutputError` whose text is one
line for the user; commands print it and exit with :data:`OUTPUT_ERROR_EXIT`. An
existing file that holds a ledger or transcript of any format ledgerviz reads (its first
bytes claimed by a format's test) is never written over, input or not.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, TypeVar

from ledgerviz.file_mode import mode_for
from ledgerviz.ledger.overwrite import ledger_held, refusal

T = TypeVar("T")

STDOUT = "-"
"""The output path that means standard output."""

OUTPUT_ERROR_EXIT = 2
"""Exit code of a command whose output cannot or must not be written."""


class OutputError(Exception):
    """An output path that must not or cannot be written; ``str()`` is one line."""


@dataclass(frozen=True)
class Output:
    """A checked place to write: a file (``target``) or standard output (``target is None``).

    ``shown`` names it for the user (the path as given, or ``stdout``); ``exclusive``:
    the target is created, never replaced.
    """

    target: Path | None
    shown: str
    exclusive: bool = False

    def write(self, data: str | bytes) -> None:
        """Write ``data`` atomically to the target, or to stdout.

        Text is encoded as UTF-8; a lone surrogate (the bytes of a non-UTF-8 file name
        quoted in a report) is written as a visible ``\\udcNN`` escape.
        """
        payload = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
        if self.target is None:
            write_stdout(payload)
            return
        with self.writing() as path:
            _guard(path.write_bytes, payload, shown=self.shown)

    @contextmanager
    def writing_text(self) -> Iterator[TextIO]:
        """Yield a text file to write to, encoded as :meth:`write` encodes text; on success it
        replaces the target, as :meth:`writing` does."""
        with self.writing() as path, path.open(
                "w", encoding="utf-8", errors="backslashreplace", newline="") as text:
            yield text

    @contextmanager
    def writing(self) -> Iterator[Path]:
        """Yield a temporary file path to fill; on success it replaces the target.

        The temporary file sits in the target's folder (so the rename is atomic) and is
        removed if the block raises. For stdout it is copied to standard output.
        """
        folder = self.target.parent if self.target is not None else None
        handle, name = _guard(
            tempfile.mkstemp, prefix=".ledgerviz-", suffix=".tmp", dir=folder, shown=self.shown
        )
        os.close(handle)
        temporary = Path(name)
        try:
            try:
                yield temporary
            except OSError as error:
                raise OutputError(describe_write_error(error, self.shown)) from error
            if self.target is None:
                write_stdout(_guard(temporary.read_bytes, shown=self.shown))
            else:
                _guard(os.chmod, temporary, mode_for(self.target), shown=self.shown)
                _guard(self._publish, temporary, self.target, shown=self.shown)
        finally:
            with suppress(OSError):
                temporary.unlink()


    def _publish(self, temporary: Path, target: Path) -> None:
        """Put the written file at ``target``: renamed over it, or (``exclusive``) linked to
        its name, which fails when that name exists, however recently it was taken."""
        if not self.exclusive:
            os.replace(temporary, target)
            return
        try:
            try:
                os.link(temporary, target, follow_symlinks=False)
            except OSError as error:
                if error.errno not in _NO_HARD_LINKS:
                    raise
                # a file system without hard links: claim the name, then fill it
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                os.replace(temporary, target)
        except FileExistsError as error:
            raise OutputError(f"{self.shown} already exists (written meanwhile by another "
                              "process?); refusing to overwrite it") from error


_NO_HARD_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK})
"""What ``link`` fails with where a file system has no hard links (FAT, some FUSE)."""


def open_output(
    path: str | os.PathLike[str],
    inputs: Iterable[str | os.PathLike[str]] = (),
    *,
    follow_symlinks: bool = False,
    overwrite: bool = True,
) -> Output:
    """Return the checked :class:`Output` for ``path``; raise :class:`OutputError` if unsafe.

    Refused: a path that is one of ``inputs`` (same resolved path, or same file by
    device and inode, which catches hard links and symlinks), an existing folder or
    non-regular file, a missing parent folder, an existing file when not
    ``overwrite``, and a symbolic link unless ``follow_symlinks`` (then the file the
    link points to is replaced and the link kept). ``inputs`` are the files actually
    read (expand folders and globs first); ``"-"`` is standard output.
    """
    text = os.fspath(path)
    if text == STDOUT:
        return Output(None, "stdout")
    if not text:
        raise OutputError("output path is empty")
    given = Path(text)
    shown = text
    if given.is_symlink() and not follow_symlinks:
        link = _guard(os.readlink, given, shown=shown)
        raise OutputError(
            f"{shown} is a symbolic link (to {link}); refusing to write through it "
            "(remove it, choose another path, or pass --follow-symlinks to replace "
            "the file it points to)"
        )
    target = Path(_guard(os.path.realpath, given, shown=shown))
    info = _stat(target, shown)
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise OutputError(f"{shown} is a folder; give a file path")
        if not stat.S_ISREG(info.st_mode):
            raise OutputError(f"{shown} is not a regular file (a pipe, device or socket)")
    _refuse_inputs(target, info, inputs, shown)
    if info is not None and not overwrite:
        raise OutputError(f"{shown} already exists; refusing to overwrite it")
    held = ledger_held(target) if info is not None and info.st_size else None
    if held is not None:
        raise OutputError(refusal(shown, held))
    parent = _stat(target.parent, shown)
    if parent is None:
        raise OutputError(f"{shown}: folder {target.parent} does not exist")
    if not stat.S_ISDIR(parent.st_mode):
        raise OutputError(f"{shown}: {target.parent} is not a folder")
    return Output(target, shown, exclusive=not overwrite)


def _refuse_inputs(
    target: Path,
    info: os.stat_result | None,
    inputs: Iterable[str | os.PathLike[str]],
    shown: str,
) -> None:
    """Raise :class:`OutputError` if ``target`` is one of ``inputs``."""
    for item in inputs:
        text = os.fspath(item)
        with suppress(OSError, ValueError):
            if Path(os.path.realpath(text)) == target:
                raise OutputError(f"{shown} is the input {text}; refusing to overwrite it")
            if info is not None:
                other = os.stat(text)
                if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                    raise OutputError(
                        f"{shown} is the same file as the input {text}; refusing to overwrite it"
                    )


def _stat(path: Path, shown: str) -> os.stat_result | None:
    """Return ``path``'s status, or None when it does not exist."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise OutputError(describe_write_error(error, shown)) from error


def write_stdout(payload: bytes) -> None:
    """Write ``payload`` to standard output (its binary buffer when it has one): what a
    program reads (JSON, JSONL) goes out as UTF-8 bytes, whatever the terminal's encoding."""
    stream = sys.stdout
    if stream is None:  # the process was started with its standard output closed
        raise OutputError("cannot write stdout: it is closed")
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            stream.flush()
            buffer.write(payload)
            buffer.flush()
        else:
            stream.write(payload.decode("utf-8", "surrogateescape"))
            stream.flush()
    except OSError as error:
        raise OutputError(describe_write_error(error, "stdout")) from error


def _guard(function: Callable[..., T], *args: Any, shown: str, **kwargs: Any) -> T:
    """Call ``function``; turn an ``OSError`` into an :class:`OutputError` about ``shown``."""
    try:
        return function(*args, **kwargs)
    except OSError as error:
        raise OutputError(describe_write_error(error, shown)) from error


def describe_write_error(error: OSError, shown: str) -> str:
    """Return one line for an ``OSError`` met while writing ``shown``."""
    reason = error.strerror or str(error) or type(error).__name__
    where = f" ({error.filename})" if error.filename and os.fspath(error.filename) != shown else ""
    return f"cannot write {shown}: {reason}{where}"



def add_output_arguments(parser: Any, *, default: str | None, what: str) -> None:
    """Add ``-o/--output`` and ``--follow-symlinks`` to a sub-command's ``parser``."""
    shown_default = f" (default: {default})" if default else ""
    parser.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        default=default,
        help=f"{what}{shown_default}; '-' writes to standard output; never one of the "
        "inputs; written to a temporary file, then renamed into place",
    )
    parser.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="when the output PATH is a symbolic link, replace the file it points to "
        "(default: refuse)",
    )
