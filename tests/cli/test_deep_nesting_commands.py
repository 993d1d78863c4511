"""A ledger nested as deep as the reader decodes, through every command (issue 38): the
fork writer copies it, the explorer shows it, nothing raises ``RecursionError``."""

from __future__ import annotations

from pathlib import Path

import pytest

import ledgerviz as lv
from ledgerviz.cli import main
from ledgerviz.ledger import read_session

LEVELS = 1000
"""Arrays nested in a result's ``meta``: near orjson's 1024, far past the recursion limit
of an encoder that recurses more than once a level."""

META = b"[" * LEVELS + b"]" * LEVELS

LINES = [
    b'{"type":"session","version":4,"id":"deep","createdAt":0}',
    b'{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}',
    b'{"type":"step/start","seq":1,"time":0,"data":{"turn":1,"step":1}}',
    b'{"type":"assistant/message","seq":2,"time":0,"surfaceOp":"append","data":{"turn":1,'
    b'"step":1,"stream":[],"message":{"id":"m","role":"assistant","source":{"kind":"model"},'
    b'"content":[{"type":"tool-call","id":"A","name":"ls","arguments":"{}"},'
    b'{"type":"tool-call","id":"B","name":"ls","arguments":"{}"}]}}}',
    b'{"type":"tool/call","seq":3,"time":0,"data":{"turn":1,"step":1,"callId":"A",'
    b'"name":"ls","arguments":"{}"}}',
    b'{"type":"tool/result","seq":4,"time":0,"surfaceOp":"append","data":{"turn":1,"step":1,'
    b'"meta":' + META + b',"message":{"id":"r","role":"tool","toolCallId":"A",'
    b'"source":{"kind":"tool","callId":"A"},"content":[{"type":"text","text":"ok"}]}}}',
    b'{"type":"tool/call","seq":5,"time":0,"data":{"turn":1,"step":1,"callId":"B",'
    b'"name":"ls","arguments":"{}"}}',
]


@pytest.fixture
def ledger_file(tmp_path: Path) -> Path:
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"\n".join(LINES) + b"\n")
    return path


def test_the_fork_writer_copies_a_deep_event_byte_for_byte(
    ledger_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    child = tmp_path / "child.jsonl"
    assert main(["fork", "--at", "5", "-o", str(child), str(ledger_file)]) == 0
    written = child.read_bytes().split(b"\n")
    assert written[1:7] == LINES[1:]  # the six parent events, as the parent holds them
    assert read_session(str(child), child.read_bytes()).diagnostics == []
    for argv in (["check"], ["check", "--stream"], ["repair"]):
        assert main([*argv, str(ledger_file)]) == 0
    capsys.readouterr()


def test_the_explorer_details_show_a_deep_event(ledger_file: Path) -> None:
    from ledgerviz.widgets.details import event_details_html

    analysis = lv.load(ledger_file).recovery("synthesize").analyses["deep"]
    shown = event_details_html(analysis, 4)
    assert '"meta":' + "[" * LEVELS in shown.replace("&quot;", '"')
