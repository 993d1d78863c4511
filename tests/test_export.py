"""Parquet export: round trip equals the in-process frames, incremental runs, safe output."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest

import ledgerviz
from ledgerviz.cli import main
from ledgerviz.export import MANIFEST_NAME, ExportError, export, read_export
from ledgerviz.export.dataset import _catalogs
from ledgerviz.export.manifest import write_manifest
from ledgerviz.export.parquet import PARQUET_HINT, dataset_schema, require_pyarrow
from ledgerviz.frames import FRAME_NAMES

ROOT = Path(__file__).parents[1]
EXAMPLES = ROOT / "ledgerviz" / "examples"
DSH = ROOT / "tests" / "data" / "dsh"
CONFORMANCE = ROOT / "tests" / "data" / "conformance" / "inputs"
CRASH = EXAMPLES / "crash-mid-dispatch.jsonl"
CLEAN = EXAMPLES / "clean.jsonl"
CANCEL = EXAMPLES / "cancel.jsonl"


def assert_frames_equal(exported: dict[str, pd.DataFrame], ledger: ledgerviz.Ledger,
                        policy: str) -> None:
    """Every exported frame equals the in-process one: values, dtypes, categories, order."""
    frames = ledger.recovery(policy).frames
    assert list(exported) == list(FRAME_NAMES)
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(exported[name], getattr(frames, name), check_exact=True)


@pytest.mark.parametrize(
    ("sources", "policy"),
    [
        ([EXAMPLES, DSH, CONFORMANCE], "recorded"),
        ([EXAMPLES], "synthesize"),
        ([EXAMPLES], "fork"),
    ],
)
def test_round_trip_equals_the_frames(tmp_path: Path, sources: list[Path], policy: str) -> None:
    summary = export(sources, tmp_path / "out", policy)
    ledger = ledgerviz.load(sources)
    assert summary.sessions == ledger.keys  # clashing ids ({{sessionId}}) fall back as a load does
    assert_frames_equal(read_export(tmp_path / "out"), ledger, policy)


def test_dtypes_are_the_frames_dtypes_in_the_files(tmp_path: Path) -> None:
    export([CRASH], tmp_path / "out")
    calls = pd.read_parquet(tmp_path / "out" / "calls")  # pandas' own reader, hive folders
    assert str(calls["dispatch_time"].dtype) == "datetime64[ms, UTC]"
    assert str(calls["duration"].dtype) == "timedelta64[ms]"
    assert isinstance(calls["status"].dtype, pd.CategoricalDtype)
    assert list(calls["session"].unique()) == ["sim-crash-mid-dispatch-7"]
    # nullable integers: a call never answered has no result seq, stored as null
    unknown = calls[calls["status"] == "outcome_unknown"]
    assert len(unknown) == 1 and pd.isna(unknown["result_seq"].iloc[0])


def test_a_session_without_rows_keeps_every_column_typed(tmp_path: Path) -> None:
    header_only = tmp_path / "in" / "header-only.jsonl"
    header_only.parent.mkdir()
    header_only.write_bytes(CLEAN.read_bytes().split(b"\n")[0] + b"\n")
    export([header_only], tmp_path / "out")
    for name in FRAME_NAMES:
        (part,) = (tmp_path / "out" / name).glob("*.parquet")
        schema = pq.read_schema(part)
        assert schema.remove_metadata().equals(dataset_schema(name).remove_metadata())
    assert_frames_equal(read_export(tmp_path / "out"), ledgerviz.load(header_only), "recorded")
    assert len(read_export(tmp_path / "out")["events"]) == 0


def _short(arrow_type: object) -> str:
    """Return the short type name docs/export.md uses."""
    text = str(arrow_type)
    return {
        "large_string": "string",
        "timestamp[ms, tz=UTC]": "timestamp[ms, UTC]",
    }.get(text, "dictionary" if text.startswith("dictionary<values=string") else text)


def test_docs_state_the_schema_of_every_frame() -> None:
    documented = {}
    for line in (ROOT / "docs" / "export.md").read_text().splitlines():
        match = re.fullmatch(r"\| `(\w+)` \| (.+) \|", line)
        if match and match.group(1) in FRAME_NAMES:
            documented[match.group(1)] = match.group(2)
    for name in FRAME_NAMES:
        schema = dataset_schema(name)
        assert documented[name] == ", ".join(f"`{f.name}` {_short(f.type)}" for f in schema)


def _copy(files: list[Path], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy2(file, folder / file.name)) for file in files]


def _parts(out: Path) -> dict[str, int]:
    return {str(p.relative_to(out)): p.stat().st_mtime_ns for p in out.rglob("*.parquet")}


def _manifest(out: Path) -> dict[str, dict[str, object]]:
    """Return the manifest's file rows by session key."""
    return {row["key"]: row for row in json.loads((out / MANIFEST_NAME).read_text())["files"]}


