"""Folder walks when the file system changes or refuses under them, and their order.

A folder that vanishes between being listed and being entered, and a file that cannot be
opened, are simulated (the suite runs as root, which can open anything). Expected
diagnostics are the messages the reader documents, with the operating system's text.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from ledger_lines import HEADER, encode, turn_start

from ledgerviz.ledger import read_sessions, sources

LEDGER = encode([HEADER, turn_start(0)])


def found(source: Path | str) -> dict[str, list[tuple[str, str]]]:
    return {Path(log.path).name: [(d.kind, d.message) for d in log.diagnostics]
            for log in read_sessions(source)}


def vanishing(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make the folder ``name`` disappear once it has been listed (``os.stat`` fails)."""
    real_stat = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path).endswith(name):
            raise FileNotFoundError(2, "No such file or directory", os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)


def two_folders(tmp_path: Path) -> None:
    (tmp_path / "a_gone").mkdir()
    (tmp_path / "a_gone" / "lost.jsonl").write_bytes(LEDGER)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "kept.jsonl").write_bytes(LEDGER)


def test_a_folder_that_vanishes_during_the_walk_is_reported_and_the_walk_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two_folders(tmp_path)
    vanishing(monkeypatch, "a_gone")
    assert found(tmp_path) == {
        "a_gone": [("unreadable", "cannot read folder: No such file or directory")],
        "kept.jsonl": [],
    }


def test_a_glob_walk_skips_a_vanished_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two_folders(tmp_path)
    vanishing(monkeypatch, "a_gone")
    assert found(f"{tmp_path}/**/*.jsonl") == {"kept.jsonl": []}


def test_a_file_that_cannot_be_opened_is_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ok.jsonl").write_bytes(LEDGER)
    (tmp_path / "secret.jsonl").write_bytes(LEDGER)
    real_open = sources.open_identified

    def refusing_open(path: str) -> Any:
        if path.endswith("secret.jsonl"):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path)

    # root (as CI runs) may open any file: the reader's open is refused instead
    monkeypatch.setattr(sources, "open_identified", refusing_open)
    assert found(tmp_path) == {"ok.jsonl": [],
                               "secret.jsonl": [("unreadable", "cannot read: Permission denied")]}


def test_a_folder_is_read_in_the_order_of_its_path_texts(tmp_path: Path) -> None:
    # as text "a-b.jsonl" < "a/b.jsonl" ("-" is before "/"), as path parts "a" < "a-b.jsonl"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.jsonl").write_bytes(LEDGER)
    (tmp_path / "a-b.jsonl").write_bytes(LEDGER)
    (tmp_path / "c.jsonl").write_bytes(LEDGER)
    paths = [Path(log.path).relative_to(tmp_path).as_posix() for log in read_sessions(tmp_path)]
    assert paths == ["a-b.jsonl", "a/b.jsonl", "c.jsonl"]


def test_a_folder_error_without_a_file_name_names_the_folder_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ok.jsonl").write_bytes(LEDGER)
    (tmp_path / "locked").mkdir()
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")  # no file name
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert found(tmp_path) == {
        tmp_path.name: [("unreadable", "cannot read folder: Permission denied")],
        "ok.jsonl": [],
    }


def test_a_walk_looks_up_no_regular_file_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its folder's entries say which files are regular: only the others (a FIFO, a
    symbolic link) are looked up, and they are still reported."""
    for n in range(5):
        (tmp_path / f"s{n}.jsonl").write_bytes(LEDGER)
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "s0.jsonl")
    looked_up: list[str] = []
    real_stat = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        looked_up.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    walked = sources.expand_found(str(tmp_path))
    assert sorted(Path(p).name for p in looked_up if p.endswith(".jsonl")) == [
        "link.jsonl", "pipe.jsonl"]
    assert [(Path(f.path).name, f.problem and f.problem.kind) for f in walked] == [
        ("link.jsonl", None), ("pipe.jsonl", "not_a_file"), *((f"s{n}.jsonl", None)
                                                             for n in range(5))]
