"""The bytes of a file that cannot be read again (a stream, a decompressed ``.jsonl.zst``),
held so that its lines can be decoded again on demand (``tabled.TableRows``).

What no line read again needs is not held: a chunk of whitespace alone (blank lines, or
spaces around a line's JSON) and a line that spans chunks and cannot be an event, one
holding a NUL byte (JSON never holds one) or longer than the reader's cap
(``reader.MAX_LINE_UNITS``), which the reader only measures. So a small file that
decompresses to gigabytes of blank lines, or of one line, is not held either; the bytes
held keep their offsets.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right


class HeldBytes:
    """A file's bytes taken a chunk at a time and held in runs, without what no line read
    again needs (see the module docstring)."""

    def __init__(self, max_line: int | None = None) -> None:
        """``max_line``: the longest line the reader reads (None: ``MAX_LINE_UNITS``)."""
        from ledgerviz.ledger.reader import MAX_LINE_UNITS, utf16_units  # it imports tabled

        self.max_line = MAX_LINE_UNITS if max_line is None else max_line
        self._units = utf16_units
        self._runs: list[list[bytes]] = []
        """The bytes held, in runs of chunks, each run contiguous in the file."""
        self._starts: list[int] = []
        """The file offset of each run's first byte."""
        self._run_end = -1
        """The file offset after the last run."""
        self._size = 0
        """The bytes taken."""
        self._line_at = 0
        """The file offset of the line not ended yet (after the last newline taken)."""
        self._newlines: list[int] = []
        """The file offsets of the newlines not held that may end or start a line read
        again (the first and last of each chunk of whitespace not held, the one ending each
        line let go), ascending."""
        self._line_units = 0
        self._dropping = False
        """Whether the line not ended yet cannot be an event (its bytes not held)."""

    def take(self, chunk: bytes) -> None:
        """Hold the next chunk of the file, but what no line read again needs."""
        start = self._size
        self._size += len(chunk)
        first = chunk.find(b"\n")
        if first == -1:
            open_part = chunk
        else:
            last = chunk.rfind(b"\n")
            self._line_at, self._line_units = start + last + 1, 0
            open_part = chunk[last + 1:]
        if chunk.isspace():  # the newlines that end or start a line read again: noted
            if first != -1:
                self._newlines += (start + first, start + last)
        elif not self._dropping:
            self._hold(start, chunk)
        elif first != -1:  # the line let go ends in this chunk
            self._newlines.append(start + first)
            self._hold(start + first + 1, chunk[first + 1:])
        if first != -1:
            self._dropping = False
        self._line_units += self._units(open_part)
        if not self._dropping and (b"\0" in open_part or self._line_units > self.max_line):
            self._let_go_of_open_line()

    def _hold(self, at: int, data: bytes) -> None:
        """Hold ``data``, which starts at file offset ``at``."""
        if at != self._run_end:
            self._runs.append([])
            self._starts.append(at)
        self._runs[-1].append(data)
        self._run_end = at + len(data)

    def _let_go_of_open_line(self) -> None:
        """Let go of the bytes held of the line not ended yet, and of what comes of it."""
        self._dropping = True
        line_at = self._line_at
        while self._runs and self._starts[-1] >= line_at:
            self._runs.pop()
            self._starts.pop()
        if not self._runs:
            self._run_end = -1
            return
        run, keep = self._runs[-1], line_at - self._starts[-1]
        size = 0
        for index, chunk in enumerate(run):
            if size + len(chunk) >= keep:
                del run[index + 1:]
                run[index] = chunk[:keep - size]
                break
            size += len(chunk)
        self._run_end = min(self._run_end, line_at)

    def content(self) -> bytes | SparseBytes:
        """Return the bytes held: the file's bytes when nothing was let go, else a
        ``SparseBytes`` of the runs."""
        runs = [b"".join(run) for run in self._runs]
        if self._starts == [0] and len(runs[0]) == self._size:
            return runs[0]
        return SparseBytes(self._starts, runs, self._newlines)


class SparseBytes:
    """Runs of a file's bytes at their offsets, sliced as the file would be; the bytes
    between runs (not held) read as spaces but for the newlines noted, which is all a line
    read again sees of them (whitespace within it, a newline before and after it)."""

    __slots__ = ("_newlines", "_runs", "_starts")

    def __init__(self, starts: list[int], runs: list[bytes], newlines: list[int]) -> None:
        self._starts = starts
        self._runs = runs
        self._newlines = newlines

    def _gap(self, start: int, stop: int) -> bytes:
        """Return bytes ``start`` to ``stop``, none of them held."""
        gap = bytearray(b" " * (stop - start))
        newlines = self._newlines
        for at in newlines[bisect_left(newlines, start):bisect_left(newlines, stop)]:
            gap[at - start] = 10
        return bytes(gap)

    def __getitem__(self, span: slice) -> bytes:
        start, stop = span.start or 0, span.stop
        parts = []
        at = start
        run = max(bisect_right(self._starts, start) - 1, 0)
        while at < stop and run < len(self._runs):
            first = self._starts[run]
            if at < first:  # between runs
                parts.append(self._gap(at, min(first, stop)))
                at = min(first, stop)
                continue
            piece = self._runs[run][at - first:stop - first]
            parts.append(piece)
            at += len(piece)
            run += 1
        return b"".join(parts)
