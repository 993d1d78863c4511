"""Screenshot a crashed session in Phoenix's UI (docs/images/phoenix-crash.png).

Run on demand, against a Phoenix server on this machine::

    PHOENIX_HOST=127.0.0.1 PHOENIX_PORT=6006 python -m phoenix.server.main serve &
    python scripts/phoenix_screenshot.py --url http://127.0.0.1:6006

It sends the ``crash-mid-dispatch`` example under the fork policy (``ledgerviz.to_otlp``),
opens the session's trace in headless Debian Chromium through Playwright, selects the
tool call whose outcome is unknown and saves the page.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from phoenix.client import Client
from playwright.sync_api import sync_playwright

import ledgerviz
from ledgerviz.examples import example_path
from ledgerviz.export.otlp_ids import trace_id

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from chromium import CHROMIUM, LAUNCH_ARGS  # noqa: E402

SESSION = "sim-crash-mid-dispatch-7"


def main() -> None:
    """Send the example, open its trace, click the unknown-outcome call, save the PNG."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the Phoenix server, on 127.0.0.1")
    parser.add_argument("-o", "--output", type=Path,
                        default=ROOT / "docs" / "images" / "phoenix-crash.png")
    args = parser.parse_args()
    ledgerviz.to_otlp(ledgerviz.load(example_path("crash-mid-dispatch")), args.url,
                      policy="fork")
    client = Client(base_url=args.url)
    project = next(p["id"] for p in client.projects.list() if p["name"] == "default")
    trace = f"{trace_id(SESSION):032x}"
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1180})
        page.goto(f"{args.url}/projects/{project}/traces/{trace}", wait_until="networkidle")
        page.get_by_text("execute_tool grep").first.click()
        page.get_by_text("Attributes").first.click()
        time.sleep(2)
        page.screenshot(path=str(args.output))
        browser.close()
    print(args.output)


if __name__ == "__main__":
    main()
