"""Inputs that are no regular file: a FIFO, a device, a dangling link, a file swapped
after the walk (issue 38). Every open is non-blocking and checked on its descriptor, so
none of them can hang a read; each is one diagnostic naming it, the others still read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ledger_lines import HEADER, encode, turn_start

from ledgerviz.ledger import UnreadableSourceError, read_sessions
from ledgerviz.ledger.sources import expand_found, found_chunks

LEDGER = encode([HEADER, turn_start(0)])
FIFO = "a named pipe (FIFO), not a file: skipped"


pytestmark = pytest.mark.usefixtures("no_hang")  # a blocked read fails, never hangs


def diagnostics(source: Path | str) -> dict[str, list[tuple[str, str]]]:
    return {Path(log.path).name: [(d.kind, d.message) for d in log.diagnostics]
            for log in read_sessions(source)}


def test_a_fifo_a_device_link_and_a_dangling_link_in_a_folder_are_one_diagnostic_each(
    tmp_path: Path,
) -> None:
    (tmp_path / "ok.jsonl").write_bytes(LEDGER)
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    assert diagnostics(tmp_path) == {
        "dangling.jsonl": [("unreadable", "cannot read: No such file or directory")],
        "ok.jsonl": [],
        "pipe.jsonl": [("not_a_file", FIFO)],
        "zero.jsonl": [("not_a_file", "a device, not a file: skipped")],
    }


def test_a_file_swapped_for_a_fifo_after_the_walk_is_refused_once_opened(
    tmp_path: Path,
) -> None:
    (tmp_path / "ok.jsonl").write_bytes(LEDGER)
    (tmp_path / "swapped.jsonl").write_bytes(LEDGER)
    found = expand_found(str(tmp_path))
    (tmp_path / "swapped.jsonl").unlink()
    os.mkfifo(tmp_path / "swapped.jsonl")  # no writer: a blocking open would wait forever
    chunks = {Path(f.path).name: list(found_chunks(f, 1 << 20)) for f in found}
    assert chunks["ok.jsonl"] == [LEDGER]
    [problem] = chunks["swapped.jsonl"]
    assert (problem.kind, problem.message) == ("not_a_file", FIFO)


def test_a_fifo_named_directly_is_refused_with_its_name(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    with pytest.raises(UnreadableSourceError, match=r"pipe\.jsonl: a named pipe \(FIFO\)"):
        read_sessions(tmp_path / "pipe.jsonl")


def test_a_file_named_directly_and_swapped_for_a_fifo_raises_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "swapped.jsonl"
    path.write_bytes(LEDGER)
    [found] = expand_found(str(path))
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(UnreadableSourceError) as raised:
        list(found_chunks(found))
    assert str(raised.value) == f"{path}: a named pipe (FIFO), not a file"
