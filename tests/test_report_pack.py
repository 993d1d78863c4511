"""Packing the report's session bodies as they are made, and the figures' JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from plotly.io.json import to_json_plotly
from report_packs import PLACEHOLDER, blocks, unpacked

import ledgerviz
from ledgerviz.examples import example_paths
from ledgerviz.report import pack as report_pack
from ledgerviz.report import render_report
from ledgerviz.report.figures import _script_json
from ledgerviz.report.pack import BodyPacker


def test_a_block_is_packed_as_soon_as_it_is_full(monkeypatch) -> None:
    monkeypatch.setattr(report_pack, "PACK_BYTES", 10)
    packer = BodyPacker()
    places = [packer.add("abcd", 0), packer.add("efgh", 0)]
    assert packer.blocks == []  # 8 characters held: below the 10 of a block
    places.append(packer.add("ijk", 0))
    assert len(packer.blocks) == 1  # 11 characters: packed before finish, nothing held
    places.append(packer.add("<l/>", 40))
    document = "".join(places) + "".join(packer.finish())
    assert [json.loads(data) for data in blocks(document).values()] == [
        ["abcd", "efgh", "ijk"], ["<l/>"]]
    assert PLACEHOLDER.findall(document) == [
        ("lv-pack-0", "0"), ("lv-pack-0", "1"), ("lv-pack-0", "2"), ("lv-pack-1", "0")]
    assert 'data-height="130"' in places[3]  # 40 px of figures + 90 px of heading and margins
    assert unpacked(document) == "abcdefghijk<l/>"


def test_many_blocks_read_back_as_the_plain_report(monkeypatch) -> None:
    ledger = ledgerviz.load(example_paths())
    plain = render_report(ledger, packed=False)
    monkeypatch.setattr(report_pack, "PACK_BYTES", 30_000)  # a few sessions per block
    packed = render_report(ledger)

    def main(document: str) -> str:
        return document[document.index("<main>"):document.index("</main>")]

    assert len(blocks(packed)) - 1 >= 4  # besides plotly.js
    assert main(unpacked(packed)) == main(plain)


@pytest.mark.parametrize("value", [
    {"x": np.arange(10, dtype="f4")[::3], "y": np.array([[1, 2], [3, 4]])[:, 0]},  # strided
    {"hovertext": np.array(["</script><b>", None, 2.5, "\u2028\u2029"], dtype=object)},
    {"text": np.array(["a", "é"]), "customdata": np.array([[1, "b"]], dtype=object)},
    {"nan": [float("nan"), float("inf")], 3: ("a", True, None), "nested": {"a/b": [1.5e300]}},
])
def test_figure_json_is_plotlys_text(value: dict) -> None:
    assert _script_json(value) == to_json_plotly(value)
    assert "<" not in _script_json(value) and "/" not in _script_json(value)


def test_figure_json_refuses_what_json_cannot_hold() -> None:
    with pytest.raises(TypeError, match="not JSON serializable: set"):
        _script_json({"x": {1, 2}})
