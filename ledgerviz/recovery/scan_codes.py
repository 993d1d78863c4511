"""The scan's vocabulary: the small codes of the event types it acts on, and the slots of
a call under scan (``recovery.analyze`` keeps each call as a plain list)."""

from __future__ import annotations

# Event types the scan acts on, as small codes (looked up once per type name).
(
    _RESULT_KIND,
    _CALL_KIND,
    _ASSISTANT_KIND,
    _STEP_END_KIND,
    _TURN_START_KIND,
    _TURN_END_KIND,
    _USER_KIND,
    _REWIND_KIND,
    _RESTORE_KIND,
    _MESSAGE_KIND,
) = range(1, 11)
_KINDS = {
    "tool/result": _RESULT_KIND,
    "tool/call": _CALL_KIND,
    "assistant/message": _ASSISTANT_KIND,
    "step/end": _STEP_END_KIND,
    "turn/start": _TURN_START_KIND,
    "turn/end": _TURN_END_KIND,
    "user/message": _USER_KIND,
    "surface/rewind": _REWIND_KIND,
    "surface/restore": _RESTORE_KIND,
    "system/message": _MESSAGE_KIND,
    "developer/message": _MESSAGE_KIND,
}
_CLOSING_KINDS = (_STEP_END_KIND, _TURN_START_KIND, _TURN_END_KIND)

# A call under scan is a plain list (cheap to allocate); these name its slots.
(
    _ID,
    _NAME,
    _ARGS,
    _TURN,
    _STEP,
    _NODE,
    _SEQ,
    _DISPATCHED,
    _RESULT,
    _RESULT_SEQ,
    _CODE,
    _IS_ERROR,
) = range(12)
_SLOTS = 12
