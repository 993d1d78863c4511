"""An HTML reader for display tests: which elements and attributes a fragment holds, and the
text of its table rows (standard library parser, independent of ledgerviz)."""

from __future__ import annotations

from html.parser import HTMLParser

ALLOWED_TAGS = frozenset({"div", "style", "pre", "table", "thead", "tbody", "tr", "th", "td",
                          "span", "p", "details", "summary", "b", "code", "ul", "li", "i", "br",
                          "h3"})
ALLOWED_ATTRIBUTES = frozenset({"class", "id", "style"})


class Parts(HTMLParser):
    """Collects every start tag with its attributes, and the cell texts of each table row."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._in_style = False
        self.text: list[str] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "style":
            self._in_style = True

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def foreign_markup(markup: str) -> list[str]:
    """Return every element or attribute of ``markup`` that a display never writes itself."""
    found = []
    for tag, attrs in Parts(markup).tags:
        if tag not in ALLOWED_TAGS:
            found.append(f"<{tag}>")
        found += [f"<{tag} {name}=…>" for name, _value in attrs
                  if name not in ALLOWED_ATTRIBUTES]
    return found
