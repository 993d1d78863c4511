"""Shape checks: the fields later layers rely on hold the JSON types the format gives them.

An event that fails is dropped by the reader with an ``invalid_event`` diagnostic, so
recovery, frames and figures only ever see the shapes they expect (format §3-§7).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ledgerviz.ledger.schema import JsonType
from ledgerviz.recovery.nesting import MAX_ARGUMENT_DEPTH, may_nest_deeper, nests_deeper

MAX_INTEGER = 2**53 - 1
"""The largest integer the runtime (JavaScript numbers) writes exactly."""
MIN_INTEGER = -MAX_INTEGER
"""The smallest one (a constant: ``-MAX_INTEGER`` in a test makes a new int each time)."""


def json_type(value: Any) -> str:
    """Return the JSON name of a decoded value's type."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def integer_problem(name: str, value: Any) -> str | None:
    """Return why ``value`` is not an integer the runtime could have written, or None."""
    if value.__class__ is not int:
        return f"'{name}' must be an integer, not {json_type(value)}"
    if not MIN_INTEGER <= value <= MAX_INTEGER:
        shown = value if value.bit_length() <= 128 else f"of {value.bit_length()} bits"
        return f"'{name}' {shown} is beyond ±(2^53-1), outside what the runtime writes"
    return None


_ARTICLES: dict[str, str] = {"integer": "an integer", "string": "a string",
                             "boolean": "a boolean", "object": "an object", "array": "an array"}
_CLASSES: dict[str, type] = {"string": str, "boolean": bool, "object": dict, "array": list}


def type_problem(label: str, value: Any, expected: JsonType) -> str | None:
    """Return why ``value`` is not of the ``expected`` JSON type (``schema.JsonType``; an
    integer also within what the runtime writes), or None."""
    if expected == "integer":
        return integer_problem(label, value)
    if value.__class__ is _CLASSES[expected]:
        return None
    return f"'{label}' must be {_ARTICLES[expected]}, not {json_type(value)}"


def _optional(container: dict[str, Any], name: str, kind: type, label: str) -> str | None:
    """Return a problem when ``container[name]`` is present and not of ``kind``."""
    value = container.get(name)
    if value is None or value.__class__ is kind:
        return None
    return f"'{label}' must be {json_type(kind())}, not {json_type(value)}"


_SOURCE_STRINGS = ("kind", "provider", "model")
"""The fields of a message's ``source`` that frames read as labels: strings when present."""


def _strings_object_problem(value: Any, keys: tuple[str, ...], label: str) -> str | None:
    """Return what is wrong with an optional object whose ``keys``, where present, must be
    strings (a message's ``source``, a result's ``error``), or None."""
    if value is None:
        return None
    if value.__class__ is not dict:
        return f"'{label}' must be an object, not {json_type(value)}"
    for key in keys:
        problem = _optional(value, key, str, f"{label}.{key}")
        if problem:
            return problem
    return None


_BLOCK_STRINGS = ("name", "arguments")
"""The fields of a tool-call block that recovery and frames read as labels: strings when
present (its ``id`` is a call id: see ``_call_id_problem``)."""


def _call_id_problem(container: dict[str, Any], key: str, label: str, ids: bool) -> str | None:
    """Return why the call id ``container[key]`` is present and no string, or None; when
    not ``ids``, only an array or object is a problem: the runtime compares those by
    identity, and recovery and frames read every other value as it does (``call_key``)."""
    value = container.get(key)
    if not ids and value.__class__ is not list and value.__class__ is not dict:
        return None
    return _optional(container, key, str, label)


def _message_problem(message: Any, label: str, ids: bool) -> str | None:
    """Return what is wrong with a message object's fields (its tool-call blocks' ids
    only when ``ids``), or None."""
    if message is None:
        return None
    if message.__class__ is not dict:
        return f"'{label}' must be an object, not {json_type(message)}"
    problem = _optional(message, "role", str, f"{label}.role") or _strings_object_problem(
        message.get("source"), _SOURCE_STRINGS, f"{label}.source"
    )
    if problem:
        return problem
    content = message.get("content")
    if content is None:
        return None
    if content.__class__ is not list:
        return f"'{label}.content' must be an array, not {json_type(content)}"
    for block in content:
        if block.__class__ is not dict:
            return f"'{label}.content' holds a {json_type(block)}, not a block object"
        if block.get("type") == "tool-call":
            problem = _call_id_problem(block, "id", f"{label}.content[].id", ids)
            for key in _BLOCK_STRINGS:
                problem = problem or _optional(block, key, str, f"{label}.content[].{key}")
            if problem:
                return problem
            if ids and block.get("id") is None:
                return f"a tool-call block in '{label}' has no 'id'"
    return None


