"""Escaping helpers: HTML (report) and plotly label text."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ledgerviz.html import escape, plotly_lines, plotly_text, seq_text, text_of, truncate

PAYLOAD = '<img src=x onerror="alert(1)">&<a href=\'javascript:alert(2)\'>x</a>'


def test_escape_neutralises_tags_and_quotes_for_html() -> None:
    assert escape(PAYLOAD) == ("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;"
                               "&lt;a href=&#x27;javascript:alert(2)&#x27;&gt;x&lt;/a&gt;")


def test_plotly_text_escapes_only_what_plotly_decodes() -> None:
    assert plotly_text(PAYLOAD) == ('&lt;img src=x onerror="alert(1)"&gt;&amp;'
                                    "&lt;a href='javascript:alert(2)'&gt;x&lt;/a&gt;")


def test_line_breaks_become_br_after_escaping() -> None:
    assert plotly_lines("a<b\r\nc\nd") == "a&lt;b<br>c<br>d"


def test_truncation_happens_before_escaping() -> None:
    assert truncate("abcdef", 4) == "abc…"
    assert truncate("abc", 3) == "abc"
    assert escape("<<<<<<", 3) == "&lt;&lt;…"
    with pytest.raises(ValueError, match="limit must be positive"):
        truncate("x", 0)


@pytest.mark.parametrize("missing", [None, math.nan, pd.NA, pd.NaT])
def test_missing_values_are_empty_text(missing: object) -> None:
    assert text_of(missing) == ""
    assert escape(missing) == ""


def test_other_values_are_their_str() -> None:
    assert text_of(12) == "12"
    assert escape(True) == "True"


def test_seq_text_names_a_missing_seq() -> None:
    assert seq_text(None) == "not logged"
    assert seq_text(0) == "0"
    assert seq_text(1234) == "1234"
