"""Checks of the HTML report page in headless Chromium (used by tests/test_report_html.py).

:func:`load_page` opens ``index.html`` from ``file://`` and returns what a reader's browser saw:
console messages at SEVERE, failed and non-local requests, every player's state, every image's.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

_MEDIA_STATE = """
return Array.from(document.querySelectorAll('audio')).map(a => ({
  src: a.currentSrc || (a.querySelector('source') || {}).src, ready: a.readyState,
  duration: a.duration, error: a.error ? a.error.code : null}));
"""
_IMAGE_STATE = """
return Array.from(document.images).map(i => ({src: i.currentSrc, complete: i.complete, width: i.naturalWidth,
                                               alt: i.getAttribute('alt')}));
"""


def _wait(driver, cond, timeout: float = 60.0):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: cond(d))


def load_page(driver, index: Path, *, timeout: float = 120.0) -> dict[str, Any]:
    """Open ``index`` from file://, wait until every player has its metadata (or an error) and every
    image is complete, and collect console errors and network events.

    ``failed``: requests that failed, except media reads the player itself cancelled (``cancelled``:
    with ``preload="metadata"`` Chromium stops reading a clip once it knows its duration); whether
    each clip loads is in ``media``."""
    url = Path(index).resolve().as_uri()
    driver.get("about:blank")  # the browser's own start-up traffic (new-tab page) is not the page's:
    driver.get_log("performance")  # reading a log empties it
    driver.get_log("browser")
    driver.get(url)
    _wait(driver, lambda d: d.execute_script("return document.readyState") == "complete")
    for el in driver.find_elements("css selector", "details"):  # open the collapsed figures too
        driver.execute_script("arguments[0].open = true;", el)
    # lazy figures (below the fold) load as a reader scrolls to them: here all at once
    driver.execute_script("document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; });")
    _wait(driver, lambda d: all(m["ready"] >= 1 or m["error"] is not None
                                for m in d.execute_script(_MEDIA_STATE)), timeout)
    _wait(driver, lambda d: all(i["complete"] for i in d.execute_script(_IMAGE_STATE)), timeout)
    time.sleep(0.3)
    severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    failed, remote, requested, cancelled = [], [], [], []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.loadingFailed":
            p = msg["params"]
            if p.get("canceled") and p.get("type") == "Media":
                cancelled.append(p)  # a player stops reading once it has the metadata (preload="metadata")
            else:
                failed.append(p)
        elif msg["method"] == "Network.requestWillBeSent":
            req = msg["params"]["request"]["url"]
            requested.append(req)
            if not req.startswith(("file://", "data:")):
                remote.append(req)
        elif msg["method"] == "Network.responseReceived" and msg["params"]["response"].get("status", 200) >= 400:
            failed.append(msg["params"]["response"])
    return {"severe": severe, "failed": failed, "remote": remote, "requested": requested, "cancelled": cancelled,
            "media": driver.execute_script(_MEDIA_STATE), "images": driver.execute_script(_IMAGE_STATE)}


def column_values(driver, table_css: str, col: int) -> list[str]:
    """Text of column ``col`` (0 = row header) of every body row of the first table matching ``table_css``."""
    return driver.execute_script(
        "const t = document.querySelector(arguments[0]);"
        "return Array.from(t.tBodies[0].rows).map(r => r.cells[arguments[1]].textContent.trim());",
        table_css, col)


def widths_at(driver, width: int, table_css: str) -> dict[str, int]:
    """Widths at a window ``width`` pixels wide: the window's inner width, the page's and the first table's
    matching ``table_css`` scroll widths and its scroll container's visible width (sideways scrolling: a
    scroll width above the visible one)."""
    driver.set_window_size(width, 900)
    return driver.execute_script(
        "const t = document.querySelector(arguments[0]); const box = t.closest('.scroll') || t.parentElement;"
        "return {inner: window.innerWidth, page: document.documentElement.scrollWidth, table: t.scrollWidth,"
        "        box: box.clientWidth, box_scroll: box.scrollWidth};", table_css)
