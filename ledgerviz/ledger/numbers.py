"""Integers orjson cannot hold: found, decoded exactly, never turned into floats.

orjson decodes an integer outside the signed/unsigned 64-bit range as a float, silently
losing its value. Such integers need at least 19 digits where a value starts, so a file
without such a run cannot hold one (one pass over each block decides, runs inside
strings passed over); lines that may are decoded by the standard library, which keeps
every integer exact.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_NUMBER_MARKS = bytes.maketrans(b"123456789E+", b"000000000ee")
_LONG_RUN = b"0" * 19
_BEFORE_A_NUMBER = b" \t\r\n-"
"""What may stand between a value's start and its digits: JSON whitespace, a minus."""
_VALUE_STARTS = b":,["
"""The bytes after which a JSON value starts (in an object or an array)."""

_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1


def number_marks(raw: bytes) -> bytes:
    """Return ``raw`` with every digit as ``0`` and every ``E`` and ``+`` as ``e``: one
    pass in C after which the shapes of numbers are searched for as plain bytes."""
    return raw.translate(_NUMBER_MARKS)


def may_hold_big_integers(raw: bytes, marks: bytes | None = None) -> bool:
    """Return whether ``raw`` could hold an integer beyond 64 bits: a run of 19 digits or
    more where a JSON value may start (after ``:``, ``,`` or ``[``, or at the start, JSON
    whitespace and a minus sign between). A run inside a string (an id of digits, say)
    is passed over unless the string holds such a byte just before it.

    ``marks`` is ``number_marks(raw)`` when the caller has it already. Runs of 19 zeros
    are searched for, and only the bytes before each looked at: several times faster
    than a regular expression.
    """
    marks = number_marks(raw) if marks is None else marks
    at = marks.find(_LONG_RUN)
    while at != -1:
        before = at - 1
        while before >= 0 and marks[before] in _BEFORE_A_NUMBER:
            before -= 1
        if before < 0 or marks[before] in _VALUE_STARTS:
            return True
        at = marks.find(_LONG_RUN, at + len(_LONG_RUN))
    return False


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:40]} is beyond the range of a double")
    return value


def _exact_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # longer than the interpreter converts (sys.get_int_max_str_digits)
        raise ValueError(f"integer {text[:40]}… of {len(text.lstrip('-'))} digits is longer "
                         "than the reader converts") from None


def exact_loads(raw: bytes) -> Any:
    """Return the JSON value of ``raw`` with exact integers; raise ValueError if invalid.

    Like orjson it refuses ``NaN``/``Infinity`` and fractions and exponents beyond a double;
    integers are exact however long, up to the digits the interpreter converts.
    """
    try:
        return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float,
                          parse_int=_exact_int)
    except RecursionError as error:
        raise ValueError("JSON nested too deeply") from error
    except UnicodeDecodeError as error:
        raise ValueError(str(error)) from error


def holds_big_integer(value: Any) -> bool:
    """Return whether ``value`` holds an integer orjson would have turned into a float."""
    stack = [value]
    while stack:
        item = stack.pop()
        if item.__class__ is int:
            if not _INT64_MIN <= item <= _UINT64_MAX:
                return True
        elif item.__class__ is dict:
            stack.extend(item.values())
        elif item.__class__ is list:
            stack.extend(item)
    return False


def json_text(value: Any, *, sort_keys: bool = False) -> str:
    """Return ``value`` as compact JSON text, by orjson, or by the standard library when
    it holds an integer beyond 64 bits (which orjson cannot write); ``sort_keys`` orders
    every object's keys."""
    try:
        return orjson.dumps(value, default=repr,
                            option=orjson.OPT_SORT_KEYS if sort_keys else 0).decode()
    except TypeError:
        return json.dumps(value, default=repr, sort_keys=sort_keys, ensure_ascii=False,
                          separators=(",", ":"))
