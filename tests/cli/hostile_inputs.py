"""Hostile and malformed ledgers, each built here from a small valid one (issue 12)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

Event = dict[str, Any]

HEADER: Event = {"type": "session", "version": 4, "id": "h", "createdAt": 0}
V0_HEADER: Event = {"type": "session", "version": 0, "id": "h0", "createdAt": 0,
                    "delegationDepth": 0}


def _message(role: str, content: Any, **extra: Any) -> Event:
    return {"id": "m", "role": role, "content": content, "source": {"kind": role}, **extra}


def base_events() -> list[Event]:
    """Return a small v4 ledger (no header): one turn, one call with its result, closed."""
    call = {"type": "tool-call", "id": "A", "name": "ls", "arguments": "{}"}
    answer = _message("tool", [{"type": "text", "text": "ok"}], toolCallId="A")
    answer["source"] = {"kind": "tool", "callId": "A"}
    rows: list[tuple[str, Event, dict[str, Any]]] = [
        ("turn/start", {"turn": 1}, {}),
        ("step/start", {"turn": 1, "step": 1}, {}),
        ("user/message", _message("user", [{"type": "text", "text": "hi"}]),
         {"surfaceOp": "append"}),
        ("assistant/message",
         {"turn": 1, "step": 1, "message": _message("assistant", [call]), "stream": []},
         {"surfaceOp": "append"}),
        ("tool/call", {"turn": 1, "step": 1, "callId": "A", "name": "ls", "arguments": "{}"}, {}),
        ("tool/result", {"turn": 1, "step": 1, "message": answer},
         {"surfaceOp": "append", "sourceEventSeqs": [4]}),
        ("step/end", {"turn": 1, "step": 1}, {}),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, {}),
    ]
    return [
        {"type": kind, "seq": seq, "time": 1000 + seq, "data": data, **extra}
        for seq, (kind, data, extra) in enumerate(rows)
    ]


def encode(header: Event | None, events: list[Any]) -> bytes:
    """Return ledger bytes, one JSON line per item (bytes items verbatim)."""
    items = ([header] if header is not None else []) + events
    raw = [item if isinstance(item, bytes) else _dumps(item) for item in items]
    return b"".join(line + b"\n" for line in raw)


def _dumps(value: Any) -> bytes:
    """Return compact JSON (the standard library's: orjson refuses integers beyond 64 bits)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _edit(change: Callable[[list[Event]], Any]) -> bytes:
    events = base_events()
    change(events)
    return encode(HEADER, events)


def _set(index: int, path: tuple[Any, ...], value: Any) -> bytes:
    def change(events: list[Event]) -> None:
        target: Any = events[index]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return _edit(change)


def _lines(*replacements: tuple[int, bytes]) -> bytes:
    lines = encode(HEADER, base_events()).split(b"\n")
    for index, raw in replacements:
        lines[index] = raw
    return b"\n".join(lines)


def _open_tail() -> list[Event]:
    return base_events()[:5]  # the call was dispatched, no result, turn open


def _packed_row(kind: Any, version: int) -> bytes:
    events = _open_tail()[:4]
    row = {"type": kind, "seq0": 4, "time0": 2000,
           "data": {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]}}
    return encode(V0_HEADER if version == 0 else HEADER, [*events, row])


BIG = 2**70