def test_second_run_skips_unchanged_files(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    _copy([CRASH, CLEAN, CANCEL], inputs)
    out = tmp_path / "out"
    first = export([inputs], out)
    assert (len(first.written), first.unchanged) == (3, [])
    before = _parts(out)
    assert len(before) == len(FRAME_NAMES)  # the three sessions share one part
    second = export([inputs], out)
    assert (second.written, len(second.unchanged), second.removed) == ([], 3, [])
    assert _parts(out) == before  # not one part file rewritten
    (part,) = (out / "turns").iterdir()
    part.unlink()  # a user deleted it: every session of the part is written again
    third = export([inputs], out)
    assert (len(third.written), third.unchanged) == (3, [])
    assert_frames_equal(read_export(out), ledgerviz.load(inputs), "recorded")


def test_one_part_holds_the_sessions_with_one_row_group_and_the_manifest_finds_them(
    tmp_path: Path,
) -> None:
    inputs = tmp_path / "in"
    _copy([CANCEL, CLEAN, CRASH], inputs)
    out = tmp_path / "out"
    export([inputs], out)
    ledger = ledgerviz.load(inputs)
    files = _manifest(out)
    (part,) = {row["part"] for row in files.values()}
    for name in FRAME_NAMES:
        frame = getattr(ledger.frames, name)
        counts = frame["session"].value_counts(sort=False)
        starts = counts.cumsum() - counts
        assert [files[key]["rows"][name] for key in ledger.keys] == [  # type: ignore[index]
            [starts[key], counts[key]] for key in ledger.keys]
        metadata = pq.ParquetFile(out / name / f"{part}.parquet").metadata
        assert (metadata.num_row_groups, metadata.num_rows) == (int(len(frame) > 0), len(frame))


def test_a_new_file_goes_to_a_new_part_and_the_old_part_is_not_rewritten(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    _copy([CRASH, CLEAN], inputs)
    out = tmp_path / "out"
    export([inputs], out)
    before, first = _parts(out), _manifest(out)
    _copy([CANCEL], inputs)
    summary = export([inputs], out)
    assert summary.written == [str(inputs / "cancel.jsonl")]
    after = _parts(out)
    assert {k: v for k, v in after.items() if k in before} == before and len(after) == 12
    files = _manifest(out)
    assert files["sim-clean-7"] == first["sim-clean-7"]
    assert files["sim-cancel-7"]["part"] != first["sim-clean-7"]["part"]
    assert_frames_equal(read_export(out), ledgerviz.load(inputs), "recorded")


def test_more_than_four_small_parts_are_merged(tmp_path: Path) -> None:
    examples = sorted(EXAMPLES.glob("*.jsonl"))[:6]
    inputs = tmp_path / "in"
    out = tmp_path / "out"
    parts = []
    for example in examples:  # one new file a run: one new part a run ...
        _copy([example], inputs)
        export([inputs], out)
        parts.append(len(list((out / "events").iterdir())))
    assert parts == [1, 2, 3, 4, 5, 1]  # ... until a sixth run finds five small parts
    assert_frames_equal(read_export(out), ledgerviz.load(inputs), "recorded")


def test_touched_file_with_same_content_is_skipped_by_its_hash(tmp_path: Path) -> None:
    _, clean = _copy([CRASH, CLEAN], tmp_path / "in")
    out = tmp_path / "out"
    export([tmp_path / "in"], out)
    before = _parts(out)
    stat = clean.stat()
    os.utime(clean, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    summary = export([tmp_path / "in"], out)
    assert (summary.written, len(summary.unchanged)) == ([], 2)
    assert _parts(out) == before
    manifest = (out / MANIFEST_NAME).read_text()
    assert str(stat.st_mtime_ns + 5_000_000_000) in manifest  # next run skips it unread


def test_changed_file_replaces_and_removed_file_removes_its_partitions(tmp_path: Path) -> None:
    crash, clean, cancel = _copy([CRASH, CLEAN, CANCEL], tmp_path / "in")
    out = tmp_path / "out"
    export([tmp_path / "in"], out)
    lines = crash.read_bytes().splitlines(keepends=True)
    crash.write_bytes(b"".join(lines[:-6]))  # as if the writer had died six lines earlier
    cancel.unlink()
    summary = export([tmp_path / "in"], out)
    assert summary.written == [str(crash)]
    assert summary.unchanged == [str(clean)]
    assert summary.removed == [str(cancel)]
    assert len(_parts(out)) == len(FRAME_NAMES)  # clean's rows copied into the new part
    found = duckdb.sql(f"SELECT DISTINCT session FROM '{out}/events/*.parquet'").fetchall()
    assert sorted(found) == [("sim-clean-7",), ("sim-crash-mid-dispatch-7",)]
    assert_frames_equal(read_export(out), ledgerviz.load(tmp_path / "in"), "recorded")
    assert len(read_export(out)["events"]) == len(ledgerviz.load(tmp_path / "in").frames.events)


def test_an_added_clashing_file_takes_the_key_and_the_other_is_rewritten(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    (late,) = _copy([CLEAN], inputs)
    late = late.rename(inputs / "b.jsonl")
    out = tmp_path / "out"
    assert export([inputs], out).sessions == ["sim-clean-7"]
    shutil.copy2(CLEAN, inputs / "a.jsonl")  # same header id, sorts first
    summary = export([inputs], out)
    assert summary.sessions == ["sim-clean-7", "b.jsonl"] == ledgerviz.load(inputs).keys
    assert sorted(summary.written) == sorted([str(inputs / "a.jsonl"), str(late)])
    assert_frames_equal(read_export(out), ledgerviz.load(inputs), "recorded")


def test_a_new_policy_rewrites_everything(tmp_path: Path) -> None:
    out = tmp_path / "out"
    export([CRASH, CLEAN], out, "recorded")
    summary = export([CRASH, CLEAN], out, "synthesize")
    assert len(summary.written) == 2
    assert_frames_equal(read_export(out), ledgerviz.load([CRASH, CLEAN]), "synthesize")


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("in", "is inside the input folder"),
        ("in/sub", "is inside the input folder"),
        (".", "holds the input"),
        ("in/clean.jsonl", "is not a folder"),
        ("busy", "not a ledgerviz export folder"),
    ],
)
def test_unsafe_output_folders_are_refused(tmp_path: Path, output: str, message: str) -> None:
    _copy([CLEAN], tmp_path / "in")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match=message):
        export([tmp_path / "in"], tmp_path / output)
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"


def test_cli_exports_then_skips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["export", str(CRASH), str(CLEAN), "-o", str(out), "--policy", "fork"]) == 0
    assert "2 sessions" in capsys.readouterr().out
    assert main(["export", str(CRASH), str(CLEAN), "-o", str(out), "--policy", "fork"]) == 0
    assert "0 written, 2 unchanged, 0 removed" in capsys.readouterr().out
    assert_frames_equal(read_export(out), ledgerviz.load([CRASH, CLEAN]), "fork")


