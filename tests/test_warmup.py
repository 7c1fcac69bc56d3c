"""Render start-up: librosa's numba kernels compile before the bar, with a message, and are cached on disk."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generation import warmup
from generation.recipe import DEFAULT_RECIPE, load_recipe

ROOT = Path(__file__).resolve().parents[1]


def _render(out, env):
    return subprocess.run([sys.executable, "-m", "vocalgrad_commands.cli", "render", "--source", "demo", "--out", str(out),
                           "--sources", "1", "--categories", "clarity", "--jobs", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_first_render_announces_compiling_before_the_bar_and_caches_the_kernels(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    first = _render(tmp_path / "a", env)
    assert first.returncode == 0, first.stderr
    assert warmup.FIRST_RUN_MESSAGE in first.stderr
    assert first.stderr.index(warmup.FIRST_RUN_MESSAGE) < first.stderr.index("render test")  # before the bar
    cache = tmp_path / "cache" / "vocalgrad" / "numba"
    assert any(cache.rglob("*.nbi")), "numba wrote no cache index into the user cache folder"
    second = _render(tmp_path / "b", env)
    assert second.returncode == 0, second.stderr
    assert warmup.FIRST_RUN_MESSAGE not in second.stderr
    clips_a = sorted((tmp_path / "a").rglob("*.flac"))
    assert clips_a and [p.read_bytes() for p in clips_a] == [
        (tmp_path / "b" / p.relative_to(tmp_path / "a")).read_bytes() for p in clips_a]  # cache changes nothing


def test_categories_without_kernels_skip_the_warm_up_silently(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "empty"))
    msg = io.StringIO()
    warmup.warm_up(load_recipe(DEFAULT_RECIPE), ["volume", "noise", "echo"], stream=msg)
    assert msg.getvalue() == ""


def test_cache_folder_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert warmup.numba_cache_dir() == tmp_path / "vocalgrad" / "numba"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert warmup.numba_cache_dir() == tmp_path / "mine"
