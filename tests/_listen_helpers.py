"""Fixtures for the listening-test and clip-inspector tests.

``make_render`` writes a tiny folder that follows the render contract (short synthetic clips,
``manifest.parquet`` with every manifest column, ``render.json``, ``sources/``); ``serving``
runs a listen server in a thread; ``chromium`` starts headless Chromium through selenium or
skips the test with the reason.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import soundfile as sf

import vocalgrad
from _timing import hang_guard

_ARROW = {"string": pa.string(), "int32": pa.int32(), "float64": pa.float64(), "bool": pa.bool_()}
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def _flac(y: np.ndarray, sr: int) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, np.round(np.clip(y, -1, 1) * 32767).astype(np.int16), sr, format="FLAC", subtype="PCM_16")
    return buf.getvalue()


def make_render(root, *, categories=("pitch", "volume"), seconds: float = 0.3, n_sources: int = 1,
                sr: int = 16000, path_override: dict | None = None) -> Path:
    """A complete render folder of ``n_sources`` x ``categories`` x 24 conditions (tones)."""
    root = Path(root)
    rows = []
    n = int(seconds * sr)
    t = np.arange(n) / sr
    for s in range(n_sources):
        sid = f"tone{s:02d}"
        src = 0.3 * np.sin(2 * np.pi * (200 + 20 * s) * t)
        (root / "sources").mkdir(parents=True, exist_ok=True)
        (root / "sources" / f"{sid}.flac").write_bytes(_flac(src, sr))
        for cat in categories:
            c = vocalgrad.category(cat)
            for tier in vocalgrad.TIERS:
                for traj in vocalgrad.TRAJECTORIES:
                    for direction in vocalgrad.DIRECTIONS:
                        cid = vocalgrad.clip_id(sid, cat, traj, tier, direction)
                        env = np.linspace(0.2, 1.0, n) if direction == "increase" else np.linspace(1.0, 0.2, n)
                        data = _flac(src * env, sr)
                        rel = (path_override or {}).get(cid, f"clips/{cat}/{cid}.flac")
                        if not rel.startswith(".."):
                            (root / rel).parent.mkdir(parents=True, exist_ok=True)
                            (root / rel).write_bytes(data)
                        lo, hi = -6.0, 6.0
                        rows.append({
                            "clip_id": cid, "path": rel, "split": "test", "category": cat,
                            "attribute": c.attribute, "direction": direction, "tier": tier, "trajectory": traj,
                            "source_id": sid, "speaker_id": "tone", "sentence_id": sid, "gender": "",
                            "accent": "", "text": "", "sample_rate": sr, "duration_sec": n / sr,
                            "onset_sec": 0.05, "offset_sec": seconds - 0.05, "source_onset_sec": 0.05,
                            "source_offset_sec": seconds - 0.05, "speech_found": True,
                            "value_start": lo if direction == "increase" else hi,
                            "value_end": hi if direction == "increase" else lo,
                            "value_unit": "dB", "clipped_ratio": 0.0,
                            "sha256": hashlib.sha256(data).hexdigest(), "recipe": "test-tones",
                        })
    schema = pa.schema([(name, _ARROW[dtype]) for name, dtype, _ in vocalgrad.MANIFEST_COLUMNS])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), root / "manifest.parquet")
    (root / "render.json").write_text(json.dumps({"recipe": "test-tones", "split": "test", "sample_rate": sr,
                                                  "source": "tones", "toolkit_version": "test"}))
    return root


@contextlib.contextmanager
def serving(app, host: str = "127.0.0.1"):
    """Run ``make_server(app)`` in a thread on a free port; yields the base URL."""
    from analysis.listen import make_server

    server = make_server(app, host=host, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(hang_guard(5))


@contextlib.contextmanager
def chromium(tmp_path, *, logs: bool = False):
    """Headless Chromium driven by selenium (skips the test when either is missing); ``logs`` keeps the
    browser console and network events for ``driver.get_log("browser" | "performance")``."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip(f"headless browser test needs {CHROMIUM} and {CHROMEDRIVER} "
                    "(Debian: apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="browser tests need selenium (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = Path(tmp_path) / "chromium-profile"
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--mute-audio", "--autoplay-policy=no-user-gesture-required",
                f"--user-data-dir={profile}"):
        opts.add_argument(arg)
    if logs:
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(hang_guard(30))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
