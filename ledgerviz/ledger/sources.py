"""Turn a user's ``source`` argument into named byte blobs (or chunks), one per ledger file."""

from __future__ import annotations

import errno
import fnmatch
import glob
import io
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from pathlib import Path
from typing import IO, Any, BinaryIO, NamedTuple, Union

from ledgerviz.ledger.compressed import ZSTD_SUFFIX, StreamEnd, zstd_chunks
from ledgerviz.ledger.diagnostics import UnreadableSourceError

Source = Union[str, "os.PathLike[str]", IO[bytes], list[Any], tuple[Any, ...]]

_GLOB_CHARS = frozenset("*?[")

UTF8_BOM = b"\xef\xbb\xbf"

LEDGER_SUFFIXES = (".jsonl", ZSTD_SUFFIX)
"""File names a folder walk reads (a ``.jsonl.zst`` only when no plain ``.jsonl`` sibling
holds the same lines)."""

GEMINI_LEGACY = f"*{os.sep}chats{os.sep}session-*.json"
"""Gemini CLI's one-object chats, read by a walk unless a resume rewrote one as ``.jsonl``
beside it."""

COMPRESSED_SUFFIXES = (".jsonl.gz", ".jsonl.zstd")
"""File names a folder walk reports as compressed ledgers it cannot read."""


class SourceProblem:
    """Why a file found while walking a folder gives no bytes (read as one diagnostic).

    It stands in for the file's content (or its only chunk); it is not iterable, so
    it cannot be mistaken for bytes.
    """

    __slots__ = ("kind", "message")

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.message = message

    def __repr__(self) -> str:
        return f"SourceProblem({self.kind!r}, {self.message!r})"

    @classmethod
    def of(cls, error: OSError) -> SourceProblem:
        """Return the problem of a file whose open or read raised ``error``."""
        if isinstance(error, NotAFileError):
            return cls("not_a_file", f"{read_error_text(error)}: skipped")
        return cls("unreadable", read_error_text(error))


class Found(NamedTuple):
    """A file a path names (as ``str(Path(...))`` gives it), why it cannot be read when it
    was found in a folder, and whether it was (such a file that cannot be opened gives a
    ``SourceProblem`` when it is read, where a file named directly raises)."""

    path: str
    problem: SourceProblem | None
    walked: bool = False


def iter_sources(source: Source) -> Iterator[tuple[str, bytes | SourceProblem]]:
    """Yield ``(path, content)`` for every ledger file ``source`` names, in a stable order.

    ``source`` is a file path, a folder (every ``*.jsonl`` below it, sorted), a glob
    pattern, a binary file object, or a list/tuple of those. A file found in a folder
    that cannot be read yields a ``SourceProblem`` instead of bytes; a path named
    directly that cannot be read raises ``UnreadableSourceError``.
    """
    for name, chunks in iter_source_chunks(source):
        pieces = list(chunks)
        if len(pieces) == 1 and isinstance(pieces[0], SourceProblem):
            yield name, pieces[0]
        else:
            yield name, b"".join(pieces)  # one chunk: joined without a copy


def iter_source_chunks(
    source: Source, chunk_size: int | None = None
) -> Iterator[tuple[str, Iterator[bytes | SourceProblem]]]:
    """Yield ``(path, chunks)`` for every ledger file ``source`` names (see ``iter_sources``).

    A file is read as its chunks are consumed, ``chunk_size`` bytes at a time (None: the
    whole file as one chunk), so a caller can read a file larger than memory. A file
    found in a folder that cannot be read has one "chunk": its ``SourceProblem``.
    """
    if isinstance(source, list | tuple):
        for item in source:
            yield from iter_source_chunks(item, chunk_size)
    elif hasattr(source, "read"):
        yield str(getattr(source, "name", "<stream>")), _stream_chunks(source, chunk_size)
    elif isinstance(source, str | os.PathLike):
        for found in expand_found(os.fspath(source)):
            yield found.path, found_chunks(found, chunk_size)
    else:
        raise TypeError(f"cannot read a ledger from {type(source).__name__}")


def file_identity(stat: os.stat_result) -> tuple[int, int]:
    """Return which file an opened one is: its inode and device."""
    return stat.st_ino, stat.st_dev


