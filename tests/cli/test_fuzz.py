"""Hypothesis fuzz (issue 12): any JSON in any field, any byte edit of a real ledger.

Whatever the input: the lenient load never raises, a strict load raises only
``LedgerError``, and frames, every policy, every context, the report, the explorer and
``repair`` never raise; every exit code is 0, 1 or 2.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import Any

import pytest
from hostile_inputs import HEADER, V0_HEADER, base_events, encode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ledgerviz as lv
from ledgerviz.cli import main
from ledgerviz.ledger import LedgerError, read_session
from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.report import render_report

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = sorted((DATA / "conformance" / "inputs").glob("*.jsonl"))
SMALL_REAL = [path for path in REAL if path.stat().st_size < 8000]
DIFF_WITH = REAL[0]

EXAMPLES = int(os.environ.get("LEDGERVIZ_FUZZ_EXAMPLES", "40"))
"""Examples per fuzz test: small in CI; raise it locally to search harder."""

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**53, 2**63, 2**64, -(2**63) - 1, 2**53 - 1, 0, -1]),
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=6),
                    st.sampled_from(["tool-call", "append", "replace", "interrupted", "A"]))
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["kind", "id", "type", "op", "text", "turn", "x"]),
                        inner, max_size=3),
    ),
    max_leaves=6,
)

FIELD_PATHS = [
    ("type",), ("seq",), ("time",), ("data",), ("surfaceOp",), ("sourceEventSeqs",),
    ("ignorable",), ("data", "turn"), ("data", "step"), ("data", "reason"),
    ("data", "reason", "kind"), ("data", "message"), ("data", "message", "content"),
    ("data", "message", "content", 0), ("data", "message", "content", 0, "id"),
    ("data", "message", "content", 0, "name"), ("data", "message", "source"),
    ("data", "message", "source", "callId"), ("data", "message", "toolCallId"),
    ("data", "callId"), ("data", "name"), ("data", "arguments"), ("data", "usage"),
    ("data", "stream"), ("data", "content"), ("data", "inherited"), ("data", "start"),
    ("data", "shadowedSeqs"), ("data", "rewindSeq"), ("data", "error"),
]


def _put(event: Any, path: tuple[Any, ...], value: Any) -> None:
    """Set ``event[path]`` where the containers along it exist; ignore it otherwise."""
    target = event
    for key in path[:-1]:
        try:
            target = target[key]
        except (KeyError, IndexError, TypeError):
            return
    with contextlib.suppress(KeyError, IndexError, TypeError):
        target[path[-1]] = value


@st.composite
def mutated_ledgers(draw: st.DrawFn) -> bytes:
    """A small ledger with random JSON written into random fields of random events."""
    events: list[Any] = base_events()
    events.extend(draw(st.lists(st.sampled_from(base_events()), max_size=3)))
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(events) - 1))
        if draw(st.booleans()):
            _put(events[index], draw(st.sampled_from(FIELD_PATHS)), draw(json_values))
        else:
            events[index] = draw(json_values)
    extra = {"type": draw(st.sampled_from(["surface/rewind", "surface/restore",
                                           "session/end-seed", "text-chunks"])),
             "seq": len(events), "time": 1, "data": draw(json_values)}
    if draw(st.booleans()):
        events.append(extra)
    header = draw(st.sampled_from([HEADER, V0_HEADER, {**HEADER, "version": 3}, None]))
    return encode(header, events)


@st.composite
def edited_real_ledgers(draw: st.DrawFn) -> bytes:
    """A real ledger with random bytes cut, inserted, overwritten or lines repeated."""
    content = bytearray(draw(st.sampled_from(SMALL_REAL)).read_bytes())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(content)))
        edit = draw(st.sampled_from(["cut", "insert", "overwrite", "truncate", "repeat"]))
        piece = draw(st.binary(min_size=1, max_size=8) | st.sampled_from(
            [b"\n", b"{", b'"', b"99999999999999999999", b"\xef\xbb\xbf", b"\x1b[2J", b"]"]))
        if edit == "cut":
            del content[at : at + draw(st.integers(1, 200))]
        elif edit == "insert":
            content[at:at] = piece
        elif edit == "overwrite":
            content[at : at + len(piece)] = piece
        elif edit == "truncate":
            del content[at:]
        else:
            lines = bytes(content).split(b"\n")
            line = draw(st.integers(0, len(lines) - 1))
            lines.insert(line, lines[line])
            content = bytearray(b"\n".join(lines))
    return bytes(content)


def exercise_library(content: bytes) -> lv.Ledger:
    """Load ``content`` every way and compute everything a user can ask of it."""
    with contextlib.suppress(LedgerError):
        read_session("fuzz.jsonl", content, strict=True)
    ledger = lv.Ledger([read_session("fuzz.jsonl", content)])
    for policy in POLICIES:
        view = ledger.recovery(policy)
        for frame in (view.frames.events, view.frames.turns, view.frames.calls):
            assert len(frame.columns) > 0
        for key in ledger.keys:
            ledger.context(policy, provider="anthropic", session=key)
    return ledger


def exercise_commands(tmp_path: Path, content: bytes) -> None:
    """Run ``check`` (whole, strict and streamed), ``repair``, ``fork``, ``diff`` (with the
    unedited example) and ``otlp`` on ``content``: exit 0/1/2 only, never a traceback."""
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(content)
    for argv in (
            ["check", str(path)], ["check", "--strict", "--json", str(path)],
            ["check", "--stream", str(path)], ["repair", str(path)],
            ["fork", str(path), "-o", str(tmp_path / "child.jsonl")],
            ["fork", str(path), "--at", "3", "-o", str(tmp_path / "child-3.jsonl")],
            ["diff", str(DIFF_WITH), str(path)],
            ["otlp", str(path), "-o", str(tmp_path / "spans.json")]):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(
            io.StringIO()
        ):
            assert main(argv) in (0, 1, 2), argv


@FUZZ
@given(mutated_ledgers())
def test_random_json_in_any_field(tmp_path_factory: pytest.TempPathFactory, content: bytes) -> None:
    exercise_library(content)
    exercise_commands(tmp_path_factory.mktemp("fuzz"), content)


@FUZZ
@given(edited_real_ledgers())
def test_random_byte_edits_of_real_ledgers(
    tmp_path_factory: pytest.TempPathFactory, content: bytes
) -> None:
    exercise_library(content)
    exercise_commands(tmp_path_factory.mktemp("fuzz"), content)


@settings(FUZZ, max_examples=max(8, EXAMPLES // 5))
@given(st.one_of(mutated_ledgers(), edited_real_ledgers()))
def test_report_and_explorer_never_raise(content: bytes) -> None:
    ledger = exercise_library(content)
    assert render_report(ledger).startswith("<!")
    from ledgerviz.widgets import explore

    explore(ledger)

