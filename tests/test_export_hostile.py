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
import pyarrow.parquet as pq
import pytest

import ledgerviz.export.dask as lvd
from ledgerviz.cli import main
from ledgerviz.export import MANIFEST_NAME, ExportError, export, parts, read_export

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
    for glob in ("events/*.parquet", "events/**/*.parquet"):  # flat, and as a hive reader
        found = duckdb.sql(f"SELECT session, count(*) FROM read_parquet('{out}/{glob}', "
                           "hive_partitioning = true) GROUP BY 1").fetchall()
        events = len(CLEAN.read_bytes().splitlines()) - 1  # every line after the header
        assert sorted(found) == sorted((key, events) for key in HOSTILE_IDS)  # "A", "a" apart
    table = ds.dataset(out / "events", format="parquet", partitioning="hive").to_table()
    assert sorted(set(table.column("session").to_pylist())) == sorted(HOSTILE_IDS)
    (part,) = (out / "events").iterdir()  # no file or folder is named after a key
    assert parts.PART_NAME.fullmatch(part.stem)


def test_a_run_that_fails_half_way_leaves_the_dataset_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs = ledgers(tmp_path / "in", ["one", "two"])
    out = tmp_path / "out"
    export([inputs], out)
    before = tree(out)
    (inputs / "s1.jsonl").write_bytes(with_id("two") + b"\n")  # changed: rewritten
    (inputs / "s2.jsonl").write_bytes(with_id("three"))
    real_add = parts.PartWriter.add
    added: list[int] = []

    def failing(writer: parts.PartWriter, tables: list[object], lengths: list[list[int]]
                ) -> object:
        if added:  # the first batch is staged, the second fails
            raise OSError(28, "No space left on device")
        added.append(len(lengths[0]))
        return real_add(writer, tables, lengths)  # type: ignore[arg-type]

    monkeypatch.setattr("ledgerviz.export.dataset._BATCH_FILES", 1)  # a batch per file
    monkeypatch.setattr(parts.PartWriter, "add", failing)
    with pytest.raises(OSError, match="No space left"):
        export([inputs], out)
    assert added == [1]
    assert tree(out) == before  # no new part beside the old ones, nothing staged left


def test_a_first_run_that_fails_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs = ledgers(tmp_path / "in", ["one"])

    def failing(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(parts.PartWriter, "add", failing)
    with pytest.raises(OSError):
        export([inputs], tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda m: m["files"][0].update(size="12"), "files[0].size is a string, not an integer"),
        (lambda m: m["files"][0].update(size=True), "files[0].size is a boolean, not an integer"),
        (lambda m: m["files"][1].pop("sha256"),
         "files[1] has the fields ['key', 'mtime_ns', 'natural_key', 'part', 'path', 'rows', "
         "'size'], not ['key', 'mtime_ns', 'natural_key', 'part', 'path', 'rows', 'sha256', "
         "'size']"),
        (lambda m: m["files"][0].update(sha256="00"),
         "files[0].sha256 is not 64 lowercase hex digits"),
        (lambda m: m["files"][0].update(path="rel.jsonl"), "files[0].path is not an absolute path"),
        (lambda m: m.update(sessions=["two", "one"]),
         "'sessions' is not the list of the files' keys"),
        (lambda m: m.update(files={}), "files is an object, not a list"),
        (lambda m: m.pop("policy"), "policy is missing"),
        (lambda m: m["files"].append(dict(m["files"][0])) or m["sessions"].append("one"),
         "two files have the same key"),
        (lambda m: m["files"][0].update(part="../../elsewhere"),
         "files[0].part is not a part name (part-<12 hex digits>-<number>)"),
        (lambda m: m["files"][0]["rows"].pop("lineage"),
         "files[0].rows names the frames ['events', 'turns', 'steps', 'calls', 'messages'], "
         "not ['events', 'turns', 'steps', 'calls', 'messages', 'lineage']"),
        (lambda m: m["files"][0]["rows"].update(calls=[0, -1]),
         "files[0].rows.calls is not [offset, length] of two integers >= 0"),
        (lambda m: m["files"][1]["rows"].update(events=[0, 32]),  # both sessions at row 0
         "the rows of part {part} in events do not follow on at row 32"),
        (lambda m: m["files"][1]["rows"].update(turns=[4, 3]),  # one has 3 turns: a gap
         "the rows of part {part} in turns do not follow on at row 3"),
        (lambda m: m.update(format=4), "format 4 is newer than this ledgerviz reads (3); "
         "upgrade ledgerviz"),
    ],
)
def test_an_edited_manifest_is_a_clear_error(tmp_path: Path, edit: object, problem: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    inputs = ledgers(tmp_path / "in", ["one", "two"])
    out = tmp_path / "out"
    export([inputs], out)
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    part = manifest["files"][0]["part"]
    edit(manifest)  # type: ignore[operator]
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    before = tree(out)
    expected = (f"{out / MANIFEST_NAME}: not a manifest ledgerviz wrote (edited or damaged): "
                f"{problem.format(part=part)}; export into a new folder, or empty this one")
    with pytest.raises(ExportError) as raised:
        export([inputs], out)
    assert str(raised.value) == expected
    with pytest.raises(ExportError) as raised:
        read_export(out)
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
    turns = duckdb.sql(f"SELECT DISTINCT session FROM '{out}/turns/*.parquet'").fetchall()
    assert turns == [("one",)]


def test_rows_swapped_between_sessions_are_found_when_read(tmp_path: Path) -> None:
    inputs = ledgers(tmp_path / "in", ["one", "two"])
    out = tmp_path / "out"
    export([inputs], out)
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    first, second = manifest["files"]
    first["rows"]["events"], second["rows"]["events"] = (second["rows"]["events"],
                                                          first["rows"]["events"])
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))  # still tiles the part
    with pytest.raises(ExportError, match=(
            f"^{out / 'events'}: row 0 of the manifest's rows is not the session the manifest "
            "says")):
        read_export(out)


