"""What the Claude Code reader keeps of each record between its two passes.

The first pass decodes every line once, checks it into a ``Record`` with its diagnostics,
and keeps only an ``Entry``: the record's graph facts (what the branch plan, the
sidechain split and the refusal scan read) and its place in the file. The decoded dict is
let go at once, so a transcript is never held as dicts. While the typed route is writing
during the first pass, not even the ``Entry`` is kept: only the record's line, and the
session's gist (``claude_code._Gist``); the entries are made again from those lines if the
route gives up (``claude_code._Kept``). The second pass (none for a session
the typed route wrote during the first: ``claude_code_typed.FileOrder``) writes the events
record by record, each record decoded again from its line's bytes (``RecordSource``),
read back from the file (or from the lines held, for an input that cannot be read again),
a run of lines at a time (``reread.lines_again``): as dicts, or, for a writer that reads
only some fields, as the ``msgspec`` structs of those fields (``RecordSource.typed``).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from typing import Any, NamedTuple

from msgspec import Struct

from ledgerviz.ledger.formats.claude_code_fields import RECORD, Facts, facts_of
from ledgerviz.ledger.formats.claude_code_records import (
    INTERRUPT_FOR_TOOL,
    Record,
    block_text,
    content_blocks,
    is_rejection,
    new_record,
)
from ledgerviz.ledger.reread import LineSource, Typed, lines_again


class Marks(NamedTuple):
    """What one record shows about refused calls (``claude_code_events.refusals``)."""

    ran: tuple[str, ...]
    """Calls it shows running: a ``progress`` record's, or the results of a user record
    with a structured ``toolUseResult``."""
    rejected: tuple[str, ...]
    """Calls whose result in it is Claude Code's fixed refusal."""
    interrupted: bool
    """Whether it holds the interrupt note of a tool use."""


class Entry(Struct, gc=False):
    """One record as the reader holds it between its passes (a ``Record`` less its
    decoded fields; see ``Record`` for the ones they share): a struct untracked by the
    garbage collector, 40 bytes smaller than a tuple of its fields, made in one C call."""

    index: int
    """Its position among the file's records (that of its line's byte range)."""
    line: int
    kind: str
    uuid: str | None
    parent: str | None
    time: int | None
    session: str | None
    sidechain: bool
    prompt: bool
    has_message: bool
    """Whether it has a ``message`` object."""
    key: str | None
    """An assistant record's step key: ``message.id``, else its ``uuid``."""
    cwd: str | None
    """Its ``cwd`` when a string."""
    agent: str | None
    """A sidechain record's ``agentId`` when a non-empty string."""
    marks: Marks | None
    """What it shows about refused calls (None: nothing)."""


def entry_of(record: Record, index: int, shared: dict[Any, Any] | None) -> Entry:
    """Return the entry of ``record``, the file's ``index``-th (``shared``: one object per
    equal string met, so that repeated ids and paths are held once; None for an entry not
    held)."""
    raw, message = record.raw, record.message
    key = None
    if record.kind == "assistant":
        found = message.get("id") if message is not None else None
        key = found if isinstance(found, str) else record.uuid
    agent = raw.get("agentId") if record.sidechain else None
    return new_entry(shared, index, record.line, record.kind, record.uuid, record.parent,
                     record.time, record.session, record.sidechain, record.prompt,
                     message is not None, key, raw.get("cwd"), agent, _marks(record))


def new_entry(shared: dict[Any, Any] | None, index: int, line: int, kind: str,
              uuid: str | None, parent: str | None, time: int | None, session: str | None,
              sidechain: bool, prompt: bool, has_message: bool, key: str | None, cwd: Any,
              agent: Any, marks: Marks | None) -> Entry:
    """Return an ``Entry`` of these fields (``cwd``/``agent``: as read, kept when a string,
    a non-empty one for ``agent``), its repeated strings shared unless ``shared`` is None
    (an entry not held: see ``entry_of``; a ``parentUuid`` naming the record before is the
    very string of that record's ``uuid``; the ``uuid``s are not held in ``shared``, each
    being met once)."""
    cwd = cwd if cwd.__class__ is str else None
    if shared is not None:
        share = shared.setdefault
        if parent is not None:
            last = shared.get(_LAST_UUID)
            parent = last if parent == last else share(parent, parent)
        if uuid is not None:
            shared[_LAST_UUID] = uuid
        session = session if session is None else share(session, session)
        key = key if key is None else share(key, key)
        cwd = cwd if cwd is None else share(cwd, cwd)
    return Entry(index, line, kind, uuid, parent, time, session, sidechain, prompt,
                 has_message, key, cwd, agent if agent.__class__ is str and agent else None,
                 marks)