def test_cli_refuses_an_input_folder_and_a_missing_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy([CLEAN], tmp_path / "in")
    assert main(["export", str(tmp_path / "in"), "-o", str(tmp_path / "in")]) == 2
    assert "inside the input folder" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "out")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_missing_pyarrow_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    require_pyarrow.cache_clear()
    try:
        with pytest.raises(ImportError, match=re.escape(PARQUET_HINT)):
            require_pyarrow()
        assert main(["export", str(CLEAN), "-o", str(tmp_path / "out")]) == 2
        assert PARQUET_HINT in capsys.readouterr().err
    finally:
        require_pyarrow.cache_clear()


def test_duckdb_answers_a_fleet_question_from_the_dataset(tmp_path: Path) -> None:
    out = tmp_path / "out"
    export([EXAMPLES], out)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    found = con.execute(
        f"""
        SELECT CAST(dispatch_time AS DATE) AS day, tool, count(*) AS calls
        FROM read_parquet('{out}/calls/*.parquet')
        WHERE status = 'outcome_unknown'
        GROUP BY ALL ORDER BY day, tool
        """
    ).fetchall()
    calls = ledgerviz.load(EXAMPLES).frames.calls
    unknown = calls[calls["status"] == "outcome_unknown"]
    days = unknown["dispatch_time"].dt.date
    expected = unknown.groupby([days, unknown["tool"].astype(str)], dropna=False).size()
    assert found == [(day, tool, n) for (day, tool), n in expected.items()]
    assert {tool for _, tool, _ in found} >= {"grep"}
    sessions = con.execute(
        f"SELECT DISTINCT session FROM '{out}/events/*.parquet' ORDER BY 1"
    ).fetchall()
    assert [s for (s,) in sessions] == sorted(ledgerviz.load(EXAMPLES).keys)


