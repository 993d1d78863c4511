"""Resumed Claude Code sessions linked across files: a new session's file may begin with a
copy of an earlier session's records (same ``uuid``s, its own ``sessionId``). Those leading
events are an inherited prefix, counted once, in the earliest session holding them
(``FOREIGN_FORMATS.md`` §5), as a dsh fork seed: ``isSeeded``, ``parentSession`` and a
``session/end-seed {inherited: true}`` after them (stdlib)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ledgerviz.ledger.diagnostics import Diagnostic
from ledgerviz.ledger.formats.claude_code_events import LOG_ONLY_PREFIX
from ledgerviz.ledger.session import SessionLog
from ledgerviz.ledger.table import EventTable, seq_column
from ledgerviz.wording import counted, one_or_many

Event = dict[str, Any]


def link_resumes(logs: list[SessionLog], format_name: str) -> list[SessionLog]:
    """Return ``logs`` with each Claude Code session (read as ``format_name``) that begins
    with a copy of an earlier one's records, from its first, seeded from it. Sessions are
    taken oldest first (by their first and last times); subagents and sessions already
    seeded keep their lineage."""
    candidates = [i for i, log in enumerate(logs)
                  if log.format == format_name and log.header.get("origin") != "subagent"]
    if len(candidates) < 2:
        return logs
    candidates.sort(key=lambda i: (logs[i].header.get("createdAt") or 0, _last_time(logs[i])))
    owner: dict[str, int] = {}
    firsts: dict[str, int] = {}  # the first record of each session: where a copy begins
    linked = list(logs)
    for index in candidates:
        log = logs[index]
        keys = list(filter(None, map(record_key, log.events)))
        if not log.header.get("isSeeded") and keys and firsts.get(keys[0]) is not None:
            copied = _copied_prefix(log, owner, firsts[keys[0]])
            linked[index] = _seeded(log, copied, logs[firsts[keys[0]]].key)
        for key in keys:
            owner.setdefault(key, index)
        if keys:
            firsts.setdefault(keys[0], index)
    return linked


def _last_time(log: SessionLog) -> int:
    """Return the time of a session's last event that has one (0 if none)."""
    return next((e["time"] for e in reversed(log.events) if type(e.get("time")) is int), 0)


def record_key(event: Event) -> str | None:
    """Return the id of the Claude Code record an event was written for (None for the
    turn and step events the reader adds): a user message's ``uuid``, an assistant
    message's ``message.id``, a result's record ``uuid``, a log-only record's ``uuid``."""
    kind, data = event["type"], event["data"]
    if kind == "user/message":
        key = data.get("id")
    elif kind in ("assistant/message", "tool/result"):
        key = data["message"].get("id")
    elif kind.startswith(LOG_ONLY_PREFIX):
        key = data.get("uuid")
    else:
        return None
    return key if isinstance(key, str) else None


def _copied_prefix(log: SessionLog, owner: dict[str, int], parent: int) -> int:
    """Return how many leading events copy session ``parent``'s records (the file's first
    record is that session's first). The events written for the first record of its own
    belong to it, including the closers of the copied turn that record triggers."""
    for event, line in zip(log.events, log.lines, strict=True):
        key = record_key(event)
        if key is not None and owner.get(key) != parent:
            return next(i for i, held in enumerate(log.lines) if held >= line)
    return len(log.events)


def _seeded(log: SessionLog, copied: int, parent: str) -> SessionLog:
    """Return ``log`` with its first ``copied`` events inherited from session ``parent``."""
    marker = {"type": "session/end-seed", "seq": copied,
              "time": log.events[copied - 1].get("time"), "data": {"inherited": True}}
    events = [*log.events[:copied], marker, *(_shifted(e, copied) for e in log.events[copied:])]
    lines = [*log.lines[:copied], log.lines[copied - 1], *log.lines[copied:]]
    note = Diagnostic(log.path, log.lines[copied - 1], "copied_prefix", "info",
                      f"the first {counted(copied, 'event')} "
                      f"{one_or_many(copied, 'copies', 'copy')} session {parent}'s records (a "
                      "resume): read as inherited from it")
    header = {**log.header, "isSeeded": True, "parentSession": parent}
    table = None if log.table is None else _seeded_table(log.table, copied, marker, lines[copied])
    return replace(log, header=header, events=events, lines=lines, fields=None, table=table,
                   diagnostics=[*log.diagnostics, note])


def _seeded_table(table: EventTable, copied: int, marker: Event, line: int) -> EventTable:
    """Return ``table`` with ``marker`` (read from ``line``) inserted at row ``copied`` and
    every later seq one on (the references ``_shifted`` moves are no table column)."""
    after = table.rows(copied, len(table))
    after = replace(after, seq=seq_column([seq + 1 for seq in after.seq]))
    return EventTable.joined([table.rows(0, copied), EventTable.of([marker], [line], copied),
                              after])


def _shifted(event: Event, start: int) -> Event:
    """Return a copy of ``event`` one seq later, with its references to seqs from ``start``
    on (cited results, replaced and rewound ranges) one later too."""

    def moved(seq: Any) -> Any:
        return seq + 1 if type(seq) is int and seq >= start else seq

    shifted = {**event, "seq": event["seq"] + 1}
    if "sourceEventSeqs" in event:
        shifted["sourceEventSeqs"] = [moved(s) for s in event["sourceEventSeqs"]]
    op = event.get("surfaceOp")
    if isinstance(op, dict):
        shifted["surfaceOp"] = {**op, "startSeq": moved(op["startSeq"]),
                                "endSeq": moved(op["endSeq"])}
    if event["type"] == "surface/rewind":
        data = event["data"]
        shifted["data"] = {"start": moved(data["start"]), "end": moved(data["end"]),
                           "shadowedSeqs": [moved(s) for s in data["shadowedSeqs"]]}
    return shifted