def cases() -> dict[str, bytes]:
    """Return ``{file name: bytes}`` for every hostile input, each one small."""
    open_tail = _open_tail()
    packed_v4 = _packed_row("text-chunks", 4)
    return {
        # wrong-shaped JSON in every kind of field
        "content-true.jsonl": _set(2, ("data", "content"), True),
        "content-string.jsonl": _set(3, ("data", "message", "content"), "text"),
        "message-list.jsonl": _set(3, ("data", "message"), [1, 2]),
        "reason-kind-object.jsonl": _set(7, ("data", "reason", "kind"), {"x": 1}),
        "reason-string.jsonl": _set(7, ("data", "reason"), "done"),
        "tool-name-object.jsonl": _set(3, ("data", "message", "content", 0, "name"), {"n": 1}),
        "call-id-object.jsonl": _set(4, ("data", "callId"), {"id": "A"}),
        "block-id-list.jsonl": _set(3, ("data", "message", "content", 0, "id"), ["A"]),
        "arguments-object.jsonl": _set(4, ("data", "arguments"), {"a": 1}),
        "turn-string.jsonl": _set(0, ("data", "turn"), "1"),
        "turn-float.jsonl": _set(0, ("data", "turn"), 1.5),
        "step-null.jsonl": _set(1, ("data", "step"), None),
        "surface-op-object.jsonl": _set(2, ("surfaceOp",), {"op": {"x": 1}}),
        "replace-op-list-bounds.jsonl": _set(
            5, ("surfaceOp",), {"op": "replace", "startSeq": [1], "endSeq": {"a": 1}}
        ),
        "source-seqs-string.jsonl": _set(5, ("sourceEventSeqs",), "4"),
        "source-seqs-huge-range.jsonl": _set(5, ("sourceEventSeqs",), [[0, 10**15]]),
        "source-seqs-bad-pair.jsonl": _set(5, ("sourceEventSeqs",), [[4], ["a", "b"], None]),
        "usage-strings.jsonl": _set(3, ("data", "usage"), {"inputTokens": "many"}),
        "stream-object.jsonl": _set(3, ("data", "stream"), {"a": 1}),
        "result-source-list.jsonl": _set(5, ("data", "message", "source"), ["tool"]),
        "data-list.jsonl": _set(0, ("data",), [1]),
        "type-object.jsonl": _set(0, ("type",), {"t": 1}),
        "type-number.jsonl": _set(0, ("type",), 7),
        "ignorable-string.jsonl": _edit(lambda e: e.insert(8, {
            "type": "x/unknown", "seq": 8, "time": 0, "data": {}, "ignorable": "yes"})),
        "event-is-list.jsonl": _lines((3, b"[1,2,3]")),
        "event-is-number.jsonl": _lines((3, b"42")),
        "packed-v0-type-object.jsonl": encode(V0_HEADER, [*open_tail[:4], {
            "type": {"a": 1}, "seq0": 4, "time0": 0, "data": {}}]),
        "packed-v0-texts-object.jsonl": encode(V0_HEADER, [*open_tail[:4], {
            "type": "text-chunks", "seq0": 4, "time0": 0,
            "data": {"turn": 1, "step": 1, "dt": [], "texts": {"a": 1}}}]),
        "packed-v4.jsonl": packed_v4,
        # numbers beyond 2^63 / 2^64 and not numbers at all
        "seq-2-63.jsonl": _set(3, ("seq",), 2**63),
        "seq-2-70.jsonl": _set(3, ("seq",), BIG),
        "time-2-64.jsonl": _set(2, ("time",), 2**64),
        "time-negative-huge.jsonl": _set(2, ("time",), -BIG),
        "turn-2-70.jsonl": _set(0, ("data", "turn"), BIG),
        "created-at-2-70.jsonl": encode({**HEADER, "createdAt": BIG}, base_events()),
        "seq-float.jsonl": _set(3, ("seq",), 3.0),
        "time-1e400.jsonl": _lines((3, _dumps(base_events()[2]).replace(
            b'"time":1002', b'"time":1e400'))),
        "nan-time.jsonl": _lines((3, _dumps(base_events()[2]).replace(
            b'"time":1002', b'"time":NaN'))),
        "version-2-70.jsonl": encode({**HEADER, "version": BIG}, base_events()),
        # framing
        "torn-tail.jsonl": encode(HEADER, open_tail)[:-1] + b'{"type":"tool/res',
        "valid-last-line-no-newline.jsonl": encode(HEADER, base_events())[:-1],
        "garbage-last-line.jsonl": encode(HEADER, open_tail) + b"}{not json\n",
        "bad-line-mid-file-then-turn-end.jsonl": _lines((4, b"{oops")),
        "bad-line-mid-open-turn.jsonl": encode(HEADER, [*open_tail[:3], b"{oops", open_tail[4]]),
        "seq-gap.jsonl": _set(6, ("seq",), 9),
        "seq-decreasing.jsonl": _set(4, ("seq",), 1),
        "seq-duplicate.jsonl": _set(4, ("seq",), 3),
        "blank-lines.jsonl": _lines((3, b"")),
        "crlf-and-nul.jsonl": encode(HEADER, base_events()).replace(b"\n", b"\r\n", 2) + b"\0\0\n",
        "invalid-utf8.jsonl": _lines((3, _dumps(base_events()[2]).replace(b"hi", b"h\xff"))),
        "bom.jsonl": b"\xef\xbb\xbf" + encode(HEADER, open_tail),
        "utf16.jsonl": encode(HEADER, base_events()).decode().encode("utf-16"),
        "second-header.jsonl": _edit(lambda e: e.insert(4, dict(HEADER, id="other"))),
        "duplicate-keys.jsonl": _lines((2, b'{"type":"turn/start","seq":0,"time":1,"seq":0,'
                                           b'"data":{"turn":1,"turn":2}}')),
        "no-header.jsonl": encode(None, base_events()),
        "header-only-garbage.jsonl": b"\x00\x01\x02garbage\n" * 50,
        "not-a-ledger-csv.jsonl": b"a,b,c\n1,2,3\n" * 200,
        "empty.jsonl": b"",
        "only-newlines.jsonl": b"\n\n\n",
        "header-list.jsonl": encode(None, [[HEADER]]),
        "header-id-object.jsonl": encode({**HEADER, "id": {"x": 1}}, base_events()),
        "deep-nesting.jsonl": encode(HEADER, base_events()[:2]) + b"[" * 100_000 + b"]" * 100_000
        + b"\n",
        "long-line.jsonl": encode(
            HEADER, [*base_events()[:2], {**base_events()[2], "pad": "x" * 2_000_000}]
        ),
        "unknown-required.jsonl": _edit(lambda e: e.insert(8, {
            "type": "x/unknown", "seq": 8, "time": 0, "data": {}})),
        # terminals
        "escape-codes.jsonl": encode({**HEADER, "id": "\x1b]0;pwned\x07\x1b[2J\rsid"}, open_tail),
        "escape-in-call-id.jsonl": encode(HEADER, _with_call_id(open_tail, "\x1b[31mA\r")),
        # closers against what the file already holds
        "open-tail.jsonl": encode(HEADER, open_tail),
        "open-tail-v0.jsonl": encode(V0_HEADER, open_tail),
    }


def _with_call_id(events: list[Event], call_id: str) -> list[Event]:
    events = copy.deepcopy(events)
    events[3]["data"]["message"]["content"][0]["id"] = call_id
    events[4]["data"]["callId"] = call_id
    return events
