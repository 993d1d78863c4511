"""Rows keyed by several int64 columns: events grouped into rows, one key per row, counted or
looked up at C speed."""

from __future__ import annotations

from typing import Any

import numpy as np

from ledgerviz.ledger.table import MISSING, int_array


def keyed_counts(rows: list[np.ndarray], calls: list[np.ndarray]) -> np.ndarray:
    """Return how many calls have each row's key (``rows``, ``calls``: parallel int64 key
    columns, ``MISSING`` a value like any other), as int64."""
    count = len(rows[0])
    keys = one_key([np.concatenate(pair) for pair in zip(rows, calls, strict=True)])
    row_keys, call_keys = keys[:count], np.sort(keys[count:])
    return (np.searchsorted(call_keys, row_keys, side="right")
            - np.searchsorted(call_keys, row_keys, side="left")).astype(np.int64)


def one_key(columns: list[np.ndarray]) -> np.ndarray:
    """Return one int64 per row, equal where every column is (mixed radix over each
    column's span of values; a column of too wide a span is numbered by its distinct ones)."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    size = 1
    for column in columns:
        present = column[column != MISSING]
        low, high = (int(present.min()), int(present.max())) if len(present) else (0, 0)
        span = high - low + 2  # 0: missing
        if size * span < 1 << 62:
            codes = np.where(column == MISSING, 0, column - (low - 1))
        else:
            distinct, codes = np.unique(column, return_inverse=True)
            span = len(distinct)
        if size * span >= 1 << 62:  # renumber what the key holds so far
            key = np.unique(key, return_inverse=True)[1].ravel()
            size = int(key.max(initial=0)) + 1
        key = key * span + codes.ravel()
        size *= span
    return key


def int64_of(values: list[Any] | np.ndarray) -> np.ndarray:
    """Return ints and Nones as int64 (None: ``MISSING``); an int64 array as it is."""
    if isinstance(values, np.ndarray):
        return values.astype(np.int64, copy=False)
    return np.frombuffer(int_array(values), np.int64)


def last_with_key(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Return the index of the last of ``keys`` equal to each of ``wanted`` (-1: none)."""
    if not len(keys):
        return np.full(len(wanted), -1, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    found = np.maximum(np.searchsorted(ordered, wanted, side="right") - 1, 0)
    return np.where(ordered[found] == wanted, order[found], -1)


def opened_rows(keys: list[np.ndarray], opens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the row of each event and the event that opened each row, of events in log
    order keyed by ``keys`` (parallel arrays): an event ``opens`` a new row, as does the
    first event of its key; the others count in the latest row of their key. Rows are
    numbered in the order they opened."""
    count = len(opens)
    order = np.lexsort((np.arange(count), *reversed(keys)))  # by key, then in log order
    same = np.ones(count, dtype=bool)  # the key of the event before, in that order
    same[:1] = False
    for key in keys:
        ordered = key[order]
        same[1:] &= ordered[1:] == ordered[:-1]
    opened = ~same | opens[order]
    sorted_rows = np.cumsum(opened) - 1
    openers = order[opened]  # by key
    by_opening = np.argsort(openers, kind="stable")
    renumbered = np.empty(len(openers), dtype=np.int64)
    renumbered[by_opening] = np.arange(len(openers))
    rows = np.empty(count, dtype=np.int64)
    rows[order] = renumbered[sorted_rows]
    return rows, openers[by_opening]


def latest_in_rows(count: int, rows: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Return the latest of ``positions`` in each of ``count`` rows (``rows``: each
    position's), -1 in a row without one."""
    latest = np.full(count, -1, dtype=np.int64)
    np.maximum.at(latest, rows, positions)
    return latest


def nullable(values: np.ndarray) -> list[Any]:
    """Return an int64 table column's values as a list, None where ``MISSING``."""
    objects = values.astype(object)
    objects[values == MISSING] = None
    return objects.tolist()
