"""Decoded JSON values as the runtime (JavaScript) compares and prints them.

A ledger may name a call with a value that is no string (a number, ``true``, an array):
the runtime reads such a line as it is. Its crash-repair scan files calls in a ``Map``
and writes each call id into the synthetic result's id with a template string; these
two functions give the same answers for decoded JSON values.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any

_EXPONENT = re.compile(r"e([+-])0*(\d)")


class _Undefined:
    """JavaScript's ``undefined``: what the runtime reads for a key an object does not have
    (a tool-call block without ``id``). It equals itself, unlike ``null``, and
    ``JSON.stringify`` leaves a key holding it out."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()
"""The one ``undefined`` (see ``_Undefined``)."""


def defined(value: Any) -> Any:
    """Return ``value``, or None for ``UNDEFINED`` (how tables and reports show a missing id)."""
    return None if value is UNDEFINED else value


def call_key(value: Any) -> Hashable:
    """Return the key under which the runtime's ``Map`` files ``value``.

    Strings, numbers, booleans and null are equal when their type and value are (``1``
    matches ``1.0`` but neither ``"1"`` nor ``true``); an array or object is only equal
    to itself, and no two decoded ones are the same object: each gets a key of its own.
    ``UNDEFINED`` (a missing id) matches only itself.
    """
    kind = value.__class__
    if kind is str:
        return value
    if kind is int or kind is float:
        return ("number", value)
    if kind is bool:
        return ("boolean", value)
    if value is None:
        return ("null", None)
    if value is UNDEFINED:
        return ("undefined", None)
    return object()


def js_string(value: Any) -> str:
    """Return ``String(value)`` for a decoded JSON value (``true``, ``null``, ``2.5``,
    ``7`` for 7.0, an array's items joined by commas, ``[object Object]``)."""
    kind = value.__class__
    if kind is str:
        return value
    if value is None:
        return "null"
    if value is UNDEFINED:
        return "undefined"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return _EXPONENT.sub(r"e\1\2", repr(value))
    if kind is list:
        return ",".join("" if item is None else js_string(item) for item in value)
    return "[object Object]"
