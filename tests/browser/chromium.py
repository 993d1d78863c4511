"""How the browser tests launch Debian's Chromium through Playwright."""

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
MISSING = f"{CHROMIUM} is missing: install Debian's chromium (see .ci/run)"