class FileOrigin:
    """A plain file being read, which its bytes can be read from again: its path, and its
    ``file_identity`` once read to its end (None before, or when it was not)."""

    __slots__ = ("identity", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.identity: tuple[int, int] | None = None


class FileChunks(Iterator[bytes | SourceProblem]):
    """A file's chunks as they are read, with the file they come from (``origin``, None
    for one that cannot be read again byte for byte: a compressed one) and, for a
    compressed one, how its stream ended (``end``, known once it is read)."""

    __slots__ = ("_chunks", "end", "origin")

    def __init__(self, chunks: Iterator[bytes | SourceProblem], origin: FileOrigin | None,
                 end: StreamEnd | None = None) -> None:
        self._chunks = chunks
        self.origin = origin
        self.end = end

    def __next__(self) -> bytes | SourceProblem:
        return next(self._chunks)


def same_file(chunks: Iterator[bytes | SourceProblem], source: Iterable[bytes | SourceProblem]
              ) -> Iterator[bytes | SourceProblem]:
    """Return ``chunks``, read from ``source``, with the file ``source`` comes from and how
    its stream ended when ``source`` is a ``FileChunks`` (``chunks`` itself otherwise)."""
    if isinstance(source, FileChunks):
        return FileChunks(chunks, source.origin, source.end)
    return chunks


def found_chunks(found: Found, chunk_size: int | None = None) -> Iterator[bytes | SourceProblem]:
    """Return the chunks of a file :func:`expand_found` gave (see ``iter_source_chunks``):
    read as they are consumed (a ``FileChunks``), or its ``SourceProblem`` as the only one."""
    if found.problem:
        return iter([found.problem])
    if found.path.endswith(ZSTD_SUFFIX):
        end = StreamEnd()
        return FileChunks(_file_chunks(found.path, chunk_size, found.walked, end=end), None,
                          end)
    origin = FileOrigin(found.path)
    return FileChunks(_file_chunks(found.path, chunk_size, found.walked, origin), origin)


def expand_path(text: str) -> list[Path]:
    """Return the files a path, folder or glob pattern names, in the order a load reads them.

    A folder gives every ``*.jsonl`` below it (and compressed ledgers, which a load
    reports), sorted; a glob (``**`` recursive) gives its sorted matches, each expanded
    in turn. Files found in folders that a load reports as unreadable are included. A
    name matching nothing, or naming a pipe or device, raises ``UnreadableSourceError``.
    """
    return [Path(found.path) for found in expand_found(text)]


def expand_found(text: str) -> list[Found]:
    """Return the files a path, folder or glob pattern names; refuse names matching nothing.

    A leading ``~`` is the user's home folder (``~/.claude/projects``).
    A path named directly must be a regular file (a FIFO or device would block or never
    end). Files found in folders that cannot be read become ``SourceProblem``s. An empty
    name is refused: ``Path("")`` is the current folder, which an unset shell variable
    should not read.
    """
    if not text:
        raise UnreadableSourceError("an empty path names no file (an unset variable?)")
    text = os.path.expanduser(text)
    path = Path(text)
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except OSError as error:  # a symlink loop, a name too long, permission on a parent
        raise UnreadableSourceError(f"{text}: cannot read: {error.strerror or error}") from error
    if info is not None and stat.S_ISDIR(info.st_mode):
        found = _walk_folder(path)
        if not found:
            raise UnreadableSourceError(f"{text}: folder holds no *.jsonl file")
        return found
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableSourceError(f"{text}: {_special_kind(info.st_mode)}, not a file")
        return [Found(str(path), None)]
    if _GLOB_CHARS.intersection(text):
        matches = _recursive_glob(text) if "**" in text else sorted(glob.glob(text))
        if not matches:
            raise UnreadableSourceError(f"{text}: no file matches this pattern")
        return [found for match in matches for found in expand_found(match)]
    if path.is_symlink():
        raise UnreadableSourceError(f"{text}: broken symbolic link")
    raise UnreadableSourceError(f"{text}: no such file or folder")


def _recursive_glob(pattern: str) -> list[str]:
    """Return the files matching a ``**`` pattern, walking each folder once (loop-safe).

    ``glob.glob(recursive=True)`` follows symbolic links to folders without noticing a
    loop, which can take exponential time; this walks the fixed prefix of the pattern
    with the same loop guard as a folder walk and matches every path found.
    """
    parts = Path(pattern).parts
    fixed = next(i for i, part in enumerate(parts) if _GLOB_CHARS.intersection(part))
    root = Path(*parts[:fixed]) if fixed else Path(".")
    variants = {pattern, pattern.replace("**/", "")}
    texts = _walk(root, lambda error: None)
    return sorted(text for text in texts if any(fnmatch.fnmatchcase(text, v) for v in variants))


def _walk(root: Path, onerror: Callable[[OSError], None], regular: set[str] | None = None
          ) -> Iterator[str]:
    """Yield every file below ``root`` (as ``str(Path(folder, name))``), following
    symlinked folders once (a loop ends); add to ``regular`` those its folder's entries
    say are regular files (see ``_regular_names``)."""
    seen: set[tuple[int, int]] = set()
    for folder, subfolders, files in os.walk(root, onerror=onerror, followlinks=True):
        try:
            info = os.stat(folder)
        except OSError as error:
            onerror(error)
            subfolders[:] = []
            continue
        if (info.st_dev, info.st_ino) in seen:
            subfolders[:] = []  # a symlink back to a folder already walked
            continue
        seen.add((info.st_dev, info.st_ino))
        subfolders.sort()
        prefix = str(Path(folder, "_"))[:-1]  # what Path adds before any name in the folder
        if regular is not None:
            regular.update([prefix + name for name in _regular_names(folder)])
        for name in sorted(files):
            yield prefix + name


def _regular_names(folder: str) -> list[str]:
    """Return the names of the regular files (not symbolic links) in ``folder`` that a walk
    may read, as its entries' types tell them without a system call per file (none when it
    cannot be listed again: its files are then looked at one by one). Where the file
    system does not give entry types, only the names a walk may read are looked up."""
    try:
        with os.scandir(folder) as entries:
            return [entry.name for entry in entries if entry.name.endswith(_WALKED_SUFFIXES)
                    and entry.is_file(follow_symlinks=False)]
    except OSError:
        return []


_WALKED_SUFFIXES = (*LEDGER_SUFFIXES, ".json")
"""The names a walk may read (``LEDGER_SUFFIXES``, and Gemini's legacy ``.json`` chats)."""


def _walk_folder(root: Path) -> list[Found]:
    """Return every ``*.jsonl`` below ``root`` (sorted) and a problem for each file or
    subfolder that cannot be read. Symlinked folders are followed once: a loop ends."""
    found: list[Found] = []

    def unreadable(error: OSError) -> None:
        where = Path(error.filename) if error.filename else root
        problem = SourceProblem("unreadable", f"cannot read folder: {error.strerror or error}")
        found.append(Found(str(where), problem, walked=True))

    regular: set[str] = set()
    paths = list(_walk(root, unreadable, regular))
    plain = {path for path in paths if path.endswith(".jsonl")}
    for path in paths:
        if path.endswith(ZSTD_SUFFIX) and path.removesuffix(".zst") in plain:
            continue  # its plain sibling wins
        if path.endswith(LEDGER_SUFFIXES) or (
                fnmatch.fnmatchcase(path, GEMINI_LEGACY) and f"{path}l" not in plain):
            problem = None if path in regular else _file_problem(path)
            found.append(Found(path, problem, walked=True))
        elif path.endswith(COMPRESSED_SUFFIXES):
            message = "compressed ledger: decompress it to read it (ledgerviz reads JSONL)"
            found.append(Found(path, SourceProblem("compressed_file", message), walked=True))
    return sorted(found, key=itemgetter(0))


def _file_problem(path: str) -> SourceProblem | None:
    """Return why a ``*.jsonl`` found in a folder is no file to read, or None (whether it can
    be opened is seen when it is read: opening it twice would cost two more system calls)."""
    try:
        info = os.stat(path)
    except OSError as error:
        return SourceProblem("unreadable", f"cannot read: {error.strerror or error}")
    if not stat.S_ISREG(info.st_mode):
        return SourceProblem("not_a_file", f"{_special_kind(info.st_mode)}, not a file: skipped")
    return None


def _special_kind(mode: int) -> str:
    """Return what a non-regular, non-folder file is."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def valid_unicode(text: str) -> str:
    """Return ``text`` (a file name, or a message quoting one) as valid Unicode: the bytes
    of a non-UTF-8 name, held as lone surrogates, become ``\\xNN``."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file name produces
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "backslashreplace")


