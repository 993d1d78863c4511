"""Text that is safe to print on a terminal, whatever a ledger or a file name holds."""

from __future__ import annotations

import os
import re
import sys
from urllib.parse import quote

from ledgerviz.html import BIDI_CONTROLS, ELLIPSIS

ID_SHOWN = 200
"""Characters of a ledger string (a session or call id, an id quoted in a message) that
terminal text shows, as the report's section heading does; ``--json`` keeps it whole."""

_LONG_RUN = re.compile(f"[^\\s'\"]{{{ID_SHOWN + 1},}}")
"""A run of more than :data:`ID_SHOWN` characters without a space or a quote: in a message,
an id (a path that long is shortened too)."""

_UNPRINTABLE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\ud800-\\udfff{BIDI_CONTROLS}]")


def _escape(match: re.Match[str]) -> str:
    """Return the visible escape of one control character or undecodable byte."""
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """Return ``text`` with control characters (ESC, CR, BEL, C1/OSC...), bidirectional
    controls (RLO, LRI...) and bytes that were not UTF-8 written as visible ``\\xNN`` /
    ``\\uXXXX`` escapes, so it cannot move the cursor, retitle the terminal, reverse
    what follows it or fail to encode."""
    return _UNPRINTABLE.sub(_escape, text)


def shown_id(text: str) -> str:
    """Return a ledger string as terminal text shows it: whole up to :data:`ID_SHOWN`
    characters, else its first :data:`ID_SHOWN`, an ellipsis and its full length
    (``abc… (20,000 characters)``). Not yet :func:`terminal_safe`."""
    if len(text) <= ID_SHOWN:
        return text
    return f"{text[:ID_SHOWN]}{ELLIPSIS} ({len(text):,} characters)"


def shown_message(text: str) -> str:
    """Return a message (a diagnostic, an error) with each run of more than
    :data:`ID_SHOWN` characters without a space or a quote (an id it quotes) shortened by
    :func:`shown_id`, then made :func:`terminal_safe`."""
    return terminal_safe(_LONG_RUN.sub(lambda match: shown_id(match.group()), text))


def file_uri(path: str | os.PathLike[str]) -> str:
    """Return the ``file://`` URI of an absolute path, any bytes in its name included."""
    return "file://" + quote(os.fsencode(os.path.abspath(path)))


def say_error(command: str, message: object) -> None:
    """Print ``ledgerviz COMMAND: MESSAGE`` on stderr, as :func:`shown_message`."""
    print(f"ledgerviz {command}: {shown_message(str(message))}", file=sys.stderr)