def _tool_call(data: dict[str, Any], ids: bool) -> str | None:
    call_id = data.get("callId")
    if ids and call_id.__class__ is not str:
        return f"'data.callId' must be a string, not {json_type(call_id)}"
    return (_call_id_problem(data, "callId", "data.callId", ids)
            or _optional(data, "name", str, "data.name")
            or _optional(data, "arguments", str, "data.arguments"))


_ERROR_STRINGS = ("name", "code")
"""The fields of a result's ``error`` that recovery and frames read: strings when present."""


def _tool_result(data: dict[str, Any], ids: bool) -> str | None:
    message = data.get("message")
    problem = (_strings_object_problem(data.get("error"), _ERROR_STRINGS, "data.error")
               or _message_problem(message, "data.message", ids))
    if problem or message is None:
        return problem
    return _call_id_problem(message, "toolCallId", "data.message.toolCallId", ids) or (
        _call_id_problem(message.get("source") or {}, "callId", "data.message.source.callId",
                         ids))


def _turn_end(data: dict[str, Any], ids: bool = True) -> str | None:
    reason = data.get("reason")
    if reason is None:
        return None
    if reason.__class__ is not dict:
        return f"'data.reason' must be an object, not {json_type(reason)}"
    kind = reason.get("kind")
    if kind.__class__ is not str:
        return f"'data.reason.kind' must be a string, not {json_type(kind)}"
    return None


_ROUTE_STRINGS = ("provider", "model")
"""The fields of a request's config that frames read as labels: strings when present."""


def _route_problem(config: Any, label: str) -> str | None:
    """Return what is wrong with the labels of a request config object, or None."""
    if config.__class__ is not dict:
        return None  # frames read no route from anything else
    for key in _ROUTE_STRINGS:
        problem = _optional(config, key, str, f"{label}.{key}")
        if problem:
            return problem
    return None


def _request_config(data: dict[str, Any]) -> Any:
    """Return the config object a ``request/header`` names, or None."""
    header = data.get("header")
    return header.get("config") if header.__class__ is dict else None


def _request_header(data: dict[str, Any], ids: bool = True) -> str | None:
    return _route_problem(_request_config(data), "data.header.config")


def _request_context(data: dict[str, Any], ids: bool = True) -> str | None:
    return _route_problem(data, "data")


def _carries_message(data: dict[str, Any], ids: bool) -> str | None:
    return _message_problem(data.get("message"), "data.message", ids)


def _user_message(data: dict[str, Any], ids: bool) -> str | None:
    return _message_problem(data, "data", ids)