def test_an_export_of_format_2_is_refused_by_read_export_and_rewritten_by_export(
    tmp_path: Path,
) -> None:
    inputs = ledgers(tmp_path / "in", ["one", "two"])
    out = tmp_path / "out"
    export([inputs], out)
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest["format"] = 2  # format 2: the same manifest without parts, a folder per session
    for row in manifest["files"]:
        del row["part"], row["rows"]
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    for name in ("events", "turns"):
        for part in (out / name).iterdir():
            part.unlink()
        old = out / name / "session-one-7692c3ad3540bb80"
        old.mkdir()
        (old / "part-0.parquet").write_bytes(b"PAR1")
    with pytest.raises(ExportError, match=(
            r"an export of format 2, an older layout; this ledgerviz reads format 3: "
            "run `ledgerviz export` into this folder again to rewrite it")):
        read_export(out)
    summary = export([inputs], out)
    assert len(summary.written) == 2
    assert not list(out.glob("*/session-*"))
    assert sorted(read_export(out)["events"]["session"].unique()) == ["one", "two"]


def test_a_part_file_that_lost_its_rows_stops_the_run_that_would_copy_them(
    tmp_path: Path,
) -> None:
    inputs = ledgers(tmp_path / "in", ["one", "two"])
    out = tmp_path / "out"
    export([inputs], out)
    (events,) = (out / "events").iterdir()
    pq.write_table(pq.read_table(events).slice(0, 0), events)  # every row gone
    before = tree(out)
    (inputs / "s1.jsonl").write_bytes(with_id("two") + b"\n")  # changed: "one" is copied
    with pytest.raises(ExportError, match=(
            f"^{out / 'events'}: row 0 of the manifest's rows is not the session the manifest "
            "says")):
        export([inputs], out)
    assert tree(out) == before


@pytest.mark.parametrize("run", [export, lvd.export], ids=["export", "dask"])
def test_a_second_run_into_a_folder_being_written_stops_and_harms_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: object,
) -> None:
    """Two runs into one folder shared the staging folder: the second emptied the first's.
    Now the second, started while the first writes its parts, is refused before it stages
    anything, and the first publishes every one of its sessions."""
    first = ledgers(tmp_path / "first", ["one", "two"])
    second = ledgers(tmp_path / "second", ["three"])
    out = tmp_path / "out"
    real_add = parts.PartWriter.add
    refused: list[str] = []

    def add_then_start_another(writer: parts.PartWriter, *args: object) -> object:
        if not refused:
            with pytest.raises(ExportError) as raised:
                export([second], out)
            refused.append(str(raised.value))
        return real_add(writer, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(parts.PartWriter, "add", add_then_start_another)
    with dask.config.set(scheduler="sync"):
        run([first], out)  # type: ignore[operator]
    assert refused == [f"{out} is being written by another export run; wait for it to end, "
                       "or export into another folder"]
    assert sorted(read_export(out)["events"]["session"].unique()) == ["one", "two"]
    assert not (out / ".ledgerviz-staging").exists()
