"""Packing the report's heavy parts: each session's body (summary, timelines, tables) and
plotly.js go into the page as inert, compressed blocks that the page script unpacks when they
are needed, so a report of many sessions opens on its overview at once.

A block is ``<script type="application/octet-stream">`` holding base64 of zlib-compressed
bytes: the base64 alphabet has no ``<``, so no text inside can end the script or open markup.
Several consecutive sessions share a block (it compresses far better than one per session).
Compression is deterministic: the same input gives the same bytes.
"""

from __future__ import annotations

import base64
import json
import re
import zlib

PACK_BYTES = 400_000
"""Characters of session bodies gathered into one block before a new one starts."""

NO_SCRIPT = ("<noscript><p class='meta'>This session's summary, timeline and tables need "
             "JavaScript (see the note at the top).</p></noscript>")
PAGE_NO_SCRIPT = ("<noscript><p>JavaScript is off: only the overview and each "
                  "session's heading show. Each session's summary, timeline and tables are "
                  "stored compressed in this file and unpacked by the page script; "
                  "<code>ledgerviz report --no-pack</code> writes a report whose summaries "
                  "and tables read without JavaScript (its timelines still need it)."
                  "</p></noscript>")
"""The note a reader without JavaScript sees at the top of a packed report."""
_ROW = re.compile(r"<tr[ >]")
LEVEL = 6
"""zlib's compression level: its default. Level 9 packs session bodies about 5% smaller in
twice the time (a tenth of a 10,000-session report's build)."""


def packed_bytes(data: bytes) -> str:
    """Return ``data`` compressed with zlib and encoded as base64 (``DecompressionStream
    ('deflate')`` in the browser reverses it)."""
    return base64.b64encode(zlib.compress(data, LEVEL)).decode("ascii")


def packed_script(element_id: str, data: bytes) -> str:
    """Return the inert script block ``element_id`` holding ``data`` packed."""
    return (f'<script type="application/octet-stream" id="{element_id}">'
            f"{packed_bytes(data)}</script>")


class BodyPacker:
    """Packs session bodies as they come: each :meth:`add` returns the body's placeholder
    (naming about the height it will take, which the page script reserves); consecutive
    bodies share a block, a JSON array of them, compressed once :data:`PACK_BYTES` is
    reached, so only the current block's bodies are ever held unpacked."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        """The blocks packed so far (see :meth:`finish`)."""
        self._group: list[str] = []
        self._size = 0

    def add(self, body: str, figures_px: int) -> str:
        """Take ``body`` (whose figures are ``figures_px`` tall); return its placeholder."""
        placeholder = (f'<div class="lv-lazy" data-pack="lv-pack-{len(self.blocks)}"'
                       f' data-part="{len(self._group)}"'
                       f' data-height="{estimated_height(body, figures_px)}">{NO_SCRIPT}</div>')
        self._group.append(body)
        self._size += len(body)
        if self._size >= PACK_BYTES:
            self._close_group()
        return placeholder

    def finish(self) -> list[str]:
        """Pack the bodies still held; return every block, in order."""
        if self._group:
            self._close_group()
        return self.blocks

    def _close_group(self) -> None:
        data = json.dumps(self._group, ensure_ascii=False).encode("utf-8")
        self.blocks.append(packed_script(f"lv-pack-{len(self.blocks)}", data))
        self._group = []
        self._size = 0


def estimated_height(body: str, figures_px: int) -> int:
    """Return about how tall ``body`` will be once unpacked, in pixels: its figures plus a
    line per table row and heading (so the page's length barely changes as sections unpack)."""
    return figures_px + 34 * len(_ROW.findall(body)) + 48 * body.count("<h3>") + 90
