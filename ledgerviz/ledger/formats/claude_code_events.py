"""Claude Code records written as dsh v4 events (``LEDGER_FORMAT.md`` §4): turns, steps,
assistant messages with tool calls, dispatches, results, rewinds (stdlib + orjson).

- A typed prompt opens a turn (closing the one before it); assistant records sharing
  ``message.id`` are one step, one ``assistant/message`` whose usage is counted once.
- A ``tool_use`` is logged before it runs, so it gets a ``tool/call`` unless its result is
  Claude Code's fixed refusal alone: that result gets code ``TOOL_NOT_STARTED``. A refusal
  that also shows the tool running (an interrupt note in its turn, a ``progress`` record for
  it, a structured ``toolUseResult``) gets ``TOOL_OUTCOME_UNKNOWN``. ``is_error`` counts
  only when it is ``true``.
- A rewind writes the abandoned branch, then a ``surface/rewind`` hiding its messages, then
  the active branch; a compaction summary replaces the surface (``LEDGER_FORMAT.md`` §6).
- A result whose ``toolUseResult`` names an ``agentId`` (a ``Task``/``Agent`` call) is
  followed by a ``subagent/catalog`` naming the child session ``agent-<agentId>`` and the
  call (``callId``): the lineage's anchor of that subagent. So is the result of a call the
  reader is told started an inline sidechain (``claude_code_sidechains``), naming it.
- Every other record is a log-only ``claude-code/<kind>`` event holding the record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ledgerviz.ledger.diagnostics import DiagnosticSink
from ledgerviz.ledger.formats.claude_code_branches import Branches
from ledgerviz.ledger.formats.claude_code_entries import Entry, RecordSource
from ledgerviz.ledger.formats.claude_code_records import (
    INTERRUPT_PREFIX,
    Record,
    block_text,
    content_blocks,
    tool_results,
)
from ledgerviz.ledger.formats.sealed import EventStore
from ledgerviz.ledger.numbers import json_text
from ledgerviz.recovery.vocab import StatusReason

LOG_ONLY_PREFIX = "claude-code/"
NOT_STARTED = {"name": "ToolRejectedError", "code": "TOOL_NOT_STARTED"}
OUTCOME_UNKNOWN = {"name": "ToolInterruptedError", "code": "TOOL_OUTCOME_UNKNOWN"}
_USAGE_KEYS = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
               ("cacheReadTokens", "cache_read_input_tokens"),
               ("cacheWriteTokens", "cache_creation_input_tokens"))


def refusals(entries: Sequence[Entry], order: Sequence[int], in_chain: Sequence[bool]
             ) -> dict[str, StatusReason]:
    """Return the calls whose result is Claude Code's refusal, by call id: ``rejected by
    user`` when nothing shows the tool running, else ``interrupted mid-run`` (``in_chain``:
    which records are this session's conversation)."""
    refused: dict[str, int] = {}
    ran: set[str] = set()
    interrupted_turns: set[int] = set()
    turn = 0
    for index in order:
        entry = entries[index]
        if entry.kind == "progress":
            if entry.marks is not None:
                ran.update(entry.marks.ran)
        elif not in_chain[index]:
            continue
        elif entry.prompt:
            turn += 1
        elif entry.kind == "user" and entry.marks is not None:
            ran.update(entry.marks.ran)
            if entry.marks.interrupted:
                interrupted_turns.add(turn)
            for call in entry.marks.rejected:
                refused[call] = turn
    return {call: "interrupted mid-run" if call in ran or turn in interrupted_turns
            else "rejected by user" for call, turn in refused.items()}


class EventWriter:
    """Writes the events of one session, record by record in the branch plan's order."""

    def __init__(self, entries: Sequence[Entry], source: RecordSource, in_chain: Sequence[bool],
                 branches: Branches, reasons: dict[str, StatusReason], log: DiagnosticSink,
                 children: Mapping[str, str]) -> None:
        self.entries = entries
        self.source = source
        """Where each record is decoded again from when its events are written."""
        self.children = children
        """The session each ``Task``/``Agent`` call started, by call id, where the file
        shows it otherwise than by the result's ``agentId``."""
        self.in_chain = in_chain
        self._rewinds = branches.rewinds
        self.reasons = reasons
        self.log = log
        self.events: list[dict[str, Any]] = []
        """The events written: None where ``store`` sealed them (an event is not changed
        once the records after its own are written)."""
        self.lines: list[int] = []
        self.store = EventStore(self.events, self.lines)
        self.merged = 0
        """Assistant records written into the step of an earlier record."""
        self._line = 0
        self._time: int | None = None
        self._turn = 0
        self._turn_open = False
        self._step = 0
        self._step_open = False
        self._step_calls: list[str] = []
        self._interrupted = False
        self._calls: dict[str, int | None] = {}  # call id -> tool/call seq
        self._answered: set[str] = set()
        self._surface: list[int] = []
        self._surface_of: dict[int, list[int]] = {}  # abandoned record -> its surface seqs
        self._abandoned = {index for held in branches.rewinds.values() for index in held}
        self._messages = message_records(entries, in_chain, branches.order)
        self._written_messages: set[str] = set()

    def write(self, index: int) -> None:
        """Write the events of record ``index`` (a log-only event unless it is part of this
        session's conversation)."""
        entry = self.entries[index]
        self._line = entry.line
        if entry.time is not None:
            self._time = entry.time
        self.store.seal_before(len(self.events))
        if index in self._rewinds:
            self._rewind(self._rewinds[index])
        start = len(self.events)
        if not self.in_chain[index] or not entry.has_message:
            self._log_only(entry)
        elif entry.kind == "assistant":
            self._assistant(entry)
        elif entry.prompt:
            self._prompt(self.source.full(entry))
        else:
            self._user(self.source.full(entry))
        if index in self._abandoned:  # a later rewind hides its messages
            self._surface_of[index] = [seq for seq in range(start, len(self.events))
                                       if self.events[seq].get("surfaceOp") is not None]

    def finish(self) -> None:
        """Close what the file proves finished: a turn whose last step answered without
        calls or was interrupted; a step whose calls were all answered. What is left open
        is a crash tail, for recovery to close."""
        if not self._turn_open:
            return
        if self._interrupted or (self._step_open and not self._step_calls):
            self._close_turn()
        elif self._step_open and set(self._step_calls) <= self._answered:
            self.emit("step/end", {"turn": self._turn, "step": self._step})
            self._step_open = False

    def emit(self, kind: str, data: dict[str, Any], op: Any = None,
             sources: list[int] | None = None) -> int:
        """Append one event (with its ``surfaceOp`` and ``sourceEventSeqs`` when given);
        return its seq."""
        seq = len(self.events)
        event = {"type": kind, "seq": seq, "time": self._time, "data": data}
        if op is not None:
            event["surfaceOp"] = op
        if sources is not None:
            event["sourceEventSeqs"] = sources
        self.events.append(event)
        self.lines.append(self._line)
        return seq

    def _surface_event(self, kind: str, data: dict[str, Any], op: Any = "append",
                       sources: list[int] | None = None) -> int:
        """Append one model-visible event and fold it into the surface kept here."""
        seq = self.emit(kind, data, op, sources)
        if op == "append":
            self._surface.append(seq)
        else:
            self._surface = [seq]
        return seq

    def _log_only(self, entry: Entry) -> None:
        self.emit(LOG_ONLY_PREFIX + entry.kind, self.source.raw(entry.index))

    def _open_turn(self) -> None:
        self._turn += 1
        self._turn_open, self._interrupted = True, False
        self._step, self._step_open, self._step_calls = 0, False, []
        self.emit("turn/start", {"turn": self._turn})

    def _close_turn(self) -> None:
        """End the open turn: completed when its last step answered without calls,
        aborted by the user otherwise."""
        if self._step_open:
            self.emit("step/end", {"turn": self._turn, "step": self._step})
            self._step_open = False
        finished = not self._interrupted and not self._step_calls and self._step > 0
        self.emit("turn/end", turn_end(self._turn, finished))
        self._turn_open = False

    def _rewind(self, abandoned: list[int]) -> None:
        """Close the abandoned branch's turn and hide its messages (``surface/rewind``)."""
        if self._turn_open:
            self._close_turn()
        shadowed = sorted(seq for index in abandoned for seq in self._surface_of.get(index, ()))
        if shadowed:
            self.emit("surface/rewind", {"start": shadowed[0], "end": shadowed[-1],
                                          "shadowedSeqs": shadowed})
            hidden = set(shadowed)
            self._surface = [seq for seq in self._surface if seq not in hidden]

    def _prompt(self, record: Record) -> None:
        if self._turn_open:
            self._close_turn()
        self._open_turn()
        self._user_message(record, "user")

    def _user_message(self, record: Record, source: str) -> None:
        message = user_message(record, source)
        if record.raw.get("isCompactSummary") is True and self._surface:
            op = {"op": "replace", "startSeq": self._surface[0], "endSeq": self._surface[-1]}
            self._surface_event("user/message", message, op)
        else:
            self._surface_event("user/message", message)

    def _user(self, record: Record) -> None:
        """A user record that is no prompt: tool results, then any other text (an
        interrupt note, injected context, a compaction summary)."""
        results = tool_results(record)
        for block in results:
            self._result(record, block)
        texts = [b for b in content_blocks(record.message)
                 if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        if texts or not results:
            first = block_text(texts[0]) if texts else ""
            if first.startswith(INTERRUPT_PREFIX):
                self._interrupted = True
                self._user_message(record, "interrupt")
            elif record.raw.get("isCompactSummary") is True:
                self._user_message(record, "compact-checkpoint")
            else:
                self._user_message(record, "runtime-context")

    def _assistant(self, entry: Entry) -> None:
        key = entry.key
        if key is None:  # neither message.id nor uuid: a step of its own
            parts = [self.source.full(entry)]
        elif key in self._written_messages:
            self.merged += 1
            return
        else:
            self._written_messages.add(key)
            parts = [self.source.full(self.entries[i]) for i in self._messages[key]]
        if not self._turn_open:
            self._open_turn()
        if self._step_open:
            self.emit("step/end", {"turn": self._turn, "step": self._step})
        self._step += 1
        self._step_open = True
        self.emit("step/start", {"turn": self._turn, "step": self._step})
        data = assistant_data(self._turn, self._step, key, parts)
        content = data["message"]["content"]
        self._surface_event("assistant/message", data)
        self._step_calls = [b["id"] for b in content if b["type"] == "tool-call"]
        for block in content:
            if block["type"] != "tool-call" or block["id"] in self._calls:
                continue
            dispatched = self.reasons.get(block["id"]) != "rejected by user"
            self._calls[block["id"]] = self.emit("tool/call", {
                "turn": self._turn, "step": self._step, "callId": block["id"],
                "name": block["name"], "arguments": block["arguments"]}) if dispatched else None

    def _result(self, record: Record, block: dict[str, Any]) -> None:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str):
            self.log.add(record.line, "wrong_shape", "tool_result without a string "
                         "'tool_use_id': kept as a result of no call", "warning")
            call_id = None
        elif call_id not in self._calls:
            self.log.add(record.line, "orphan_result", "tool_result answers no tool_use of "
                         "this file", "warning")
        flag = block.get("is_error")
        if flag is not None and not isinstance(flag, bool):
            self.log.add(record.line, "wrong_shape", f"'is_error' is {type(flag).__name__}, "
                         "not a boolean: read as not an error", "warning")
        reason = self.reasons.get(call_id) if call_id is not None else None
        data = result_data(self._turn, self._step, record, block, call_id, reason)
        dispatched = self._calls.get(call_id) if call_id is not None else None
        self._surface_event("tool/result", data, "append",
                            None if dispatched is None else [dispatched])
        if call_id is not None:
            self._answered.add(call_id)
        child = spawned_child(record, call_id, self.children)
        if child is not None:
            self.emit("subagent/catalog", catalog_data(child, call_id))


def message_records(entries: Sequence[Entry], in_chain: Sequence[bool], order: Sequence[int]
                    ) -> dict[str, list[int]]:
    """Return the records of each ``message.id`` of the chain's assistant records, in the
    plan's ``order`` (one message written from all of them)."""
    records: dict[str, list[int]] = {}
    for index in order:
        if in_chain[index] and entries[index].kind == "assistant":
            key = entries[index].key
            if key is not None:
                records.setdefault(key, []).append(index)
    return records


def turn_end(turn: int, finished: bool) -> dict[str, Any]:
    """Return the ``turn/end`` data of ``turn``: completed when ``finished``, else aborted
    by the user."""
    reason = {"kind": "completed"} if finished else {"kind": "aborted",
                                                     "reason": {"kind": "user"}}
    return {"turn": turn, "reason": reason}


def user_message(record: Record, source: str) -> dict[str, Any]:
    """Return the ``user/message`` of ``record``'s content but its tool results, of source
    kind ``source``."""
    blocks = [_user_block(b) for b in content_blocks(record.message)
              if not (isinstance(b, dict) and b.get("type") == "tool_result")]
    return {"id": record.uuid, "role": "user", "content": blocks, "source": {"kind": source}}


def assistant_data(turn: int, step: int, key: str | None, parts: list[Record]
                   ) -> dict[str, Any]:
    """Return the ``assistant/message`` data of the step of message ``key`` written from
    the records ``parts``."""
    record = parts[0]
    content = [_assistant_block(b) for part in parts for b in content_blocks(part.message)]
    model = record.message.get("model") if record.message else None
    message = {"id": key, "role": "assistant", "content": content,
               "source": {"kind": "model", "provider": "anthropic",
                          "model": model if isinstance(model, str) else None}}
    data: dict[str, Any] = {"turn": turn, "step": step, "message": message, "stream": []}
    usage = _usage(parts)
    if usage:
        data["usage"] = usage
    return data


def result_data(turn: int, step: int, record: Record, block: dict[str, Any],
                call_id: str | None, reason: StatusReason | None) -> dict[str, Any]:
    """Return the ``tool/result`` data of ``record``'s ``tool_result`` ``block``, answering
    ``call_id`` (refused for ``reason``, when given)."""
    message = {"id": record.uuid, "role": "tool", "toolCallId": call_id,
               "isError": block.get("is_error") is True,
               "source": {"kind": "tool", "callId": call_id},
               "content": _result_content(block.get("content"))}
    data: dict[str, Any] = {"turn": turn, "step": step, "message": message}
    if reason is not None:
        data["error"] = OUTCOME_UNKNOWN if reason == "interrupted mid-run" else NOT_STARTED
    return data


def spawned_child(record: Record, call_id: str | None, children: Mapping[str, str]
                  ) -> str | None:
    """Return the session the call ``call_id`` answered in ``record`` started, if any: the
    result's ``agentId``'s, else the one ``children`` names."""
    spawned = record.raw.get("toolUseResult")
    agent = spawned.get("agentId") if isinstance(spawned, dict) else None
    # the subagent file <sessionId>/subagents/agent-<agentId>.jsonl is that session
    if isinstance(agent, str) and agent:
        return f"agent-{agent}"
    return children.get(call_id) if call_id is not None else None


def catalog_data(child: str, call_id: str | None) -> dict[str, Any]:
    """Return the ``subagent/catalog`` data naming ``child``, started by ``call_id``."""
    return {"version": 1, "childId": child, "mode": "unknown", "callId": call_id}


def _usage(parts: list[Record]) -> dict[str, int]:
    """Return the dsh usage of one step: the last ``message.usage`` of its records (each
    repeats it; counted once)."""
    for part in reversed(parts):
        usage = part.message.get("usage") if part.message else None
        if isinstance(usage, dict):
            return {ours: usage[theirs] for ours, theirs in _USAGE_KEYS
                    if type(usage.get(theirs)) is int}
    return {}


def _assistant_block(block: Any) -> dict[str, Any]:
    """Return an assistant content block in dsh shape (unknown ones kept, renamed)."""
    if not isinstance(block, dict):
        return {"type": "plugin:claude-code", "value": block}
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block_text(block)}
    if kind == "thinking":
        thinking = block.get("thinking")
        return {"type": "reasoning", "text": thinking if isinstance(thinking, str) else ""}
    if kind == "tool_use" and isinstance(block.get("id"), str):
        name = block.get("name")
        return {"type": "tool-call", "id": block["id"],
                "name": name if isinstance(name, str) else None,
                "arguments": json_text(block.get("input", {}))}
    return {**block, "type": f"plugin:{kind}"}


def _user_block(block: Any) -> dict[str, Any]:
    """Return a user content block in dsh shape."""
    if isinstance(block, dict) and block.get("type") == "text":
        return {"type": "text", "text": block_text(block)}
    if isinstance(block, dict) and block.get("type") == "image":
        return {"type": "image", "attachment": block.get("source")}
    return {"type": "plugin:claude-code", "value": block}


def _result_content(content: Any) -> list[dict[str, Any]]:
    """Return a tool_result's content as dsh blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [_user_block(b) for b in content]
    return []
