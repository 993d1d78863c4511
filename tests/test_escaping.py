"""Every string a ledger holds, made hostile in turn, reaches no HTML as markup.

Real ledgers (the dsh fixtures, the bundled examples, the Claude Code transcripts) are
rewritten with each string leaf replaced by a payload that would open an element, add an
attribute, break out of a quoted attribute and out of a ``<script>``: ids, call ids, tool
names, arguments, error names and codes, provider, model, event types, texts, header
fields, and the file name.
Each rewritten ledger is drawn as the report, the timeline's labels, the explorer's panes
and every HTML repr; html.parser reads each output and no element or attribute name may
carry the payload's marker, nor may any attribute that a browser acts on hold it.

Bounded: each distinct leaf *kind* (event type + key path, list positions folded) is made
hostile once in the corpus. Leaves the engine pairs or classifies by (event types, ids,
call ids, error codes) each get a round of their own per event, so each breaks only its
own event (a hostile call id still leaves a call unanswered, shown in the report); every
other leaf of a file is replaced in one round.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from report_packs import unpacked

import ledgerviz
from ledgerviz.display.reprs import analysis_html, frames_html, session_html
from ledgerviz.examples import example_path
from ledgerviz.plot import timeline
from ledgerviz.recovery.analysis import POLICIES
from ledgerviz.report import render_report
from ledgerviz.widgets.context_pane import context_html
from ledgerviz.widgets.details import event_details_html
from ledgerviz.widgets.explorer import Explorer

DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = example_path("clean").parent
CORPUS = (sorted((DATA / "dsh").glob("*.jsonl")) + sorted(EXAMPLES.glob("*.jsonl"))
          + sorted((DATA / "claude_code").glob("*.jsonl")))  # Claude Code transcripts
MARK = "lvpwn"
STRUCTURAL = {"type", "id", "callId", "toolCallId", "code", "uuid", "parentUuid", "tool_use_id"}
# Attributes that only show or name text: escaped ledger text inside them is harmless (the
# report's anchors hold percent-encoded session ids; its filter reads data-text).
INERT_ATTRIBUTES = {"title", "alt", "value", "aria-label", "data-label", "id", "data-text"}

Path_ = tuple[Any, ...]


def payload(n: int | str) -> str:
    """Text that opens an element, adds an attribute and closes quotes and a script."""
    return f"<{MARK}{n} {MARK}{n}=1>\"'&</script><{MARK}{n}>x"


def file_payload() -> str:
    return f"<{MARK}file {MARK}file=1>\"'&"  # a file name holds no slash


def leaves(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))


def kind_of(obj: dict[str, Any], line: int, path: Path_) -> tuple[Any, ...]:
    """The leaf kind: its line's event type (or header) and its key path, positions folded."""
    owner = "<header>" if line == 0 else obj.get("type")
    return (owner, *("*" if isinstance(part, int) else part for part in path))


def put(obj: Any, path: Path_, value: str) -> None:
    for part in path[:-1]:
        obj = obj[part]
    obj[path[-1]] = value


@dataclass
class Round:
    source: Path
    lines: list[Any]
    """Parsed lines (a line that does not parse stays raw text)."""
    targets: dict[str, tuple[int, Path_]] = field(default_factory=dict)
    """Payload id -> (line, leaf path)."""

    def write(self, folder: Path, name: str | None = None) -> Path:
        out = copy.deepcopy(self.lines)
        for ident, (line, path) in self.targets.items():
            put(out[line], path, payload(ident))
        target = folder / (name or self.source.name)
        text = "\n".join(item if isinstance(item, str) else json.dumps(item) for item in out)
        ending = "\n" if self.source.read_bytes().endswith(b"\n") else ""  # keep a torn tail
        target.write_text(text + ending, encoding="utf-8")
        return target


def read_lines(path: Path) -> list[Any]:
    lines: list[Any] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            lines.append(raw)  # a torn tail: kept as it is
    return lines


def plan_rounds() -> list[Round]:
    """Every distinct leaf kind of the corpus, once, packed into rounds."""
    seen: set[tuple[Any, ...]] = set()
    rounds: list[Round] = []
    counter = 0
    for source in CORPUS:
        lines = read_lines(source)
        structural_slots: list[list[tuple[int, Path_]]] = []
        content: list[tuple[int, Path_]] = []
        for line, obj in enumerate(lines):
            if isinstance(obj, str):
                continue
            mine = 0
            for path in leaves(obj):
                kind = kind_of(obj, line, path)
                if kind in seen:
                    continue
                seen.add(kind)
                if path[-1] in STRUCTURAL or (line == 0 and path[-1] == "type"):
                    while len(structural_slots) <= mine:
                        structural_slots.append([])
                    structural_slots[mine].append((line, path))
                    mine += 1
                else:
                    content.append((line, path))
        batches = ([content] if content else []) + structural_slots
        for batch in batches:
            targets = {}
            for line, path in batch:
                targets[str(counter)] = (line, path)
                counter += 1
            rounds.append(Round(source, lines, targets))
    return rounds


ROUNDS = plan_rounds()


