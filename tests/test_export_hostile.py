"""Export against hostile inputs and a hostile folder (issue 38): special files in an
input folder, session ids no folder name can hold, a run that fails half-way, an edited
manifest."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import dask
import duckdb
import pyarrow.dataset as ds
import pytest

import ledgerviz.export.dask as lvd
from ledgerviz.cli import main
from ledgerviz.export import MANIFEST_NAME, ExportError, export, parquet, read_export

CLEAN = Path(__file__).parents[1] / "ledgerviz" / "examples" / "clean.jsonl"
LONG_ID = "é" * 150 + "/x"  # 302 bytes of UTF-8: longer than any file name
HOSTILE_IDS = [LONG_ID, "__HIVE_DEFAULT_PARTITION__", "a/../b", "%41 = 50%", ".", "A", "a"]


pytestmark = pytest.mark.usefixtures("no_hang")  # a blocked read fails, never hangs
HANG_SECONDS = 60


def with_id(session_id: str) -> bytes:
    """Return clean.jsonl with the header id ``session_id``."""
    header, rest = CLEAN.read_bytes().split(b"\n", 1)
    fields = json.loads(header)
    fields["id"] = session_id
    return json.dumps(fields).encode() + b"\n" + rest


def ledgers(folder: Path, ids: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, session_id in enumerate(ids):
        (folder / f"s{i}.jsonl").write_bytes(with_id(session_id))
    return folder


def tree(root: Path) -> dict[str, str]:
    """Return every file under ``root`` with the SHA-256 of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def special_files(folder: Path) -> None:
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "zero.jsonl").symlink_to("/dev/zero")
    (folder / "dangling.jsonl").symlink_to(folder / "gone.jsonl")


def test_special_files_in_a_folder_are_skipped_by_name_and_the_others_exported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    inputs = ledgers(tmp_path / "in", ["one", "two"])
    special_files(inputs)
    summary = export([inputs], tmp_path / "out")
    assert summary.sessions == ["one", "two"]
    assert summary.skipped == [
        (str(inputs / "dangling.jsonl"), "cannot read: No such file or directory"),
        (str(inputs / "pipe.jsonl"), "a named pipe (FIFO), not a file: skipped"),
        (str(inputs / "zero.jsonl"), "a device, not a file: skipped"),
    ]
    assert main(["export", str(inputs), "-o", str(tmp_path / "cli")]) == 1
    err = capsys.readouterr().err
    assert f"ledgerviz export: {inputs / 'pipe.jsonl'}: a named pipe (FIFO)" in err
    assert f"ledgerviz export: {inputs / 'zero.jsonl'}: a device, not a file: skipped" in err


def test_dask_reads_and_exports_a_folder_with_special_files(tmp_path: Path) -> None:
    inputs = ledgers(tmp_path / "in", ["one"])
    special_files(inputs)
    with dask.config.set(scheduler="synchronous"):
        events = lvd.frames(inputs)["events"].compute()
        summary = lvd.export(inputs, tmp_path / "out")
    assert sorted(events["session"].unique()) == ["one"]  # the special files have no rows
    assert (summary.sessions, len(summary.skipped)) == (["one"], 3)


def test_any_session_id_round_trips_through_the_export_duckdb_and_pyarrow(
    tmp_path: Path,
) -> None:
    inputs = ledgers(tmp_path / "in", HOSTILE_IDS)
    out = tmp_path / "out"
    assert export([inputs], out).sessions == HOSTILE_IDS
    assert list(read_export(out)["events"]["session"].unique()) == HOSTILE_IDS
    found = duckdb.sql(f"SELECT DISTINCT session FROM read_parquet('{out}/events/*/*.parquet', "
                       "hive_partitioning = true)").fetchall()
    assert sorted(row[0] for row in found) == sorted(HOSTILE_IDS)
    table = ds.dataset(out / "events", format="parquet", partitioning="hive").to_table()
    assert sorted(set(table.column("session").to_pylist())) == sorted(HOSTILE_IDS)
    assert len(list((out / "events").iterdir())) == len(HOSTILE_IDS)  # "A" and "a" apart