def test_two_manifest_writers_into_one_folder_do_not_share_a_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second writer that writes its manifest while the first is about to rename its own
    (two exports into one folder) neither takes nor removes the first one's temporary
    file: both renames succeed, the last one's document is the manifest, nothing is left."""
    rename = os.replace
    second = {"schema": "second"}

    def interleaved(source: str | Path, target: str | Path) -> None:
        monkeypatch.setattr(os, "replace", rename)  # the second writer renames normally
        write_manifest(tmp_path, second)
        assert json.loads((tmp_path / MANIFEST_NAME).read_text()) == second
        rename(source, target)

    monkeypatch.setattr(os, "replace", interleaved)
    write_manifest(tmp_path, {"schema": "first"})
    assert json.loads((tmp_path / MANIFEST_NAME).read_text()) == {"schema": "first"}
    assert [path.name for path in tmp_path.iterdir()] == [MANIFEST_NAME]


def test_a_manifest_write_that_fails_leaves_the_old_one_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / MANIFEST_NAME).write_text('{"schema": "old"}')
    os.chmod(tmp_path / MANIFEST_NAME, 0o640)

    def full_disk(source: str | Path, target: str | Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_manifest(tmp_path, {"schema": "new"})
    monkeypatch.undo()
    assert (tmp_path / MANIFEST_NAME).read_text() == '{"schema": "old"}'
    assert [path.name for path in tmp_path.iterdir()] == [MANIFEST_NAME]
    write_manifest(tmp_path, {"schema": "new"})  # the old file's permission bits are kept
    assert (tmp_path / MANIFEST_NAME).stat().st_mode & 0o777 == 0o640


def test_a_session_with_a_subagent_catalog_is_found_from_its_table() -> None:
    """``_catalogs`` (whether the lineage frame is built file by file) says what the events'
    own types say, for every session of the dsh fixtures and the examples."""
    ledger = ledgerviz.load([DSH, EXAMPLES])
    found = {log.key: _catalogs(log) for log in ledger.sessions}
    expected = {log.key: "subagent/catalog" in [event["type"] for event in log.events]
                for log in ledger.sessions}
    assert found == expected
    assert 0 < sum(found.values()) < len(found)
