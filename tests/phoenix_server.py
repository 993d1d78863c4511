"""A real Arize Phoenix server on 127.0.0.1 for the OTLP tests: started, awaited, stopped."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

START_TIMEOUT = 180.0
"""Seconds the server may take to answer (a 2-core box: about 10 s, migrations included)."""


def free_port() -> int:
    """Return a TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def phoenix_server(workdir: Path) -> Iterator[str]:
    """Run ``phoenix serve`` with its database in ``workdir``; yield its base URL once
    ``/healthz`` answers; stop it on exit. Raises RuntimeError (with the end of its log)
    when it exits or stays silent for :data:`START_TIMEOUT` seconds."""
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    log_path = workdir / "phoenix.log"
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "phoenix.server.main", "serve"],
                                   env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
    try:
        _await(process, f"{url}/healthz", log_path)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def _await(process: subprocess.Popen[bytes], health: str, log_path: Path) -> None:
    """Return once ``health`` answers 200; raise RuntimeError if the server dies or is late."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"phoenix exited with {process.returncode}:\n{_tail(log_path)}")
        try:
            with urllib.request.urlopen(health, timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"phoenix did not answer {health} in {START_TIMEOUT:.0f} s:\n"
                       f"{_tail(log_path)}")


def _tail(log_path: Path, lines: int = 30) -> str:
    """Return the last lines of the server's log."""
    return "\n".join(log_path.read_text(errors="replace").splitlines()[-lines:])
