"""Hover labels for timeline items; every ledger-derived value is HTML-escaped here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ledgerviz.html import plotly_lines, plotly_text, text_of
from ledgerviz.plot.style import STATUS_LABEL
from ledgerviz.wording import counted

ARGUMENT_PREVIEW = 300
FEW = 500


def format_duration(value: Any) -> str:
    """Return a duration (Timedelta or milliseconds) as short text, e.g. ``512 ms``, ``3.2 s``."""
    if text_of(value) == "":
        return "n/a"
    ms = value / pd.Timedelta(milliseconds=1) if isinstance(value, pd.Timedelta) else float(value)
    return _milliseconds_text(ms)


def _milliseconds_text(ms: float) -> str:
    """Return a duration in milliseconds as :func:`format_duration` text (NaN: ``n/a``)."""
    if ms != ms:
        return "n/a"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 120_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:.1f} min"


def _durations(values: pd.Series) -> np.ndarray:
    """Return :func:`format_duration` of each value of a duration column, rendering each distinct
    duration once from its milliseconds (as floats, so no Timedelta is built per row)."""
    if pd.api.types.is_timedelta64_dtype(values.dtype):
        ns = values.to_numpy(dtype="timedelta64[ns]")
        ms = np.where(np.isnat(ns), np.nan, ns.astype("int64") / 1e6)
    else:
        ms = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    distinct, codes = np.unique(ms, return_inverse=True)
    return np.array([_milliseconds_text(v) for v in distinct.tolist()], dtype=object)[codes]


def _joined(*parts: str | np.ndarray) -> np.ndarray:
    """Return one label per row: the constant strings and per-row text columns of ``parts``
    put together in a single pass (one string built per row, no intermediate columns)."""
    columns = [part for part in parts if not isinstance(part, str)]
    pattern = "".join(part.replace("%", "%%") if isinstance(part, str) else "%s"
                      for part in parts)
    rows = zip(*(column.tolist() for column in columns), strict=True)
    return np.array([pattern % row for row in rows], dtype=object)


def _each(values: pd.Series, render: Callable[[Any], str]) -> np.ndarray:
    """Return ``render`` of every value as an object array, so labels are built column by column.

    Long columns render each distinct value once (missing ones as ``render(None)``; every
    renderer here treats a missing value as ``None``); short ones value by value, which is
    faster below :data:`FEW` rows.
    """
    if len(values) <= FEW:
        return np.array([render(v) for v in values.tolist()], dtype=object)
    codes, distinct = pd.factorize(values, use_na_sentinel=True)
    rendered = np.array([*(render(v) for v in distinct), render(None)], dtype=object)
    return rendered[codes]


def _text(values: pd.Series, limit: int | None = None, missing: str = "") -> np.ndarray:
    """Return :func:`plotly_text` of each value, ``missing`` where it is empty; integer
    columns (seqs, counts) are turned into text in one vectorised step."""
    if pd.api.types.is_integer_dtype(values.dtype) and len(values) > FEW:
        absent = values.isna().to_numpy()
        texts = values.astype("Int64").astype("string").to_numpy(dtype=object, na_value=missing)
        texts[absent] = missing
        return texts
    return _each(values, lambda v: plotly_text(v, limit) or missing)


def _counts(values: pd.Series, noun: str) -> np.ndarray:
    """Return each count with ``noun`` in the number it takes ("1 step", "3 steps"); a
    missing count reads "? steps"."""
    return _each(values, lambda v: counted(int(v), noun) if text_of(v) else f"? {noun}s")


def _when(values: pd.Series, render: Callable[[Any], str]) -> np.ndarray:
    """Return ``render`` of each value that is present, ``""`` where it is missing."""
    return _each(values, lambda v: render(v) if text_of(v) else "")


def call_hover(calls: pd.DataFrame) -> np.ndarray:
    """Return one escaped hover label per row of a ``calls`` frame."""
    return _joined(
        "<b>", _text(calls["tool"], 80, "unnamed tool"), "</b> · ",
        _each(calls["status"], lambda v: STATUS_LABEL.get(v, plotly_text(v))),
        "<br>call id: ", _text(calls["call_id"], 80),
        "<br>turn ", _text(calls["turn"]), " · step ", _text(calls["step"]),
        "<br>seqs: requested ", _text(calls["requested_seq"], missing="none"),
        " · dispatched ", _text(calls["dispatched_seq"], missing="none"),
        " · result ", _text(calls["result_seq"], missing="none"),
        "<br>duration: ", _durations(calls["duration"]),
        _when(calls["error_code"], lambda v: f"<br>error code: {plotly_text(v, 80)}"),
        "<br>arguments: ",
        _each(calls["arguments"], lambda v: plotly_lines(v, ARGUMENT_PREVIEW) or "none"),
    )


def event_hover(events: pd.DataFrame) -> np.ndarray:
    """Return one escaped hover label per row of an ``events`` frame."""
    step = np.where(events["turn"].notna(),
                    _when(events["step"], lambda v: f" · step {plotly_text(v)}"), "")
    added = np.where(events["synthetic"].fillna(False).astype(bool),
                     "<br>added by recovery"
                     + _when(events["recovery_code"], lambda v: f": {plotly_text(v)}"), "")
    return _joined(
        "<b>", _text(events["type"], 80), "</b> · seq ", _text(events["seq"], missing="none"),
        _when(events["turn"], lambda v: f"<br>turn {plotly_text(v)}"), step,
        _when(events["call_id"], lambda v: f"<br>call id: {plotly_text(v, 80)}"),
        "<br>branch: ", _text(events["branch"]), added,
    )


def turn_hover(turns: pd.DataFrame) -> np.ndarray:
    """Return one escaped hover label per row of a ``turns`` frame."""
    return _joined(
        "<b>turn ", _text(turns["turn"]), "</b> · seqs ",
        _text(turns["start_seq"], missing="none"), "–", _text(turns["end_seq"], missing="none"),
        "<br>ended: ", _text(turns["end_reason"], missing="still open"),
        "<br>", _counts(turns["steps"], "step"), " · ", _counts(turns["calls"], "call"), " (",
        _text(turns["outcome_unknown"]), " outcome unknown, ",
        _text(turns["not_started"]), " not started)",
        "<br>duration: ", _durations(turns["duration"]),
    )


def step_hover(steps: pd.DataFrame) -> np.ndarray:
    """Return one escaped hover label per row of a ``steps`` frame."""
    return _joined(
        "<b>turn ", _text(steps["turn"]), " · step ", _text(steps["step"]), "</b> · seqs ",
        _text(steps["start_seq"], missing="none"), "–",
        _text(steps["end_seq"], missing="none"),
        "<br>model: ", _text(steps["provider"], 60, "?"), " / ",
        _text(steps["model"], 60, "?"),
        "<br>tokens: ", _text(steps["input_tokens"], missing="?"), " in · ",
        _text(steps["output_tokens"], missing="?"), " out",
        "<br>", _counts(steps["calls"], "tool call"),
    )


GROUPED_REDRAWN = "grouped: zoom in to see each"
"""The note of a bin in a figure whose host redraws the zoomed range item by item."""
GROUPED_STATIC = "grouped at this scale"
"""The note of a bin in a figure nothing redraws (zooming only stretches the bins)."""


def group_hovers(what: str, counts: Sequence[int], names: Sequence[Sequence[str]],
                 first_seqs: np.ndarray, last_seqs: np.ndarray,
                 note: str = GROUPED_STATIC) -> list[str]:
    """Return the escaped label of each bin: ``counts[i]`` items from seq ``first_seqs[i]`` to
    ``last_seqs[i]`` (floats holding whole seqs, NaN: none) and ``names[i]``, the bin's
    distinct item names, already escaped and sorted (bins of the same names share a text),
    then ``note`` (what zooming does)."""
    pattern = (f"<b>%d {what.replace('%', '%%')}</b> · seqs %s–%s<br>%s"
               f"<br><i>{note.replace('%', '%%')}</i>")
    listed = {key: ", ".join(key[:6]) + (", …" if len(key) > 6 else "") for key in set(names)}
    return [pattern % (count, first, last, listed[key])
            for count, key, first, last in zip(counts, names, _seq_texts(first_seqs),
                                               _seq_texts(last_seqs), strict=True)]


def _seq_texts(seqs: np.ndarray) -> list[str]:
    """Return seqs held as floats as text (``none`` where missing; straight from the floats,
    twice as fast as :func:`_text` on an ``Int64`` series, and this runs per binned lane)."""
    known = ~np.isnan(seqs)
    texts = np.full(len(seqs), "none", dtype=object)
    texts[known] = seqs[known].astype(np.int64).astype(str).tolist()
    return texts.tolist()
