"""HTML and plain-text fragments shared by the reprs, the report and the explorer's panes.

A table is data (:class:`Table`): every cell is a tuple of :class:`Part`, plain text that may
be drawn as a badge. The same table renders as escaped HTML and as aligned plain text, so a
repr's ``text/plain`` fallback and its HTML never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import NamedTuple

from ledgerviz.display.palette import FONT, STATUS_COLOR
from ledgerviz.html import escape, short_text
from ledgerviz.wording import counted

CELL_LIMIT = 80
"""Characters of ledger text a table cell shows before it is cut with an ellipsis."""

BADGE_KINDS = frozenset(
    {"ok", "error", "outcome_unknown", "not_started", "valid", "invalid", "warning", "info",
     "muted"}
)


class Part(NamedTuple):
    """A piece of cell text; ``badge`` names the badge style it is drawn in (None: plain)."""

    text: str
    badge: str | None = None


Cell = tuple[Part, ...]


def cell(*parts: Part | str) -> Cell:
    """Return a cell of ``parts``; a bare string is plain text."""
    return tuple(p if isinstance(p, Part) else Part(p) for p in parts)


@dataclass(frozen=True, slots=True)
class Table:
    """Rows under headers; ``hidden`` rows were left out and are counted in a footer
    (``noun``: what a row is, in the singular)."""

    headers: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    hidden: int = 0
    noun: str = "row"
    limit: int = field(default=CELL_LIMIT)

    def html(self) -> str:
        """Return the table as HTML; every header and cell text is escaped."""
        rows = ([cell_html(c, self.limit) for c in row] for row in self.rows)
        return html_table([escape(h) for h in self.headers], rows) + self._more()

    def text(self) -> str:
        """Return the table as aligned plain text, with the same footer."""
        grid = [list(self.headers)] + [[_cell_text(c, self.limit) for c in row]
                                       for row in self.rows]
        widths = [max(len(line[i]) for line in grid) for i in range(len(self.headers))]
        lines = ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip()
                 for line in grid]
        if self.hidden:
            lines.append(self._footer())
        return "\n".join(lines)

    def _footer(self) -> str:
        return f"… {counted(self.hidden, f'more {self.noun}')} not shown"

    def _more(self) -> str:
        return empty_note(self._footer()) if self.hidden else ""


def _cell_text(parts: Cell, limit: int) -> str:
    return " ".join(short_text(p.text, limit) for p in parts)


def html_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Return an HTML table of headers and cells that are already HTML (escaped by the caller)."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def cell_html(parts: Cell, limit: int = CELL_LIMIT) -> str:
    """Return a cell as HTML: badges for badge parts, escaped text for the rest."""
    return " ".join(badge(p.badge, p.text) if p.badge else escape(p.text, limit) for p in parts)


def badge(kind: str, text: str | None = None) -> str:
    """Return a badge of style ``kind`` (one of :data:`BADGE_KINDS`) reading ``text``."""
    if kind not in BADGE_KINDS:
        raise ValueError(f"unknown badge kind {kind!r}; choose one of {sorted(BADGE_KINDS)}")
    label = text if text is not None else kind.replace("_", " ")
    return f'<span class="lv-badge {kind}">{escape(label, CELL_LIMIT)}</span>'


def empty_note(text: str) -> str:
    """Return an empty-state note (muted, italic): why a section has nothing to show."""
    return f'<p class="lv-none">{escape(text)}</p>'


def expandable(text: str, preview: int) -> str:
    """Return ``text`` escaped in a ``<pre>``; past ``preview`` characters the start shows and
    a ``<details>`` reveals the whole text (no script needed)."""
    if len(text) <= preview:
        return f'<pre class="lv-pre">{escape(text)}</pre>'
    return (f'<details class="lv-more"><summary><pre class="lv-pre">{escape(text, preview)}'
            f"</pre>show all {len(text):,} characters</summary>"
            f'<pre class="lv-pre">{escape(text)}</pre></details>')


def palette() -> str:
    """Return the CSS variables of the status colours (one source: ``plot.style``)."""
    return (f".lv {{ --ok: {STATUS_COLOR['ok']}; --error: {STATUS_COLOR['error']};"
            f" --unknown: {STATUS_COLOR['outcome_unknown']};"
            f" --notstarted: {STATUS_COLOR['not_started']}; --font: {FONT}; }}")


@cache
def stylesheet(name: str, package: str = "ledgerviz.display") -> str:
    """Return a stylesheet shipped in ``package`` (the displays' own by default)."""
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def fragment_style() -> str:
    """Return the ``<style>`` element the fragments need (palette included)."""
    return f"<style>{palette()}{stylesheet('fragments.css')}</style>"


def rich_block(title: str, body: str, text: str) -> str:
    """Return a self-styled display block: ``title`` (trusted), ``body`` (escaped HTML), and
    ``text`` as a ``<pre>`` fallback that the stylesheet hides where styles apply."""
    return (f'<div class="lv lv-repr">{fragment_style()}<pre class="lv-text">{escape(text)}</pre>'
            f'<div class="lv-html"><div class="lv-title">{title}</div>{body}</div></div>')
