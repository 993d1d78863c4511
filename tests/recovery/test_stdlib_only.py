"""ledgerviz.recovery runs with the standard library alone (runtimes vendor it)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ledgerviz" / "recovery"


def test_imports_without_site_packages() -> None:
    script = (
        "import sys, ledgerviz.recovery as r\n"
        "events = [{'type': 'turn/start', 'seq': 0, 'time': 5, 'data': {'turn': 1}}]\n"
        "assert [e['type'] for e in r.crash_closers(events)] == ['turn/end']\n"
        "assert r.analyze(events, policy='fork').closers[0]['type'] == 'turn/end'\n"
        "heavy = {'pandas', 'orjson', 'plotly', 'numpy'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", script],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
    return modules


def test_every_import_is_stdlib_or_recovery() -> None:
    files = sorted(PACKAGE.glob("*.py"))
    assert len(files) >= 8
    for path in files:
        for module in imported_modules(path):
            top = module.split(".")[0]
            allowed = top in sys.stdlib_module_names or module.startswith("ledgerviz.recovery")
            assert allowed, f"{path.name} imports {module}"
