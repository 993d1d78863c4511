"""Property: every ledger the simulator writes, cut at any event and crash-repaired, stays valid."""

import io
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledgerviz.ledger import read_sessions
from ledgerviz.ledger.writer import encode_line
from ledgerviz.recovery import (
    PROVIDERS,
    analyze,
    crash_closers,
    export,
    pairing_problems,
    project_context,
)
from ledgerviz.simulate import SCENARIOS, write_scenario

from .conftest import read_ledger
from .format_rules import event_problems

CUTTABLE = [name for name in SCENARIOS if name != "large"]
RUNTIME_POLICY = {"resume-fork": "fork"}  # every other scenario's runtime repairs by synthesizing
VALID = {provider: [] for provider in PROVIDERS}


def _ledgers(name: str, seed: int) -> list[tuple[dict, list[dict]]]:
    with tempfile.TemporaryDirectory() as folder:
        multi = SCENARIOS[name].multi_session
        files = write_scenario(name, Path(folder) / ("out" if multi else "out.jsonl"), seed=seed)
        return [read_ledger(path) for path in files]


def _reread(header: dict, events: list[dict]) -> list:
    text = "".join(encode_line(obj) for obj in [header, *events])
    [session] = read_sessions(io.BytesIO(text.encode("utf-8")))
    assert session.events == events
    return session.diagnostics


def _provider_problems(events: list[dict], policy: str) -> dict[str, list]:
    context = project_context(analyze(events, policy=policy, version=4))
    return {provider: pairing_problems(export(context, provider)) for provider in PROVIDERS}


@pytest.mark.parametrize("name", CUTTABLE)
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_cut_anywhere_and_repaired_is_a_valid_balanced_ledger(name: str, seed: int) -> None:
    for header, events in _ledgers(name, seed):
        for cut in range(len(events) + 1):
            prefix = events[:cut]
            repaired = prefix + crash_closers(prefix)
            assert event_problems(repaired) == [], (name, seed, cut)
            assert crash_closers(repaired) == []
            assert _reread(header, repaired) == []
            assert _provider_problems(repaired, RUNTIME_POLICY.get(name, "synthesize")) == VALID
            assert _provider_problems(repaired, "recorded") == VALID
