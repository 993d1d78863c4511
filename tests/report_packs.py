"""Reading a packed report as a browser would, with the standard library only: each packed
block is base64 of zlib bytes; a session body's placeholder names its block and its place in
the block's JSON array."""

from __future__ import annotations

import base64
import json
import re
import zlib

BLOCK = re.compile(r'<script type="application/octet-stream" id="([^"]+)">([A-Za-z0-9+/=]*)'
                   r"</script>")
PLACEHOLDER = re.compile(r'<div class="lv-lazy" data-pack="([^"]+)" data-part="(\d+)"'
                         r' data-height="\d+"><noscript>.*?</noscript></div>')


def blocks(document: str) -> dict[str, bytes]:
    """Return every packed block of ``document`` by element id, unpacked."""
    return {match.group(1): zlib.decompress(base64.b64decode(match.group(2), validate=True))
            for match in BLOCK.finditer(document)}


def unpacked(document: str) -> str:
    """Return ``document`` with every session body in its section (as the page script puts it)
    and the packed blocks removed."""
    found = blocks(document)
    bodies = {name: json.loads(data) for name, data in found.items() if name != "lv-plotly"}
    filled = PLACEHOLDER.sub(lambda m: bodies[m.group(1)][int(m.group(2))], document)
    return BLOCK.sub("", filled)
