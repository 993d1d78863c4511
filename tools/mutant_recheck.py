"""Re-check named mutants of a finished or running mutmut run, without touching it.

Run it from a COPY of the run's ``mutants/`` folder (``cp -r /tmp/mut/mutants /tmp/copy``,
then copy new tests into ``/tmp/copy/tests/``): it reads mutmut's generated mutants and
its map of which tests reach which function (``mutmut-stats.json``), warms pytest up once
and, for each mutant, forks a child with that mutant active that runs, fastest first and
stopping at the first failure (``-x``), the tests mutmut recorded for its function plus
the ``--extra`` test paths (new tests, which mutmut's stats do not know yet). As mutmut
does, except that it writes no results: it prints one verdict a mutant, ``killed``,
``survived``, ``no tests`` or ``timeout`` (past ``--timeout`` seconds of wall clock).

    cd /tmp/copy && nice -n 19 python /path/to/tools/mutant_recheck.py \\
        --names names.txt --extra tests/ledger/test_new.py --timeout 60
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import sys
import time
import tomllib
from pathlib import Path

MUTMUT = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["mutmut"]  # the run's copy
PYTEST_ARGS = ["--rootdir=.", "--tb=native", "-p", "no:randomly", *MUTMUT["pytest_add_cli_args"]]
SELECTION = MUTMUT["pytest_add_cli_args_test_selection"]


class Collected:
    """A pytest plugin that keeps the node ids collected."""

    def __init__(self) -> None:
        self.ids: set[str] = set()

    def pytest_collection_modifyitems(self, items: list) -> None:
        self.ids.update(item.nodeid for item in items)


def verdict(name: str, tests: list[str], timeout: float) -> str:
    """Run ``tests`` with mutant ``name`` active in a forked child; return the outcome."""
    from mutmut.mutation.trampoline import set_mutant_under_test

    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        limit = int(timeout) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
        set_mutant_under_test(name)
        import pytest

        try:
            code = int(pytest.main(["-x", *tests, *PYTEST_ARGS]))
        except BaseException:
            code = 2
        os._exit(code)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - start > timeout:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.1)
    if os.WIFSIGNALED(status):
        return "timeout" if os.WTERMSIG(status) == 24 else f"signal {os.WTERMSIG(status)}"
    return {0: "survived", 1: "killed"}.get(os.WEXITSTATUS(status), f"error {status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=Path, required=True, help="mutant names, one a line")
    parser.add_argument("--extra", nargs="*", default=[], help="test paths run for every mutant")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a mutant may take")
    options = parser.parse_args()
    sys.path.insert(0, os.getcwd())
    sys.dont_write_bytecode = True
    os.environ["PY_IGNORE_IMPORTMISMATCH"] = "1"
    import pytest
    from mutmut.utils.format_utils import mangled_name_from_mutant_name

    stats = json.loads(Path("mutmut-stats.json").read_text())
    tests_of = stats["tests_by_mangled_function_name"]
    collected = Collected()
    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main(["--collect-only", "-qqq", *SELECTION, *PYTEST_ARGS], plugins=[collected])
    for name in options.names.read_text().split():
        recorded = [test for test in tests_of.get(mangled_name_from_mutant_name(name), [])
                    if test in collected.ids]  # a test renamed since the stats is gone
        tests = recorded + options.extra  # tests/conftest.py runs them fastest first
        outcome = verdict(name, tests, options.timeout) if tests else "no tests"
        print(name, outcome, flush=True)


if __name__ == "__main__":
    main()
