"""A simulated ledger whose tool calls all went unanswered: the simulator's ledger with its
tool results left out and the seqs numbered again, as if no result had ever been written."""

from __future__ import annotations

import json
from pathlib import Path

from ledgerviz.simulate import write_scenario


def write_unanswered(path: Path, *, turns: int, seed: int) -> list[str]:
    """Write such a ledger of ``turns`` turns to ``path``; return the call ids its assistant
    messages request, in order."""
    (written,) = write_scenario("large", path, seed=seed, turns=turns)
    header, *events = (json.loads(line) for line in written.read_text().splitlines())
    kept = [event for event in events if event["type"] != "tool/result"]
    for seq, event in enumerate(kept):
        event["seq"] = seq
    written.write_text("".join(json.dumps(value) + "\n" for value in (header, *kept)))
    return [block["id"] for event in kept if event["type"] == "assistant/message"
            for block in event["data"]["message"]["content"] if block["type"] == "tool-call"]
