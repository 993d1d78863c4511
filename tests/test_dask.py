"""ledgerviz.export.dask on a LocalCluster with two worker processes: frames and the export."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import dask.dataframe as dd
import pandas as pd
import pytest
from distributed import Client, LocalCluster

import ledgerviz
import ledgerviz.export.dask as lvd
from ledgerviz.export import read_export
from ledgerviz.frames import FRAME_NAMES

ROOT = Path(__file__).parents[1]
EXAMPLES = ROOT / "ledgerviz" / "examples"
DSH = ROOT / "tests" / "data" / "dsh"
TIMEOUT = 120  # seconds any one computation may take on the cluster


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    """Two worker processes with one thread each, for the whole module."""
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",  # the scheduler's HTTP server: localhost, free port
            worker_dashboard_address="127.0.0.1:0",
            timeout=TIMEOUT,
        ) as cluster,
        Client(cluster, timeout=TIMEOUT) as client,
    ):
        yield client


def test_public_names_are_pinned() -> None:
    assert lvd.__all__ == ["DaskFrames", "export", "frames", "in_process", "ledger_paths",
                           "partition_groups", "session_keys"]
    assert all(callable(getattr(lvd, name)) for name in lvd.__all__)


def test_partition_groups_hold_small_files_together() -> None:
    assert lvd.partition_groups([5, 5, 5], 10) == [range(0, 2), range(2, 3)]
    assert lvd.partition_groups([30, 1, 1], 10) == [range(0, 1), range(1, 3)]
    assert lvd.partition_groups([]) == []


def test_frames_are_attributes_and_small_files_share_a_partition(client: Client) -> None:
    frames = lvd.frames([EXAMPLES])
    assert frames.calls is frames["calls"] and list(frames) == list(FRAME_NAMES)
    assert frames.calls.npartitions == 1  # 14 example files, far under PARTITION_BYTES
    with pytest.raises(AttributeError, match="no frame 'call'"):
        frames.call  # noqa: B018


def test_missing_dask_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)
    with pytest.raises(ImportError, match=re.escape(lvd.DASK_HINT)):
        lvd.frames([EXAMPLES])


def test_the_workers_are_other_processes(client: Client) -> None:
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids


def test_dask_frames_equal_the_in_process_frames(client: Client) -> None:
    sources = [EXAMPLES, *sorted(DSH.glob("*.jsonl"))[:3]]  # three say id {{sessionId}}
    ledger = ledgerviz.load(sources)
    frames = lvd.frames(sources, "synthesize", files_per_partition=4)
    assert list(frames) == list(FRAME_NAMES)
    computed = [future.result(timeout=TIMEOUT) for future in client.compute(list(frames.values()))]
    expected = ledger.recovery("synthesize").frames
    for (name, frame), result in zip(frames.items(), computed, strict=True):
        assert frame.npartitions == 5  # 17 files, four per task
        assert frame["session"].cat.known
        assert list(frame["session"].cat.categories) == ledger.keys
        if name == "calls":  # a fixed vocabulary is known; data-dependent categories are not
            assert frame["status"].cat.known and not frame["tool"].cat.known
        pd.testing.assert_frame_equal(
            lvd.in_process(result, name, ledger.keys), getattr(expected, name), check_exact=True
        )


def test_a_computed_frame_answers_without_the_in_process_step(client: Client) -> None:
    calls = lvd.frames([EXAMPLES], "recorded", files_per_partition=5)["calls"]
    unknown = calls[calls["status"] == "outcome_unknown"]
    counted = client.compute(unknown.groupby("tool", observed=True).size()).result(TIMEOUT)
    local = ledgerviz.load(EXAMPLES).frames.calls
    expected = local[local["status"] == "outcome_unknown"].groupby("tool", observed=True).size()
    assert counted.sort_index().to_dict() == expected.sort_index().to_dict()


def test_fsspec_urls_are_read_on_the_workers(client: Client, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(EXAMPLES, folder)
    url = f"file://{folder}/*.jsonl"
    paths = lvd.ledger_paths(url)
    assert paths == [f"file://{p}" for p in sorted(map(str, folder.glob("*.jsonl")))]
    turns = client.compute(lvd.frames(url)["turns"]).result(timeout=TIMEOUT)
    expected = ledgerviz.load(sorted(folder.glob("*.jsonl"))).frames.turns
    keys = list(expected["session"].cat.categories)
    pd.testing.assert_frame_equal(lvd.in_process(turns, "turns", keys), expected)


def test_export_on_the_cluster_is_the_cli_export(client: Client, tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    shutil.copytree(EXAMPLES, inputs)
    out = tmp_path / "out"
    first = lvd.export([inputs], out, "fork", files_per_task=5)
    assert (len(first.written), first.unchanged) == (14, [])
    assert len(list((out / "events").iterdir())) == 3  # a part per task of 5, 5 and 4 files
    expected = ledgerviz.load(inputs).recovery("fork").frames
    read = dd.read_parquet(str(out / "calls" / "*.parquet")).compute()  # Dask reads in place
    plain = {c: t for c, t in expected.calls.dtypes.items() if t != "category"}
    read = read.astype(plain)  # a column with no null (turn) reads as int64, not Int64
    keys = list(expected.calls["session"].cat.categories)
    order = read["session"].map({key: i for i, key in enumerate(keys)}).argsort(kind="stable")
    pd.testing.assert_frame_equal(lvd.in_process(read.iloc[order], "calls", keys), expected.calls)
    exported = read_export(out)
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(exported[name], getattr(expected, name), check_exact=True)
    (inputs / "clean.jsonl").unlink()
    second = lvd.export([inputs], out, "fork", files_per_task=5)
    assert (second.written, len(second.unchanged)) == ([], 13)
    assert second.removed == [str(inputs / "clean.jsonl")]
    assert len(list((out / "events").iterdir())) == 3  # clean's part rewritten without it
    expected = ledgerviz.load(inputs).recovery("fork").frames
    exported = read_export(out)
    for name in FRAME_NAMES:
        pd.testing.assert_frame_equal(exported[name], getattr(expected, name), check_exact=True)
    assert len(list((lvd.export([inputs], tmp_path / "one", "fork").root / "calls").iterdir())
               ) == 1  # by default a task per export batch: 13 small files, one part