_LAST_UUID = object()
"""Where ``shared`` holds the ``uuid`` of the last record with one."""




def _marks(record: Record) -> Marks | None:
    """Return what ``record`` shows about refused calls, or None when nothing."""
    if record.kind == "progress":
        ran = tuple(record.raw[key] for key in ("toolUseID", "parentToolUseID")
                    if isinstance(record.raw.get(key), str))
        return Marks(ran, (), False) if ran else None
    if record.kind != "user" or record.prompt or record.message is None:
        return None
    structured = isinstance(record.raw.get("toolUseResult"), dict)
    ran: list[str] = []
    rejected: list[str] = []
    interrupted = False
    for block in content_blocks(record.message):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            interrupted = interrupted or block_text(block).startswith(INTERRUPT_FOR_TOOL)
        elif kind == "tool_result":
            call = block.get("tool_use_id")
            if isinstance(call, str):
                if structured:
                    ran.append(call)
                if is_rejection(block):
                    rejected.append(call)
    if not (ran or rejected or interrupted):
        return None
    return Marks(tuple(ran), tuple(rejected), interrupted)


RUN_BYTES = 16 * 1024, 1024 * 1024
"""How many bytes of lines a miss reads at once, least and most: the records from the one
asked for on, which the writer, going mostly in file order, asks for next. A run that
follows the one before it is twice as long (up to the most); one that does not (a rewind
written out of file order) starts again from the least."""


class RecordSource:
    """Every record of a file, decoded again from its line's bytes when asked for."""

    def __init__(self, lines: LineSource, start: array, stop: array,
                 exact: array | None = None) -> None:
        """``start``/``stop``: the byte range of each record's line in ``lines``;
        ``exact``: the records holding an integer beyond 64 bits, in order (decoded the
        exact way, as the first pass read them; its warning given then)."""
        self._lines = lines
        self._exact = array("q") if exact is None else exact
        self._start = start
        self._stop = stop
        self._first = 0
        """The first record ``_run`` holds."""
        self._run: list[Any] = []
        """The decoded lines of the records last read."""
        self._typed: Typed | None = None
        """What ``_run`` holds: the structs of these fields, or (None) dicts."""
        self._size = RUN_BYTES[0]
        """How many bytes the next run reads."""

    def forget(self) -> None:
        """Let go of the records last read (a later ask reads them again)."""
        self._first, self._run, self._typed = 0, [], None

    def holds_exact(self) -> bool:
        """Return whether some record holds an integer beyond 64 bits."""
        return bool(self._exact)

    def raw(self, index: int) -> dict[str, Any]:
        """Return the decoded line of record ``index``."""
        return self._decoded(index, None)

    def facts(self, entry: Entry) -> Facts:
        """Return the ``Facts`` of ``entry``'s record, its line read again."""
        return facts_of(entry.kind, self.typed(entry.index, RECORD))

    def typed(self, index: int, fields: Typed) -> Any:
        """Return the struct of ``fields`` the line of record ``index`` decodes to."""
        return self._decoded(index, fields)

    def _decoded(self, index: int, typed: Typed | None) -> Any:
        at = index - self._first
        if typed is not self._typed or not 0 <= at < len(self._run):
            self._read_from(index, typed)
            at = 0
        return self._run[at]

    def full(self, entry: Entry) -> Record:
        """Return the ``Record`` of ``entry``, its line decoded again."""
        raw = self.raw(entry.index)
        message = raw.get("message")
        return new_record(Record, (entry.line, entry.kind, raw, entry.uuid, entry.parent,
                                    entry.time, entry.session, entry.sidechain,
                                    message if message.__class__ is dict else None,
                                    entry.prompt))

    def _read_from(self, index: int, typed: Typed | None) -> None:
        """Read and decode the lines of records ``index`` on (see ``RUN_BYTES``), as
        ``typed`` structs when given."""
        follows = index == self._first + len(self._run) and typed is self._typed
        self._size = min(self._size * 2, RUN_BYTES[1]) if follows else RUN_BYTES[0]
        starts = self._start
        stop = max(index + 1, bisect_right(starts, starts[index] + self._size, index))
        exact = self._exact
        held = exact[bisect_left(exact, index):bisect_left(exact, stop)]
        self._run = lines_again(self._lines, starts[index:stop], self._stop[index:stop],
                                lambda at: f"the line of record {index + at}",
                                [row - index for row in held], typed)
        self._first, self._typed = index, typed
