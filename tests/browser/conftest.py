"""The headless Chromium every browser test of a module drives (one launch per module)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from chromium import CHROMIUM, LAUNCH_ARGS, MISSING
from playwright.sync_api import Browser, sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), MISSING
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield launched
        launched.close()
