"""plain_table and Context.accepted_by: the text the example notebooks' checked cells print."""

from __future__ import annotations

import pandas as pd

import ledgerviz
from ledgerviz.api import Context
from ledgerviz.display.plain import plain_table
from ledgerviz.examples import example_path


def test_plain_table_drops_the_index_and_shows_missing_values_as_a_dash() -> None:
    frame = pd.DataFrame({"seq": pd.array([3, None], dtype="Int64"), "tool": ["grep", None]},
                         index=[10, 11])
    assert plain_table(frame).splitlines() == ["seq tool", "  3 grep", "  -    -"]


def context_with(valid: dict[str, bool]) -> Context:
    return Context(policy="recorded", session="s", messages=[], payload=None,
                   problems={}, valid=valid)


def test_accepted_by_names_all_none_or_the_accepting_providers() -> None:
    assert context_with({"openai": True, "anthropic": True}).accepted_by() == "all"
    assert context_with({"openai": False, "anthropic": False}).accepted_by() == "none"
    assert context_with({"openai": False, "anthropic": True}).accepted_by() == "anthropic"
    assert context_with({"openai": True, "anthropic": False}).accepted_by() == "openai"


def test_a_crash_mid_dispatch_is_accepted_by_none_as_recorded_and_by_all_once_repaired() -> None:
    # the crashed turn asked for calls that have no result: both providers refuse the request
    ledger = ledgerviz.load(example_path("crash-mid-dispatch"))
    assert ledger.context("recorded").accepted_by() == "none"
    assert ledger.context("synthesize").accepted_by() == "all"
    assert ledger.context("fork").accepted_by() == "all"
