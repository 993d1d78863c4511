"""``call_key`` and ``js_string`` answer as JavaScript does (expected values: node's own
``String(v)`` and ``Map`` behaviour, run by hand on each value)."""

from __future__ import annotations

from typing import Any

import pytest

from ledgerviz.recovery.runtime_values import UNDEFINED, call_key, defined, js_string


@pytest.mark.parametrize(("value", "written"), [
    ("A", "A"), (["A", 1], "A,1"), ([None, [1, 2]], ",1,2"), ({}, "[object Object]"),
    (1e-7, "1e-7"), (1e21, "1e+21"), (2.5, "2.5"), (7.0, "7"), (7, "7"), (True, "true"),
    (None, "null"), (UNDEFINED, "undefined"), (-0.5, "-0.5"),
    (123456789012.5, "123456789012.5"), (1.5e-10, "1.5e-10"),
])
def test_js_string(value: Any, written: str) -> None:
    assert js_string(value) == written


def test_call_key_equality_is_the_maps() -> None:
    assert call_key(1) == call_key(1.0)
    assert len({call_key(v) for v in ("1", 1, True, None, "null", "true")}) == 6
    assert call_key(["A"]) != call_key(["A"]) and call_key({}) != call_key({})


def test_undefined_matches_only_itself() -> None:
    # JavaScript: undefined === undefined, undefined !== null, and a Map keeps them apart
    assert call_key(UNDEFINED) == call_key(UNDEFINED)
    assert len({call_key(v) for v in (UNDEFINED, None, "undefined")}) == 3
    assert defined(UNDEFINED) is None and defined("A") == "A" and repr(UNDEFINED) == "undefined"
