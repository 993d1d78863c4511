"""A DataFrame as plain, stable text: what the example notebooks print in their checked cells,
so the facts a reader checks (and nbval compares) do not depend on pandas' HTML."""

from __future__ import annotations

import pandas as pd


def plain_table(frame: pd.DataFrame) -> str:
    """Return ``frame`` as plain text without its index, every missing value shown as ``-``."""
    return frame.astype("string").fillna("-").to_string(index=False)