def _integers_problem(data: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """Return why one of ``keys`` of ``data`` is present and no integer in range, or None."""
    for key in keys:
        value = data.get(key)
        problem = None if value is None else integer_problem(f"data.{key}", value)
        if problem:
            return problem
    return None


def _surface_rewind(data: dict[str, Any], ids: bool = True) -> str | None:
    problem = _integers_problem(data, ("start", "end"))
    seqs = data.get("shadowedSeqs")
    if problem or seqs is None:
        return problem
    if seqs.__class__ is not list:
        return f"'data.shadowedSeqs' must be an array, not {json_type(seqs)}"
    for seq in seqs:
        problem = integer_problem("data.shadowedSeqs[]", seq)
        if problem:
            return problem
    return None


def _surface_restore(data: dict[str, Any], ids: bool = True) -> str | None:
    return _integers_problem(data, ("rewindSeq",))


_PAYLOAD_CHECKS: dict[str, Callable[[dict[str, Any], bool], str | None]] = {
    "assistant/message": _carries_message,
    "system/message": _carries_message,
    "developer/message": _carries_message,
    "user/message": _user_message,
    "tool/call": _tool_call,
    "tool/result": _tool_result,
    "turn/end": _turn_end,
    "request/header": _request_header,
    "request/context": _request_context,
    "surface/rewind": _surface_rewind,
    "surface/restore": _surface_restore,
}


def _surface_op_problem(op: Any) -> str | None:
    """Return what is wrong with a ``surfaceOp`` that is an object, or None."""
    if op.__class__ is str:
        return None  # an unknown string op is a separate, kept diagnostic
    if op.__class__ is not dict:
        return f"'surfaceOp' must be a string or an object, not {json_type(op)}"
    if op.get("op").__class__ is not str:
        return f"'surfaceOp.op' must be a string, not {json_type(op.get('op'))}"
    for key in ("start", "end", "startSeq", "endSeq"):
        if key in op:
            problem = integer_problem(f"surfaceOp.{key}", op[key])
            if problem:
                return problem
    return None


def _source_seqs_problem(seqs: Any) -> str | None:
    """Return what is wrong with a ``sourceEventSeqs`` value (format §3), or None."""
    if seqs.__class__ is not list:
        return f"'sourceEventSeqs' must be an array, not {json_type(seqs)}"
    for entry in seqs:
        pair = entry if entry.__class__ is list else None
        if pair is not None and len(pair) != 2:
            return "'sourceEventSeqs' ranges must be [first, last] pairs"
        for value in pair or (entry,):
            problem = integer_problem("sourceEventSeqs[]", value)
            if problem:
                return problem
        if pair is not None and pair[0] > pair[1]:
            return f"'sourceEventSeqs' range {pair} runs backwards"
    return None


def surface_fields_problem(event: dict[str, Any]) -> str | None:
    """Return what is wrong with an event's ``surfaceOp`` or ``sourceEventSeqs``, or None."""
    problem = None
    if "surfaceOp" in event:
        problem = _surface_op_problem(event["surfaceOp"])
    if problem is None and "sourceEventSeqs" in event:
        problem = _source_seqs_problem(event["sourceEventSeqs"])
    return problem


def payload_problem(kind: str, data: dict[str, Any], *, ids: bool = True) -> str | None:
    """Return why recovery and frames cannot read an event's payload, or None.

    Checked: ``data.turn``/``data.step`` (integers when present) and the payload fields
    recovery and frames read for ``kind``; the call ids (``data.callId``, a tool-call
    block's ``id``, a result's ``toolCallId`` and ``source.callId``) only when ``ids``:
    recovery and frames read any value there as the runtime does (``call_key``). The
    runtime reads such payloads as they are (unless ``repair_scan_problem`` says its
    repair scan fails on them).
    """
    for name in ("turn", "step"):
        value = data.get(name)
        if value is not None and kind != "user/message":
            problem = integer_problem(f"data.{name}", value)
            if problem:
                return problem
    check = _PAYLOAD_CHECKS.get(kind)
    return check(data, ids) if check is not None else None


def repair_scan_problem(kind: str, data: dict[str, Any]) -> str | None:
    """Return why the runtime's crash-repair scan fails on this payload, or None.

    The runtime scans every event of a log it opens (format §9.1): it iterates the
    ``content`` of each ``assistant/message`` (an array or a string) and reads each block's
    ``type``, and reads ``message.source.callId`` of each ``tool/result``. A payload on
    which that fails (JavaScript's TypeError) makes it refuse the whole log.
    """
    if kind == "assistant/message":
        message = data.get("message")
        if message.__class__ is not dict:
            return f"'data.message' is {json_type(message)}, not an object"
        content = message.get("content")
        if content.__class__ is not list and content.__class__ is not str:
            return f"'data.message.content' is {json_type(content)}, not an array"
        if content.__class__ is list and None in content:
            return "'data.message.content' holds a null block"
    elif kind == "tool/result":
        message = data.get("message")
        if message.__class__ is not dict:
            return f"'data.message' is {json_type(message)}, not an object"
        if message.get("source") is None:
            return "'data.message.source' is missing or null"
    return None


def shape_warning(data: dict[str, Any]) -> str | None:
    """Return what is odd in a payload (read as the runtime, one kept whatever its shape),
    or None: a tool call whose arguments nest deeper than ``nesting.MAX_ARGUMENT_DEPTH``
    (provider requests then carry them as text)."""
    message = data.get("message", data)
    content = message.get("content") if message.__class__ is dict else None
    for block in content if content.__class__ is list else ():
        tool_call = block.__class__ is dict and block.get("type") == "tool-call"
        arguments = block.get("arguments") if tool_call else None
        if arguments.__class__ is str and nests_deeper(arguments):
            return (f"the arguments of tool call {block.get('id')!r} nest deeper than "
                    f"{MAX_ARGUMENT_DEPTH} levels: provider requests carry them as text")
    return None


SUSPECT: Any = object()
"""What a fast payload check returns for a payload that may be malformed: ``shape_problem``
then decides, and says what is wrong."""


def _labels_are_strings(container: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """Return True when each of ``keys`` in ``container`` is missing, null or a string."""
    for key in keys:
        value = container.get(key)
        if not (value is None or value.__class__ is str):
            return False
    return True


def _message_call_ids(message: Any) -> list[str] | Any:
    """Return the tool-call ids of a well-shaped message object ([] for None), or SUSPECT."""
    if message is None:
        return []
    if message.__class__ is not dict:
        return SUSPECT
    role, source = message.get("role"), message.get("source")
    if not (role is None or role.__class__ is str):
        return SUSPECT
    if source is not None and not (
        source.__class__ is dict and _labels_are_strings(source, _SOURCE_STRINGS)
    ):
        return SUSPECT
    content = message.get("content")
    ids: list[str] = []
    if content is None:
        return ids
    if content.__class__ is not list:
        return SUSPECT
    for block in content:
        if block.__class__ is not dict:
            return SUSPECT
        if block.get("type") == "tool-call":
            call_id, name, arguments = block.get("id"), block.get("name"), block.get("arguments")
            if (call_id.__class__ is not str
                    or not (name is None or name.__class__ is str)
                    or not (arguments is None or arguments.__class__ is str)
                    or (arguments is not None and may_nest_deeper(arguments))):
                return SUSPECT
            ids.append(call_id)
    return ids


def _fast_carries_message(data: dict[str, Any]) -> list[str] | Any:
    return _message_call_ids(data.get("message"))


def _fast_tool_call(data: dict[str, Any]) -> Any:
    """Return the call id a well-shaped ``tool/call`` dispatches, or SUSPECT."""
    call_id, name, arguments = data.get("callId"), data.get("name"), data.get("arguments")
    if (call_id.__class__ is str
            and (name is None or name.__class__ is str)
            and (arguments is None or arguments.__class__ is str)):
        return call_id
    return SUSPECT


def _fast_tool_result(data: dict[str, Any]) -> Any:
    """Return the call id a well-shaped result answers (see ``result_call_id``), or SUSPECT."""
    error = data.get("error")
    if error is not None and not (
        error.__class__ is dict and _labels_are_strings(error, _ERROR_STRINGS)
    ):
        return SUSPECT
    message = data.get("message")
    if message is None:
        return None
    if _message_call_ids(message) is SUSPECT:
        return SUSPECT
    source, direct = message.get("source"), message.get("toolCallId")
    if not (direct is None or direct.__class__ is str):
        return SUSPECT
    if source is not None:
        if source.__class__ is not dict:
            return SUSPECT
        call_id = source.get("callId")
        if call_id.__class__ is str:
            return call_id
        if call_id is not None:
            return SUSPECT
    if direct is not None:
        return direct
    content = message.get("content")
    if content:
        wrapped = content[0].get("toolCallId")
        return wrapped if wrapped.__class__ is str else None
    return None


def _fast_turn_end(data: dict[str, Any]) -> Any:
    reason = data.get("reason")
    if reason is None or (reason.__class__ is dict and reason.get("kind").__class__ is str):
        return None
    return SUSPECT


def _fast_route(config: Any) -> Any:
    if config.__class__ is not dict or _labels_are_strings(config, _ROUTE_STRINGS):
        return None
    return SUSPECT


def _fast_request_header(data: dict[str, Any]) -> Any:
    return _fast_route(_request_config(data))


def _suspect_when(check: Callable[[dict[str, Any]], str | None]) -> Callable[[dict[str, Any]], Any]:
    """Return a fast check of a rare event type: its full check, SUSPECT on a problem."""
    return lambda data: None if check(data) is None else SUSPECT


FAST_PAYLOAD_CHECKS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "assistant/message": _fast_carries_message,
    "system/message": _fast_carries_message,
    "developer/message": _fast_carries_message,
    "user/message": _message_call_ids,
    "tool/call": _fast_tool_call,
    "tool/result": _fast_tool_result,
    "turn/end": _fast_turn_end,
    "request/header": _fast_request_header,
    "request/context": _fast_route,
    "surface/rewind": _suspect_when(_surface_rewind),
    "surface/restore": _suspect_when(_surface_restore),
}
"""Per event type, a check that accepts a payload only when ``shape_problem`` would (it
may refuse more: SUSPECT). Message checks return the message's tool-call ids, the
``tool/call`` and ``tool/result`` checks the call id dispatched or answered, the others
None."""


def plain_source_seqs(seqs: Any) -> bool:
    """Return True for a ``sourceEventSeqs`` array of integers in range (no ranges)."""
    if seqs.__class__ is not list:
        return False
    for seq in seqs:
        if seq.__class__ is not int or not MIN_INTEGER <= seq <= MAX_INTEGER:
            return False
    return True