class Markup(HTMLParser):
    """Collects every element and attribute that carries the payload's marker."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.leaks: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if MARK in tag:
            self.leaks.append(f"element <{tag}>")
        for name, value in attrs:
            if MARK in name:
                self.leaks.append(f"attribute {name} on <{tag}>")
            elif (value and MARK in value and name not in INERT_ATTRIBUTES
                  and not (name == "href" and value.startswith("#session-"))):
                self.leaks.append(f"ledger text in {name}= of <{tag}>")

    handle_startendtag = handle_starttag


def leaks(html: str) -> list[str]:
    parser = Markup()
    parser.feed(html)
    parser.close()
    return parser.leaks


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def outputs(ledger: ledgerviz.Ledger) -> Iterator[tuple[str, str]]:
    """(where, html) of every HTML the ledger is drawn into."""
    yield "report", unpacked(render_report(ledger))  # bodies in their sections, as shown
    for policy in ("synthesize", "fork"):
        for key in ledger.keys:
            figure = timeline(ledger, policy=policy, session=key)
            labels = "".join(f"<p>{text}</p>" for text in strings(figure.to_plotly_json()))
            yield f"timeline labels ({policy})", labels
    yield "Ledger._repr_html_", ledger._repr_html_()
    for log in ledger.sessions:
        yield "session_html", session_html(log)
    for policy in POLICIES:
        view = ledger.recovery(policy)
        yield f"RecoveryView({policy})._repr_html_", view._repr_html_()
        yield f"frames_html({policy})", frames_html(view.frames)
        for key, analysis in view.analyses.items():
            yield f"analysis_html({policy})", analysis_html(analysis)
            for index in range(len(analysis.events)):
                yield f"details pane ({policy}, event {index})", event_details_html(analysis, index)
            context = ledger.context(policy, session=key)
            yield f"Context({policy})._repr_html_", context._repr_html_()
            yield f"context pane ({policy})", context_html(context)


def check(ledger: ledgerviz.Ledger) -> list[str]:
    return [f"{where}: {leak}" for where, html in outputs(ledger) for leak in leaks(html)]


def test_the_plan_covers_every_leaf_kind_of_the_corpus() -> None:
    kinds = {
        kind_of(obj, line, path)
        for source in CORPUS
        for line, obj in enumerate(read_lines(source))
        if not isinstance(obj, str)
        for path in leaves(obj)
    }
    planned = {
        kind_of(r.lines[line], line, path) for r in ROUNDS for line, path in r.targets.values()
    }
    assert planned == kinds
    assert len(CORPUS) >= 20
    for wanted in [
        ("tool/call", "data", "callId"),
        ("tool/call", "data", "name"),
        ("tool/call", "data", "arguments"),
        ("assistant/message", "data", "message", "content", "*", "id"),
        ("assistant/message", "data", "message", "source", "provider"),
        ("assistant/message", "data", "message", "source", "model"),
        ("tool/result", "data", "error", "name"),
        ("tool/result", "data", "error", "code"),
        ("user/message", "data", "content", "*", "text"),
        ("<header>", "id"),
        ("turn/start", "type"),
    ]:
        assert wanted in kinds, wanted


def test_the_checker_sees_markup() -> None:
    assert leaks(f"<p>{payload(1)}</p>") == [
        "element <lvpwn1>",
        "attribute lvpwn1 on <lvpwn1>",
        "element <lvpwn1>",
    ]
    assert leaks(f"<script>var a = '{payload(2)}';</script>") == ["element <lvpwn2>"]
    assert leaks(f'<a href="{MARK}">x</a>') == ["ledger text in href= of <a>"]
    assert leaks('<span title="&lt;lvpwn3&gt;">x</span><p>&lt;lvpwn3&gt;</p>') == []


@pytest.mark.parametrize(
    "plan", ROUNDS, ids=[f"{r.source.name[-40:]}-{min(r.targets)}" for r in ROUNDS]
)
def test_hostile_leaves_stay_text(plan: Round, tmp_path: Path) -> None:
    ledger = ledgerviz.load(plan.write(tmp_path))
    found = check(ledger)
    assert found == [], {k: plan.targets[k] for k in plan.targets}


def test_hostile_file_name_stays_text(tmp_path: Path) -> None:
    source = example_path("crash-mid-dispatch")
    path = Round(source, read_lines(source)).write(tmp_path, file_payload() + ".jsonl")
    ledger = ledgerviz.load(path)
    assert file_payload() in str(ledger.sessions[0].path)
    assert check(ledger) == []


def test_explorer_panes_of_a_hostile_ledger(tmp_path: Path) -> None:
    source = example_path("crash-mid-dispatch")
    plan = Round(source, read_lines(source))
    shape = STRUCTURAL | {"role", "kind", "surfaceOp", "op"}  # kept, so the panes fill up
    for line, obj in enumerate(plan.lines):
        for path in leaves(obj):
            if path[-1] not in shape:
                plan.targets[f"e{line}x{len(plan.targets)}"] = (line, path)
    explorer = Explorer(ledgerviz.load(plan.write(tmp_path)))
    shown = []
    for policy in POLICIES:
        explorer.policy.value = policy
        for _, index in explorer.event.options:
            explorer.event.value = index
            shown += [explorer.details.value, explorer.context.value]
    assert sum(MARK in html for html in shown) > len(shown) // 2
    assert [leak for html in shown for leak in leaks(html)] == []


def test_event_type_at_a_fork_point_stays_text(tmp_path: Path) -> None:
    # A corrupt ledger repeats each assistant message's seq on a hostile event before it,
    # so the report's "event at the fork point" is read from a ledger-chosen type.
    source = example_path("crash-mid-dispatch")
    lines = read_lines(source)
    hostile = []
    for obj in lines:
        if isinstance(obj, dict) and obj.get("type") == "assistant/message":
            hostile.append(
                {
                    "type": payload("type"),
                    "seq": obj["seq"],
                    "time": obj["time"],
                    "data": {},
                    "ignorable": True,
                }
            )
        hostile.append(obj)
    ledger = ledgerviz.load(Round(source, hostile).write(tmp_path))
    assert {d.kind for d in ledger.diagnostics} >= {"unknown_ignorable_event"}
    assert ledger.recovery("fork").analyses[ledger.keys[0]].fork_points
    assert check(ledger) == []
