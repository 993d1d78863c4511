"""Fetch the small plotly.js bundle the HTML report embeds, from the npm registry.

Run from the repository root: ``python scripts/fetch_plotly_bundle.py`` (needs ``npm``). It
packs ``plotly.js@VERSION`` with npm (which checks the tarball against the registry's
integrity hash), takes its published partial bundle ``dist/plotly-gl2d.min.js`` (the
``scatter`` and ``scattergl`` traces, plus ``splom`` and ``parcoords``) and plotly.js's
licence, and writes them with a manifest (version, npm integrity, SHA-256) to
``ledgerviz/report/bundle/``. VERSION defaults to the plotly.js that the installed
plotly.py embeds, so the report's figures meet the plotly.js they were made for. The same
version always gives the same bytes (npm tarballs never change once published).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "ledgerviz" / "report" / "bundle"
BUNDLE = "plotly-gl2d.min.js"
TRACES = ["scatter", "scattergl", "splom", "parcoords"]
"""The trace types the bundle registers (plotly.js's lib/index-gl2d.js, and core's scatter)."""


def embedded_version() -> str:
    """Return the version of the plotly.js that the installed plotly.py embeds."""
    from plotly.offline import get_plotlyjs_version

    return get_plotlyjs_version()


def fetch(version: str, target: Path) -> dict[str, str | list[str]]:
    """Write the bundle, plotly.js's licence and the manifest for ``version`` to ``target``;
    return the manifest."""
    with tempfile.TemporaryDirectory() as scratch:
        packed = json.loads(subprocess.run(
            ["npm", "pack", f"plotly.js@{version}", "--json", "--pack-destination", scratch],
            check=True, capture_output=True, text=True).stdout)[0]
        with tarfile.open(Path(scratch) / packed["filename"]) as tarball:
            bundle = tarball.extractfile(f"package/dist/{BUNDLE}").read()  # type: ignore[union-attr]
            licence = tarball.extractfile("package/LICENSE").read()  # type: ignore[union-attr]
    header = f"plotly.js (gl2d - minified) v{version}".encode()
    if header not in bundle[:200]:
        raise SystemExit(f"{BUNDLE} of plotly.js@{version} does not start with {header!r}")
    target.mkdir(parents=True, exist_ok=True)
    (target / BUNDLE).write_bytes(bundle)
    (target / "LICENSE").write_bytes(licence)
    manifest: dict[str, str | list[str]] = {
        "package": f"plotly.js@{version}",
        "npm_integrity": packed["integrity"],
        "file": f"dist/{BUNDLE}",
        "version": version,
        "sha256": hashlib.sha256(bundle).hexdigest(),
        "traces": TRACES,
    }
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n",
                                          encoding="utf-8")
    return manifest


def main() -> None:
    """Fetch the bundle and print its manifest."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", help="plotly.js version (default: plotly.py's)")
    args = parser.parse_args()
    print(json.dumps(fetch(args.version or embedded_version(), TARGET), indent=2))


if __name__ == "__main__":
    main()
