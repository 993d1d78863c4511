"""Text that is safe to print on a terminal, whatever a ledger or a file name holds."""

from __future__ import annotations

import os
import re
import sys
from urllib.parse import quote

from ledgerviz.html import BIDI_CONTROLS

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


def file_uri(path: str | os.PathLike[str]) -> str:
    """Return the ``file://`` URI of an absolute path, any bytes in its name included."""
    return "file://" + quote(os.fsencode(os.path.abspath(path)))


def say_error(command: str, message: object) -> None:
    """Print ``ledgerviz COMMAND: MESSAGE`` on stderr, terminal-safe."""
    print(f"ledgerviz {command}: {terminal_safe(str(message))}", file=sys.stderr)
