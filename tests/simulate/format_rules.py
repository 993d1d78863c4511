"""An independent checker of the v4 format rules a runtime enforces (format §3, §4, §6, §12)."""

from __future__ import annotations

from typing import Any

from ledgerviz.ledger.writer import encode_source_seqs
from ledgerviz.recovery import source_seqs

SURFACE_TYPES = {
    "user/message",
    "assistant/message",
    "tool/result",
    "system/message",
    "developer/message",
}
IN_STEP_TYPES = {
    "system/message",
    "developer/message",
    "assistant/message",
    "assistant/attempt",
    "tool/call",
    "step/end",
}
IN_TURN_TYPES = {"request/header", "request/context"}
ENVELOPE_ORDER = ("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable")
HEADER_ORDER = (
    "type",
    "version",
    "id",
    "createdAt",
    "cwd",
    "parentSession",
    "isSeeded",
    "origin",
    "delegationDepth",
)


def _ordered(keys: list[str], order: tuple[str, ...]) -> bool:
    return all(k in order for k in keys) and keys == sorted(keys, key=order.index)


def header_problems(header: dict[str, Any]) -> list[str]:
    """Return what is wrong with a v4 header line (empty when valid)."""
    problems = []
    if not _ordered(list(header), HEADER_ORDER):
        problems.append(f"header keys out of order or unknown: {list(header)}")
    if header.get("type") != "session" or header.get("version") != 4:
        problems.append("header is not a v4 session header")
    if not isinstance(header.get("isSeeded"), bool) or not isinstance(
        header.get("delegationDepth", 0), int
    ):  # format §2: delegationDepth is required only in v0-v2 headers (a fork child has none)
        problems.append("header needs a boolean isSeeded and, if any, an integer delegationDepth")
    if header.get("isSeeded") and not isinstance(header.get("parentSession"), str):
        problems.append("a seeded header needs the parentSession it was forked from")
    return problems


def event_problems(events: list[dict[str, Any]]) -> list[str]:
    """Return every violation of the ordering, surface and pairing rules, as readable strings."""
    problems: list[str] = []
    open_turn: int | None = None
    open_step: int | None = None
    last_turn = 0
    last_step = 0
    step_requests: set[str] = set()
    step_dispatched: set[str] = set()
    surface: list[int] = []
    last_time = 0
    for index, event in enumerate(events):
        kind, seq, data = event["type"], event["seq"], event["data"]
        where = f"seq {seq} {kind}"
        if seq != index:
            problems.append(f"{where}: seq is not dense (expected {index})")
        if not _ordered(list(event), ENVELOPE_ORDER):
            problems.append(f"{where}: envelope keys {list(event)}")
        if not isinstance(event["time"], int) or event["time"] < last_time:
            problems.append(f"{where}: time goes backwards")
        last_time = event["time"]
        if kind in SURFACE_TYPES:
            problems += _surface_problems(event, surface)
        elif "surfaceOp" in event or "sourceEventSeqs" in event:
            problems.append(f"{where}: surface fields on a non-surface type")
        if kind == "turn/start":
            if open_turn is not None or data["turn"] != last_turn + 1:
                problems.append(f"{where}: turn/start while open or out of sequence")
            open_turn, open_step, last_turn, last_step = data["turn"], None, data["turn"], 0
        elif kind == "turn/end":
            if data["turn"] != open_turn or open_step is not None:
                problems.append(f"{where}: turn/end for a closed turn or with a step open")
            open_turn = None
        elif kind == "step/start":
            if (
                open_turn is None
                or open_step is not None
                or data != {"turn": open_turn, "step": last_step + 1}
            ):
                problems.append(f"{where}: step/start out of place")
            open_step = last_step = data["step"]
            step_requests, step_dispatched = set(), set()
        elif kind in IN_TURN_TYPES and open_turn is None:
            problems.append(f"{where}: outside an open turn")
        appended_result = kind == "tool/result" and event.get("surfaceOp") == "append"
        if (kind in IN_STEP_TYPES or appended_result) and (
            open_step is None or data.get("turn") != open_turn or data.get("step") != open_step
        ):
            problems.append(f"{where}: does not name the open turn and step")
        if kind == "assistant/message":
            step_requests |= {
                b["id"] for b in data["message"]["content"] if b["type"] == "tool-call"
            }
        elif kind == "tool/call":
            if data["callId"] not in step_requests:
                problems.append(f"{where}: dispatches a call not requested in this step")
            step_dispatched.add(data["callId"])
        elif kind == "tool/result":
            problems += _result_problems(where, data, step_dispatched)
        elif kind == "step/end":
            open_step = None
    return problems


def _result_problems(where: str, data: dict[str, Any], dispatched: set[str]) -> list[str]:
    message = data["message"]
    call_id = message["source"]["callId"]
    problems = []
    if message["role"] != "tool" or message["toolCallId"] != call_id:
        problems.append(f"{where}: not a v4 tool-role result")
    if "error" in data and message.get("isError") is not True:
        problems.append(f"{where}: error on a result not marked isError")
    not_started = data.get("error", {}).get("code") == "TOOL_NOT_STARTED"
    if call_id not in dispatched and not not_started:
        problems.append(f"{where}: answers call {call_id} that has no tool/call in this step")
    return problems


def _surface_problems(event: dict[str, Any], surface: list[int]) -> list[str]:
    where = f"seq {event['seq']} {event['type']}"
    op = event.get("surfaceOp")
    cited = source_seqs(event)
    problems = []
    if "sourceEventSeqs" in event:
        stored = event["sourceEventSeqs"]
        if not cited or len(set(cited)) != len(cited) or max(cited) >= event["seq"]:
            problems.append(f"{where}: bad sourceEventSeqs {stored}")
        if encode_source_seqs(cited) != stored:
            problems.append(f"{where}: sourceEventSeqs not encoded as the runtime encodes them")
    if op == "append":
        surface.append(event["seq"])
    elif (
        isinstance(op, dict)
        and op.get("op") == "replace"
        and set(op) == {"op", "startSeq", "endSeq"}
    ):
        if op["startSeq"] not in surface or op["endSeq"] not in surface:
            return [*problems, f"{where}: replace endpoints not on the surface"]
        start, end = surface.index(op["startSeq"]), surface.index(op["endSeq"])
        if start > end or not set(surface[start : end + 1]) <= set(cited):
            problems.append(f"{where}: replace range inverted or shadowed seqs not cited")
        if start == 0 and event["type"] != "system/message":
            problems.append(f"{where}: only a system message may replace node 0")
        surface[start : end + 1] = [event["seq"]]
    else:
        problems.append(f"{where}: surfaceOp {op!r} not understood")
    return problems
