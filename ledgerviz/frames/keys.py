"""Rows keyed by several int64 columns: one key per row, counted or looked up at C speed."""

from __future__ import annotations

from typing import Any

import numpy as np

from ledgerviz.ledger.table import MISSING, int_array


def keyed_counts(rows: list[np.ndarray], calls: list[np.ndarray]) -> list[int]:
    """Return how many calls have each row's key (``rows``, ``calls``: parallel int64 key
    columns, ``MISSING`` a value like any other)."""
    count = len(rows[0])
    keys = one_key([np.concatenate(pair) for pair in zip(rows, calls, strict=True)])
    row_keys, call_keys = keys[:count], np.sort(keys[count:])
    found = (np.searchsorted(call_keys, row_keys, side="right")
             - np.searchsorted(call_keys, row_keys, side="left"))
    return found.tolist()


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


def int64_of(values: list[Any]) -> np.ndarray:
    """Return ints and Nones as int64 (None: ``MISSING``)."""
    return np.frombuffer(int_array(values), np.int64)


def last_with_key(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Return the index of the last of ``keys`` equal to each of ``wanted`` (-1: none)."""
    if not len(keys):
        return np.full(len(wanted), -1, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    found = np.maximum(np.searchsorted(ordered, wanted, side="right") - 1, 0)
    return np.where(ordered[found] == wanted, order[found], -1)
