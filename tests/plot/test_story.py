"""A parent and its fork child draw as one story under the fork policy."""

from __future__ import annotations

import json

import ledgerviz
from ledgerviz.examples import example_path
from ledgerviz.plot import timeline
from ledgerviz.plot.story import fork_pair, fork_story

FAMILY = example_path("resume-fork")


def lines(name: str) -> list[dict]:
    text = (FAMILY / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in text]


def test_the_inherited_prefix_is_drawn_once_and_the_suffix_keeps_its_lane() -> None:
    parent, child = lines("parent.jsonl"), lines("child.jsonl")
    # from the files: the child's last inherited marker is its cut
    cut = max(e["seq"] for e in child[1:] if e["type"] == "session/end-seed")
    ledger = ledgerviz.load(FAMILY)
    frames = ledger.recovery("fork").frames
    assert fork_pair(frames) == (parent[0]["id"], child[0]["id"], cut - 1)
    story = fork_story(frames, parent[0]["id"], child[0]["id"], cut - 1).joined()
    assert len(story.events) == (len(parent) - 1) + (len(child) - 1) - cut
    abandoned = story.events[story.events["branch"] == "abandoned"]
    assert set(abandoned["session"].astype(str)) == {parent[0]["id"]}
    assert abandoned["seq"].min() == cut  # the fork point: the parent's seq after the cut
    turns = story.turns.set_index("turn")
    assert list(turns.index) == [1, 2, 3]
    assert turns.loc[2, "end_reason"] == "forked" and turns.loc[3, "end_reason"] == "completed"
    figure = timeline(ledger, policy="fork")
    assert f"{parent[0]['id']} + fork {child[0]['id']}" in figure.layout.title.text
    assert any(t.name.startswith("fork point") for t in figure.data)


def test_one_session_is_drawn_as_before() -> None:
    ledger = ledgerviz.load(FAMILY / "parent.jsonl")
    assert fork_pair(ledger.recovery("fork").frames) is None
    assert "+ fork" not in timeline(ledger, policy="fork").layout.title.text
