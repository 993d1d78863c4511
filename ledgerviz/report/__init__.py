"""The self-contained HTML report: ``page`` writes it from sessions read a batch at a time
(``sessions``), ordered by lineage (``lineage``), with figures (``figures``) and bodies packed
(``pack``) and the plotly.js it embeds (``plotlyjs``, ``bundle/``); its page script and
stylesheet sit beside them. ``diff`` writes the page of two sessions' diff."""

from ledgerviz.report.diff import render_diff_report
from ledgerviz.report.page import render_report, report_pieces, write_report

__all__ = ["render_diff_report", "render_report", "report_pieces", "write_report"]
