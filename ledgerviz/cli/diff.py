"""``ledgerviz diff``: align two sessions and say where they part, like ``diff(1)``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

import orjson

from ledgerviz.cli.output import write_stdout
from ledgerviz.cli.text import say_error, shown_id, terminal_safe
from ledgerviz.compare.tables import differing_rows, status_changes
from ledgerviz.recovery.analysis import DEFAULT_POLICY, POLICIES
from ledgerviz.wording import counted

if TYPE_CHECKING:
    from ledgerviz.compare import SessionDiff

SAME_EXIT, DIFFERENT_EXIT, TROUBLE_EXIT = 0, 1, 2
"""``diff(1)``'s exit codes: the same, different, could not compare."""

LISTED = 20
"""Differing rows the text lists by default; ``--json`` lists every one."""


def register(subparsers: Any) -> None:
    """Add the ``diff`` sub-command to ``subparsers``."""
    parser = subparsers.add_parser(
        "diff",
        help="align two sessions by what happened; where do they part, what differs after",
        description="Align the events of two sessions (one per ledger file) by what they did "
        "(event types, tools, arguments, texts, statuses), never by seqs, times or ids, and "
        "print the first divergence, the counts, and the first differing rows. Exit 0: the "
        "same; 1: they differ; 2: a PATH cannot be read, is not a ledger or does not hold one "
        "session.",
    )
    parser.add_argument("a", metavar="A", help="the first ledger (one session)")
    parser.add_argument("b", metavar="B", help="the second ledger (one session)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON document listing every differing seq")
    parser.add_argument("--policy", choices=POLICIES, default=DEFAULT_POLICY,
                        help=f"the policy call statuses are compared under (default: "
                        f"{DEFAULT_POLICY})")
    parser.add_argument("--rows", type=int, default=LISTED, metavar="N",
                        help=f"differing rows the text lists (default: {LISTED})")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Diff ``args.a`` with ``args.b``, print the result; return 0, 1 or 2."""
    from ledgerviz.api import load
    from ledgerviz.compare import diff
    from ledgerviz.ledger import LedgerError

    try:
        ledgers = [load(path) for path in (args.a, args.b)]
        result = diff(*ledgers, policy=args.policy)
    except (LedgerError, ValueError) as error:
        say_error("diff", error)
        return TROUBLE_EXIT
    for path, ledger in zip((args.a, args.b), ledgers, strict=True):
        refused = next((d for d in ledger.diagnostics if d.kind == "not_a_ledger"), None)
        if refused is not None:  # else two such files would read as "the same"
            say_error("diff", f"{path}: {refused.message}")
            return TROUBLE_EXIT
    for path, ledger in zip((args.a, args.b), ledgers, strict=True):
        errors = sum(d.severity == "error" for d in ledger.diagnostics)
        if errors:
            say_error("diff", f"warning: {path} has {counted(errors, 'error-level problem')}; "
                      f"`ledgerviz check {path}` lists them")
    if args.json:
        write_stdout(orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(render(result, max(args.rows, 0)))
    return SAME_EXIT if result.same else DIFFERENT_EXIT


def render(result: SessionDiff, listed: int) -> str:
    """Return the text summary (terminal-safe): sessions, first divergence, counts, the
    first ``listed`` differing rows, then the calls whose status changed."""
    lines = [f"{name}: {shown_id(side.key)} ({side.path}), {counted(len(side.seqs), 'event')}"
             for name, side in (("a", result.a), ("b", result.b))]
    if result.same:
        lines.append(result.divergence_text())
        return "\n".join(terminal_safe(line) for line in lines)
    lines.append(f"first divergence: {result.divergence_text()}")
    lines.append(result.counts_text())
    lines += differing_rows(result, listed).text().splitlines()
    changes = status_changes(result, len(result.status_changes))
    lines.append(f"call status changes under {result.policy}: {len(changes.rows)}")
    if changes.rows:
        lines += ["  " + line for line in changes.text().splitlines()]
    return "\n".join(terminal_safe(line) for line in lines)

