"""The explorer's context pane: the projected next model request, its tool-call pairing and
whether each provider would accept it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ledgerviz.display.reprs import validity_html
from ledgerviz.html import escape, seq_text
from ledgerviz.plot.style import STATUS_COLOR
from ledgerviz.recovery.context import ContextMessage
from ledgerviz.recovery.payload import message_is_error
from ledgerviz.recovery.providers import PROVIDERS, export
from ledgerviz.wording import counted

if TYPE_CHECKING:
    from ledgerviz.api import Context

TEXT_LIMIT = 160
ARGUMENT_LIMIT = 120
ID_LIMIT = 60
MESSAGES_SHOWN = 80
CELL = "padding:2px 6px;vertical-align:top;border-top:1px solid #e4e7eb"


def problems_html(context: Context) -> str:
    """Return an escaped list of every pairing problem, each naming its provider and seqs."""
    items = [
        f"<li><b>{escape(problem.provider)}</b> · {escape(problem.kind)} · seqs "
        f"{', '.join(seq_text(seq) for seq in problem.seqs)}: {escape(problem.detail, 300)}</li>"
        for provider in PROVIDERS
        for problem in context.problems[provider]
    ]
    return f"<ul style='margin:2px 0 6px 18px;padding:0'>{''.join(items)}</ul>" if items else ""


def _first_seqs(pairs: list[tuple[str | None, int | None]]) -> dict[str | None, int | None]:
    seqs: dict[str | None, int | None] = {}
    for call_id, seq in pairs:
        seqs.setdefault(call_id, seq)
    return seqs


def _call_lines(entry: dict[str, Any], results: dict[str | None, int | None]) -> list[str]:
    lines = []
    for call in entry.get("tool_calls") or ():
        function = call["function"]
        call_id = call["id"]
        answer = (f"→ result at seq {seq_text(results[call_id])}" if call_id in results
                  else f"<b style='color:{STATUS_COLOR['error']}'>→ no result</b>")
        lines.append(
            f"call <code>{escape(function['name'], ID_LIMIT)}"
            f"({escape(function['arguments'], ARGUMENT_LIMIT)})</code> "
            f"id {escape(call_id, ID_LIMIT)} {answer}"
        )
    return lines


def messages_html(messages: Sequence[ContextMessage], limit: int = MESSAGES_SHOWN) -> str:
    """Return an escaped table of the last ``limit`` projected messages: seq, role, short text,
    and each tool call paired with its result (and each result with its call).

    Only the shown messages are exported and paired, so the pane costs the same for any
    request length; a result whose call lies before them says so (the problems list above
    names every unpaired call or result of the whole request).
    """
    if not messages:
        return "<i>empty: the next request would carry no messages</i>"
    hidden = max(0, len(messages) - limit)
    messages = messages[hidden:]
    entries = export(messages, "openai").payload["messages"]
    calls = _first_seqs([(call["id"], item.seq) for item, entry in zip(messages, entries,
                                                                        strict=True)
                         for call in entry.get("tool_calls") or ()])
    results = _first_seqs([(entry["tool_call_id"], item.seq)
                           for item, entry in zip(messages, entries, strict=True)
                           if entry["role"] == "tool"])
    earlier = (f"<p style='margin:2px 0'><i>{counted(hidden, 'earlier message')} not shown"
               "</i></p>" if hidden else "")
    rows = []
    for item, entry in zip(messages, entries, strict=True):
        role = "tool" if item.is_tool_result else item.message.get("role")
        lines = [escape(entry.get("content"), TEXT_LIMIT)] if entry.get("content") else []
        if entry["role"] == "tool":
            call_id = entry["tool_call_id"]
            answers = (f"answers call at seq {seq_text(calls[call_id])}" if call_id in calls
                       else "answers a call before the shown messages" if hidden
                       else f"<b style='color:{STATUS_COLOR['error']}'>answers no call</b>")
            error = " · <b>error</b>" if message_is_error(item.message) else ""
            lines.insert(0, f"result for id {escape(call_id, ID_LIMIT)} {answers}{error}")
        lines += _call_lines(entry, results)
        rows.append(f"<tr><td style='{CELL}'>{seq_text(item.seq)}</td>"
                    f"<td style='{CELL}'><b>{escape(role)}</b></td>"
                    f"<td style='{CELL}'>{'<br>'.join(lines)}</td></tr>")
    return (earlier + "<table style='border-collapse:collapse;font-size:12px;width:100%'>"
            "<tr><th style='text-align:left'>seq</th><th style='text-align:left'>role</th>"
            f"<th style='text-align:left'>content</th></tr>{''.join(rows)}</table>")


def context_html(context: Context) -> str:
    """Return the context pane: provider badges, pairing problems, then the messages table."""
    count = len(context.messages)
    return (
        f"<div class='lv lv-context'><div><b>Next model request</b> under "
        f"{escape(context.policy)}: {counted(count, 'message')}</div>"
        f"<div>{validity_html(context)}</div>{problems_html(context)}"
        f"{messages_html(context.messages)}</div>"
    )
