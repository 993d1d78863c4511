"""The diff report: two sessions aligned, in one self-contained offline HTML page."""

from __future__ import annotations

from ledgerviz import __version__
from ledgerviz.compare.session_diff import SessionDiff
from ledgerviz.compare.tables import differing_rows, status_changes
from ledgerviz.display.fragments import empty_note, html_table, palette, stylesheet
from ledgerviz.html import escape
from ledgerviz.plot.diff_timeline import diff_timeline_spec
from ledgerviz.report.figures import figure_html, page_scripts, plotlyjs_label, trace_types

ROW_LIMIT = 200
"""Differing rows the page lists; the rest are counted."""


def render_diff_report(diff: SessionDiff) -> str:
    """Return the diff of two sessions as one HTML document: the sessions, where they part,
    the counts, the aligned timeline, the first differing rows and the call status changes.

    Every ledger string is escaped; plotly.js is embedded, so the page works offline.
    """
    figure = diff_timeline_spec(diff)
    types = frozenset(trace_types(figure))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ledgerviz diff</title><style>{palette()}{stylesheet('fragments.css')}"
        f"{stylesheet('report.css', __package__)}</style></head><body class='lv'>"
        f'<header class="top"><h1>ledgerviz diff</h1><p>{_verdict(diff)}</p></header>'
        f'<main><section class="session diff" id="diff">{_sides(diff)}'
        f"{figure_html(figure, 'diff')}<h3>Differing rows</h3>{_rows(diff)}"
        f"<h3>Call status changes (policy {escape(diff.policy)})</h3>{_status_changes(diff)}"
        "</section></main>"
        f"<footer>ledgerviz {__version__} · works offline (plotly.js embedded: "
        f"{plotlyjs_label(types)})</footer>{page_scripts(types)}</body></html>"
    )


def _verdict(diff: SessionDiff) -> str:
    """Return the header line: the same, or where the sessions part and the counts."""
    if diff.same:
        return escape(diff.divergence_text())
    return (f"First divergence at <b>{escape(diff.divergence_text())}</b> · "
            f"{escape(diff.counts_text())}")


def _sides(diff: SessionDiff) -> str:
    """Return the table naming the two sessions."""
    rows = [[name, escape(side.key), escape(side.path), str(len(side.seqs))]
            for name, side in (("a", diff.a), ("b", diff.b))]
    return html_table(["side", "session", "file", "events"], rows)


def _rows(diff: SessionDiff) -> str:
    """Return the table of the first :data:`ROW_LIMIT` differing rows, then a count."""
    if diff.same:
        return empty_note("no differing rows")
    return differing_rows(diff, ROW_LIMIT).html()


def _status_changes(diff: SessionDiff) -> str:
    """Return the table of the calls whose status differs."""
    if not diff.status_changes:
        return empty_note("no call changed status")
    return status_changes(diff, ROW_LIMIT).html()