def test_partition_folder_names_are_bounded_and_show_the_key() -> None:
    # sha256("sim-clean-7") starts e88e36a81331d948
    assert parquet.partition_folder("sim-clean-7") == "session-sim-clean-7-e88e36a81331d948"
    assert len(parquet.partition_folder(LONG_ID).encode()) == len("session-") + 64 + 1 + 16


def test_a_run_that_fails_half_way_leaves_the_dataset_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs = ledgers(tmp_path / "in", ["one", "two"])
    out = tmp_path / "out"
    export([inputs], out)
    before = tree(out)
    (inputs / "s1.jsonl").write_bytes(with_id("two") + b"\n")  # changed: rewritten
    (inputs / "s2.jsonl").write_bytes(with_id("three"))
    real_write = parquet.write_partitions
    written: list[str] = []

    def failing(frame: object, name: str, *args: object, **kwargs: object) -> None:
        if written:  # the first frame is written, the second fails
            raise OSError(28, "No space left on device")
        written.append(name)
        real_write(frame, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("ledgerviz.export.dataset.write_partitions", failing)
    with pytest.raises(OSError, match="No space left"):
        export([inputs], out)
    assert written == ["events"]
    assert tree(out) == before  # no new events beside old turns, nothing staged left


def test_a_first_run_that_fails_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs = ledgers(tmp_path / "in", ["one"])

    def failing(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("ledgerviz.export.dataset.write_partitions", failing)
    with pytest.raises(OSError):
        export([inputs], tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda m: m["files"][0].update(size="12"), "files[0].size is a string, not an integer"),
        (lambda m: m["files"][0].update(size=True), "files[0].size is a boolean, not an integer"),
        (lambda m: m["files"][1].pop("sha256"),
         "files[1] has the fields ['key', 'mtime_ns', 'natural_key', 'path', 'size'], not "
         "['key', 'mtime_ns', 'natural_key', 'path', 'sha256', 'size']"),
        (lambda m: m["files"][0].update(sha256="00"),
         "files[0].sha256 is not 64 lowercase hex digits"),
        (lambda m: m["files"][0].update(path="rel.jsonl"), "files[0].path is not an absolute path"),
        (lambda m: m.update(sessions=["two", "one"]),
         "'sessions' is not the list of the files' keys"),
        (lambda m: m.update(files={}), "files is an object, not a list"),
        (lambda m: m.pop("policy"), "policy is missing"),
        (lambda m: m["files"].append(dict(m["files"][0])) or m["sessions"].append("one"),
         "two files have the same key"),
    ],
)
def test_an_edited_manifest_is_a_clear_error(tmp_path: Path, edit: object, problem: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    inputs = ledgers(tmp_path / "in", ["one", "two"])
    out = tmp_path / "out"
    export([inputs], out)
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    edit(manifest)  # type: ignore[operator]
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    before = tree(out)
    expected = (f"{out / MANIFEST_NAME}: not a manifest ledgerviz wrote (edited or damaged): "
                f"{problem}; export into a new folder, or empty this one")
    with pytest.raises(ExportError) as raised:
        export([inputs], out)
    assert str(raised.value) == expected
    assert main(["export", str(inputs), "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"ledgerviz export: {expected}\n"
    assert tree(out) == before


def test_a_file_that_became_a_fifo_is_skipped_and_its_partitions_removed(tmp_path: Path) -> None:
    inputs = ledgers(tmp_path / "in", ["one", "two"])
    out = tmp_path / "out"
    export([inputs], out)
    (inputs / "s1.jsonl").unlink()
    os.mkfifo(inputs / "s1.jsonl")
    summary = export([inputs], out)
    assert (summary.sessions, summary.removed) == (["one"], [str(inputs / "s1.jsonl")])
    assert summary.skipped == [(str(inputs / "s1.jsonl"),
                                "a named pipe (FIFO), not a file: skipped")]
    assert list(read_export(out)["turns"]["session"].unique()) == ["one"]
    assert sorted(p.name for p in (out / "turns").iterdir()) == [
        parquet.partition_folder("one")]
