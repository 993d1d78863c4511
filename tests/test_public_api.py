"""The public surface, pinned: a name added or dropped here is a decision, not an accident.

Runtimes import ``ledgerviz.recovery`` unchanged, so its names are pinned as well.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import ledgerviz
import ledgerviz.recovery

PUBLIC = ["Ledger", "LedgerError", "SessionDiff", "__version__", "diff", "diff_timeline",
          "explore", "load", "timeline", "to_otlp", "write_report"]

RECOVERY = [
    "DEFAULT_POLICY", "FORK_VERSION", "POLICIES", "PROVIDERS", "Analysis", "CallFacts",
    "ContextMessage", "ForkRefused", "PendingCall", "PendingCalls", "PrefixAnalyses", "Problem",
    "ProviderRequest", "analyze", "crash_closers", "export", "failed_step_closers",
    "first_fork_point", "fork_boundary", "fork_header", "fork_seed", "generation_for",
    "pairing_problems", "project_context", "result_call_id", "result_error_code", "seq_of",
    "source_seqs", "tool_call_blocks",
]

SUBPACKAGES = ["ledger", "recovery", "frames", "plot", "widgets", "simulate", "report", "export",
               "compare"]


def test_the_top_level_names_are_pinned_and_resolve() -> None:
    assert sorted(ledgerviz.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(ledgerviz, name) is not None


def test_tab_completion_lists_the_lazy_names() -> None:
    assert dir(ledgerviz) == sorted(PUBLIC)


def test_every_name_the_docs_call_on_lv_is_public() -> None:
    """The README once listed ``lv.report``, which never existed (issue 40)."""
    root = Path(__file__).resolve().parents[1]
    text = "".join(path.read_text(encoding="utf-8")
                   for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    called = set(re.findall(r"\blv\.([A-Za-z_]\w*)", text))
    assert {"load", "timeline", "explore", "write_report"} <= called
    assert sorted(called - set(PUBLIC)) == []


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ledgerviz.nope  # noqa: B018


def test_the_recovery_names_runtimes_import_are_pinned() -> None:
    assert sorted(ledgerviz.recovery.__all__) == sorted(RECOVERY)
    for name in RECOVERY:
        assert getattr(ledgerviz.recovery, name) is not None


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_every_subpackage_names_what_it_exports(package: str) -> None:
    module = importlib.import_module(f"ledgerviz.{package}")
    assert module.__all__, package
    for name in module.__all__:
        assert hasattr(module, name), f"ledgerviz.{package}.{name}"
