"""Bad input around the magnitude sweeps: each fails in one line naming the field or option, before any work."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from generation import attributes
from generation.attributes import AttributeDeclarationError
from generation.attributes.sweep import Sweep

ROOT = Path(__file__).resolve().parents[1]


def _with_sweep(sweep):
    return replace(attributes.get("brightness"), sweep=sweep)


def test_a_sweep_without_the_tiers_as_points_names_the_tier():
    with pytest.raises(AttributeDeclarationError, match=r"'brightness': sweep: sweep: tier low .* not exactly one point"):
        _with_sweep(Sweep((0.0, 1.0, 3.0, 5.0, 8.0, 12.0, 14.0), "dB/octave", lambda m: (-m / 2, m / 2)))


def test_a_sweep_without_a_zero_control_or_out_of_order_is_refused():
    with pytest.raises(AttributeDeclarationError, match="must start at 0"):
        _with_sweep(Sweep((2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0), "dB/octave", lambda m: (-m / 2, m / 2)))
    with pytest.raises(AttributeDeclarationError, match="no level beyond the high tier"):
        _with_sweep(Sweep((0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0), "dB/octave", lambda m: (-m / 2, m / 2)))


def test_render_trajectories_without_sweep_fails_before_writing(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "generation.cli", "render", "--source", "demo", "--categories",
                           "volume", "--trajectories", "linear", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2 and "--trajectories applies to --sweep renders only" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_sweep_render_refuses_a_folder_of_the_paper_set(tmp_path):
    from generation.render import RenderError, render

    render("demo", tmp_path, categories=["volume"], n_sources=1, jobs=1, progress=False)
    with pytest.raises(RenderError, match=r"holds a render with sweep=None, this run asks for sweep="):
        render("demo", tmp_path, categories=["volume"], n_sources=1, jobs=1, progress=False, sweep=True)


def test_unknown_sweep_trajectory_is_named():
    from generation.sweep_plan import sweep_trajectories

    with pytest.raises(ValueError, match="unknown zigzag; choose from linear"):
        sweep_trajectories(["zigzag"])