class NotAFileError(OSError):
    """An opened path that is no regular file (a FIFO, device or socket)."""


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def open_input(path: str) -> BinaryIO:
    """Return ``path`` opened for reading (unbuffered), checked to be a regular file.

    The open cannot block (``O_NONBLOCK``: a FIFO without a writer opens at once), and
    what was opened is checked on its descriptor (``fstat``), so a file swapped for a
    FIFO or a device after a folder walk is refused, not read. Raises ``NotAFileError``
    for such a file and ``OSError`` when it cannot be opened. Every route that reads an
    input file opens it here.
    """
    return open_identified(path)[0]


def open_identified(path: str) -> tuple[BinaryIO, tuple[int, int]]:
    """Return ``path`` opened as :func:`open_input` opens it, and its ``file_identity``
    (from the same ``fstat``: an open file's identity does not change)."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFileError(errno.EINVAL, f"{_special_kind(info.st_mode)}, not a file",
                                path)
        os.set_blocking(fd, True)
        # what ``os.fdopen(fd, "rb", buffering=0)`` makes, directly
        return io.FileIO(fd, "rb"), file_identity(info)
    except BaseException:
        os.close(fd)
        raise


def read_error_text(error: OSError) -> str:
    """Return why a file could not be read, for a message that names it."""
    if isinstance(error, NotAFileError):
        return str(error.strerror)
    return f"cannot read: {error.strerror or error}"


def _file_chunks(
    path: str, size: int | None, walked: bool = False, origin: FileOrigin | None = None,
    end: StreamEnd | None = None,
) -> Iterator[bytes | SourceProblem]:
    """Yield the file as it is now, ``size`` bytes at a time (None: all at once); ``origin``
    is given its identity when the last chunk has been read, ``end`` how a compressed
    file's stream ended.

    A file found in a folder (``walked``) that cannot be opened, or is no regular file
    once opened, yields its ``SourceProblem`` instead; any other failure to read raises
    ``UnreadableSourceError``.
    """
    opened = False
    try:
        raw, identity = open_identified(path)
        with raw:
            opened = True
            if path.endswith(ZSTD_SUFFIX):
                yield from _zstd_file_chunks(raw, path, size, walked, end)
                return
            if size is not None:
                while chunk := raw.read(size):
                    yield chunk
                if origin is not None:
                    origin.identity = identity
                return
            content = raw.readall()  # a snapshot, even while the file is appended to
            if origin is not None:
                origin.identity = identity
        yield content
    except OSError as error:
        if opened or not walked:
            raise UnreadableSourceError(f"{path}: {read_error_text(error)}") from error
        yield SourceProblem.of(error)


def _zstd_file_chunks(
    raw: IO[bytes], path: str, size: int | None, walked: bool, end: StreamEnd | None
) -> Iterator[bytes | SourceProblem]:
    """Yield a ``.jsonl.zst`` file decompressed (see ``_file_chunks``; a stream cut short
    says so in ``end``): one that cannot be decompressed from its start is a
    ``SourceProblem`` when found in a folder; any other failure raises
    ``UnreadableSourceError``."""
    chunks = zstd_chunks(raw, size, end)
    try:
        yield next(chunks, b"")
    except (ImportError, ValueError) as error:
        if not walked:
            raise UnreadableSourceError(f"{path}: {error}") from error
        yield SourceProblem("compressed_file", str(error))
        return
    try:
        yield from chunks
    except ValueError as error:
        raise UnreadableSourceError(f"{path}: {error}") from error


def _stream_chunks(stream: IO[bytes], size: int | None) -> Iterator[bytes]:
    """Yield a binary file object's bytes to its end, ``size`` at a time (None: all at once)."""
    name = str(getattr(stream, "name", "<stream>"))
    while True:
        try:
            content = stream.read(-1 if size is None else size)
        except OSError as error:
            raise UnreadableSourceError(f"{name}: cannot read: {error}") from error
        if not isinstance(content, bytes | bytearray | memoryview):
            raise UnreadableSourceError(f"{name}: file object is in text mode; open it with 'rb'")
        if not content:
            return
        yield bytes(content)
        if size is None:
            return
