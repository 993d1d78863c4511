"""``ledgerviz fork`` on a ``.jsonl.zst`` whose stream was cut short refuses, exit 1, and
names the cut (``stream_cut``), as ``repair`` refuses and ``Ledger.fork`` refuses the
load: the fork policy's boundary (a call without a result) and whether the runtime reads
the parent to a boundary depend on the lines lost (it wrote a child, exit 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.recovery import ForkRefused

zstandard = pytest.importorskip("zstandard")


def parent_frames(tmp_path: Path) -> list[bytes]:
    """Return a crash-mid-dispatch ledger (a fork point) as one Zstandard frame a line."""
    ledger = tmp_path / "parent.jsonl"
    assert main(["simulate", "--scenario", "crash-mid-dispatch", "--turns", "3",
                 "-o", str(ledger)]) == 0
    compress = zstandard.ZstdCompressor().compress
    return [compress(line) for line in ledger.read_bytes().splitlines(keepends=True)]


@pytest.mark.parametrize("at", [None, "10"])
def test_fork_refuses_a_stream_cut_inside_its_last_frame(tmp_path: Path, capsys,
                                                         at: str | None) -> None:
    frames = parent_frames(tmp_path)
    cut = b"".join(frames[:-1]) + frames[-1][:len(frames[-1]) // 2]
    parent = tmp_path / "cut.jsonl.zst"
    parent.write_bytes(cut)
    child = tmp_path / "child.jsonl"
    capsys.readouterr()
    assert main(["fork", str(parent), "-o", str(child), *(["--at", at] if at else [])]) == 1
    err = capsys.readouterr().err
    # the last line's frame is the one cut: the lines before it are whole
    assert err.startswith(f"ledgerviz fork: {parent}: line {len(frames)}: Zstandard stream is "
                          f"cut short inside a frame after {len(cut):,} compressed bytes (")
    assert err.endswith(f"{len(frames) - 1} lines whole): what followed is lost "
                        "[stream_cut]; no child written\n")
    assert not child.exists()
    with pytest.raises(ForkRefused, match=r"\[stream_cut\]$"):  # the load's fork alike
        ledgerviz.load(parent).fork(None if at is None else int(at))


def test_fork_writes_the_child_of_the_whole_stream(tmp_path: Path) -> None:
    """The same frames uncut: the child is written (the refusal is the cut's doing)."""
    parent = tmp_path / "whole.jsonl.zst"
    parent.write_bytes(b"".join(parent_frames(tmp_path)))
    child = tmp_path / "child.jsonl"
    assert main(["fork", str(parent), "-o", str(child)]) == 0
    assert child.stat().st_size > 0
