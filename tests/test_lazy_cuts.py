"""A cut of a loaded session and the child forked from it read the session's events when
asked (``ledger.head_events``): making them decodes no line the file holds but those they
read, and they hold the events a list would."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import ledgerviz
from ledgerviz.ledger.lazy_events import WINDOW, LazyEvents
from ledgerviz.recovery import fork_seed
from ledgerviz.simulate import write_scenario


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Return the list of rows around which ``LazyEvents`` decodes a window, as it does."""
    rows: list[int] = []
    original = LazyEvents._decode_window

    def decode_window(self: LazyEvents, row: int) -> None:
        rows.append(row)
        original(self, row)

    monkeypatch.setattr(LazyEvents, "_decode_window", decode_window)
    return rows


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A crashed session of several windows of events (dies mid-dispatch)."""
    (path,) = write_scenario("crash-mid-dispatch", tmp_path_factory.mktemp("lazy") / "c.jsonl",
                             turns=400)
    return path


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()[1:]  # the header first


@pytest.mark.parametrize("reuse", [False, True])
def test_a_cut_decodes_nothing_until_read(crashed: Path, decoded: list[int], reuse: bool) -> None:
    ledger = ledgerviz.load(crashed)
    events = ledger.sessions[0].events
    assert isinstance(events, LazyEvents) and len(events) > 4 * WINDOW
    n = len(events) - WINDOW - 7
    whole, cut = (ledger.cut(len(events), reuse=reuse), ledger.cut(n, reuse=reuse))
    assert decoded == []
    assert cut.sessions[0].events[n - 1] is events[n - 1]  # one window: the same dict
    assert decoded == [n - 1]
    assert whole.sessions[0].events is events
    assert len(cut.sessions[0].events) == n
    assert list(cut.sessions[0].events) == [orjson.loads(line) for line in _lines(crashed)[:n]]


@pytest.mark.parametrize("reuse", [False, True])
def test_the_fork_child_is_fork_seeds_and_reads_the_last_turn_only(
        crashed: Path, decoded: list[int], reuse: bool) -> None:
    ledger = ledgerviz.load(crashed)
    log = ledger.sessions[0]
    cut = ledger.cut(len(log.events), reuse=True) if reuse else ledger
    boundary = cut.recovery("fork").analyses[log.key].fork_points[0] - 1
    types = [orjson.loads(line)["type"] for line in _lines(crashed)]
    last_turn = max(i for i, kind in enumerate(types[:boundary + 1])
                    if kind in ("turn/start", "turn/end"))
    assert last_turn > 3 * WINDOW
    decoded.clear()
    (child,) = cut.fork(at=boundary, created_at=1).sessions
    story = cut.with_fork()  # the explorer's fork story: the cut, then that child
    assert story is not None and len(decoded) <= 4
    # from the last turn on (if not yet), and the first event: the runtime stops at a first
    # event without seq, which the loader numbers silently (api._unnumbered)
    assert all(row >= last_turn or row == 0 for row in decoded)
    header, expected = fork_seed(log.header, list(log.events), boundary,
                                 session_id=child.key, created_at=1)
    assert child.header == header and child.events == expected
    assert story.sessions[1].events == expected
    marker = next(i for i, e in enumerate(expected) if e["type"] == "session/end-seed")
    assert marker == boundary + 1  # the simulator's seqs are positions
    assert all(child.events[i] is log.events[i] for i in range(marker))  # not copies
