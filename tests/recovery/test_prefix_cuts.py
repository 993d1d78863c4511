"""``PrefixAnalyses(every=k).analysis(n) == analyze(events[:n])`` for every spacing ``k``
and every cut ``n``, under every policy, over the ledgers of the fork-rule tests (issue 38).

The ledgers are the ones ``test_fork_rules`` builds: each of its tests is run with the
``analyze`` it calls recording the events it is given, so no ledger is written twice."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from ledgerviz.recovery import PrefixAnalyses, analyze
from ledgerviz.recovery.analysis import POLICIES

from . import test_fork_rules


def _fork_rule_ledgers() -> dict[str, list[dict[str, Any]]]:
    """Return the events each fork-rule test analyses, by test name (its first ledger)."""
    found: dict[str, list[dict[str, Any]]] = {}
    tests = [(name, test) for name, test in vars(test_fork_rules).items()
             if name.startswith("test_") and inspect.isfunction(test)]
    for name, test in tests:
        def recording(events: Any, *, name: str = name, **options: Any) -> Any:
            found.setdefault(name, list(events))
            return analyze(events, **options)

        test_fork_rules.analyze = recording  # type: ignore[attr-defined]
        try:
            test()
        finally:
            test_fork_rules.analyze = analyze  # type: ignore[attr-defined]
    return found


LEDGERS = _fork_rule_ledgers()


def test_every_fork_rule_test_gave_a_ledger() -> None:
    tests = [name for name in vars(test_fork_rules) if name.startswith("test_")]
    assert sorted(LEDGERS) == sorted(tests)


@pytest.mark.parametrize("name", sorted(LEDGERS))
@pytest.mark.parametrize("policy", POLICIES)
def test_every_spacing_and_every_cut_is_the_analysis_of_the_prefix(name: str, policy: str
                                                                    ) -> None:
    events = LEDGERS[name]
    expected = [analyze(events[:n], policy=policy) for n in range(len(events) + 1)]
    for every in range(1, len(events) + 2):
        prefixes = PrefixAnalyses(events, policy=policy, every=every)
        for n in range(len(events) + 1):
            assert prefixes.analysis(n) == expected[n], (every, n)
