"""The aligner and the signatures run with the standard library alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.recovery.test_stdlib_only import imported_modules

ROOT = Path(__file__).resolve().parents[2]


def test_align_and_signatures_import_only_stdlib_and_recovery() -> None:
    for name in ("align.py", "signatures.py"):
        for module in imported_modules(ROOT / "ledgerviz" / "compare" / name):
            allowed = (module.split(".")[0] in sys.stdlib_module_names
                       or module.startswith("ledgerviz.recovery"))
            assert allowed, f"{name} imports {module}"


def test_they_run_without_site_packages() -> None:
    script = (
        "import sys\n"
        "from ledgerviz.compare.align import align_sessions\n"
        "from ledgerviz.compare.signatures import session_keys\n"
        "hi = [{'type': 'text', 'text': 'hi'}]\n"
        "events = [{'type': 'turn/start', 'data': {'turn': 1}},\n"
        "          {'type': 'user/message', 'data': {'content': hi}}]\n"
        "keys = session_keys(events)\n"
        "assert keys.signatures[1] == ('user/message', None, None, 'hi', None)\n"
        "rows = align_sessions(keys.signatures, keys.signatures[:1], keys.types, keys.types[:1],\n"
        "                      keys.turn_starts, keys.turn_starts)\n"
        "assert rows == [(0, 0), (1, None)], rows\n"
        "heavy = {'pandas', 'orjson', 'plotly', 'numpy', 'msgspec'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", script], cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
