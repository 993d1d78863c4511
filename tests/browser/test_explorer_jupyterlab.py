"""The explorer in a real JupyterLab: the test starts JupyterLab on 127.0.0.1 (a free port, a
token, stopped by the test), opens a notebook that calls ``lv.explore``, runs it in headless
Chromium, moves the crash-point slider and toggles the policy through the page, and checks that
the plot and the panes changed and that the page logged no console error from the moment the
cell ran (JupyterLab's own start-up requests for optional resources may 404 before that)."""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from ledgerviz.examples import example_path

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
SOURCE = ("import ledgerviz as lv\n"
          f"explorer = lv.explore(lv.load({str(example_path('crash-mid-dispatch'))!r}))\n"
          "explorer")
EVENTS = sum(1 for line in example_path("crash-mid-dispatch").read_text().splitlines()[1:]
             if line.strip())
SUMMARY = ".jp-OutputArea-output .lv-summary"
PLOT_STATE = """() => {
    const gd = document.querySelector('.jp-OutputArea-output .js-plotly-plot');
    return gd ? JSON.stringify([gd.layout.title && gd.layout.title.text,
                                gd.data.map(t => [t.name, (t.x || []).length])]) : null;
}"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def notebook(folder: Path) -> Path:
    path = folder / "explore.ipynb"
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                   "outputs": [], "source": SOURCE}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                    "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start JupyterLab serving a folder with the notebook; yield the notebook's URL."""
    folder = tmp_path_factory.mktemp("lab")
    notebook(folder)
    port, token = free_port(), secrets.token_hex(16)
    log = (folder / "jupyterlab.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={folder}", "--LabApp.expose_app_in_browser=True",
         "--ServerApp.port_retries=0", "--allow-root"],
        stdout=log, stderr=subprocess.STDOUT, cwd=folder)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                assert server.poll() is None, (
                    f"JupyterLab exited while starting: {(folder / 'jupyterlab.log').read_text()}")
                assert time.monotonic() < deadline, "JupyterLab did not start within 90 s"
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/lab/tree/explore.ipynb?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def run_the_cell(page: Page) -> None:
    """Run the notebook's cell with Shift+Enter, pressing again while the page was not ready to
    take it (its prompt still reads ``[ ]``)."""
    prompt = page.locator(".jp-Cell .jp-InputPrompt").first
    for _ in range(5):
        page.locator(".jp-Cell .jp-InputArea-editor").first.click()
        page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function("p => !p.innerText.includes('[ ]')",
                                   arg=prompt.element_handle(), timeout=15_000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError("the notebook cell never started running")


def wait_for_summary(page: Page, text: str) -> None:
    page.wait_for_function(
        "t => { const label = document.querySelector('" + SUMMARY + "');"
        " return label !== null && label.innerText.includes(t); }", arg=text, timeout=60_000)


def wait_for_change(page: Page, expression: str, before: str | None) -> str:
    page.wait_for_function(f"b => ({expression})() !== b", arg=before, timeout=60_000)
    return page.evaluate(expression)


def test_explorer_responds_to_the_slider_and_the_policy_toggle(lab: str) -> None:
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: install Debian's chromium (see .ci/run)"
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(lab, timeout=90_000)
            page.wait_for_function("() => window.jupyterapp && document.querySelector("
                                   "'.jp-Notebook .jp-Cell')", timeout=90_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                   timeout=90_000)
            errors.clear()  # from here on the page runs and drives the explorer
            run_the_cell(page)
            page.wait_for_selector(".jp-OutputArea-output .js-plotly-plot .main-svg",
                                   timeout=120_000)
            assert page.locator(SUMMARY).first.inner_text().startswith(
                f"whole ledger ({EVENTS} events) · synthesize:")
            plot = page.evaluate(PLOT_STATE)
            context = page.locator(".lv-context").first.inner_text()

            page.locator(".jp-OutputArea-output .widget-toggle-button",
                         has_text="fork").first.click()
            wait_for_summary(page, " · fork: ")
            toggled = wait_for_change(page, PLOT_STATE, plot)
            assert "abandoned" in toggled  # the crashed call's suffix moves to its own lanes
            after_toggle = page.locator(".lv-context").first.inner_text()
            assert after_toggle != context

            readout = page.locator(".jp-OutputArea-output .widget-readout").first
            readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type(str(EVENTS // 2))
            page.keyboard.press("Enter")
            wait_for_summary(page, f"process died after event {EVENTS // 2} of {EVENTS}")
            moved = wait_for_change(page, PLOT_STATE, toggled)
            assert moved != toggled
            assert page.locator(".lv-context").first.inner_text() != after_toggle
        finally:
            browser.close()
    assert errors == []
