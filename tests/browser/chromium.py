"""How the browser tests launch Debian's Chromium through Playwright, and watch a page."""

from pathlib import Path

from playwright.sync_api import Page

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
MISSING = f"{CHROMIUM} is missing: install Debian's chromium (see .ci/run)"


def watched_errors(page: Page) -> list[str]:
    """Return a list that ``page``'s console errors and uncaught page errors are added to."""
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text)
            if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


def drag_across(page: Page, area: dict[str, float], left: float, right: float) -> None:
    """Drag the mouse from x ``left`` to x ``right`` across the middle of ``area`` (a bounding
    box), as a person draws a zoom box."""
    y = area["y"] + area["height"] / 2
    page.mouse.move(left, y)
    page.mouse.down()
    page.mouse.move((left + right) / 2, y, steps=4)
    page.mouse.move(right, y, steps=4)
    page.mouse.up()
