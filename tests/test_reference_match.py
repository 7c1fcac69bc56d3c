"""The engine reproduces an independent, plainly written implementation of benchmark.md §3–§5 to the sample.

``benchmarks/reference_impl.py`` shares no code with ``generation/``; equal 16-bit output for every
category is what "faithful-v1" means here.
"""

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

import vocalgrad as vg
from generation.audio import to_int16
from generation.recipe import load_recipe
from generation.render import prepare_source, render_clip
from generation.sources import SourceItem

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import reference_impl as ref  # noqa: E402

SR = 48000
REC = load_recipe()


class Sig:
    def __init__(self, y):
        self.y = y

    def read(self):
        return self.y, SR


@pytest.fixture(scope="module")
def source():
    rng = np.random.default_rng(7)
    t = np.arange(int(0.9 * SR)) / SR
    voiced = sum(np.sin(2 * np.pi * k * 170 * (1 + 0.05 * np.sin(2 * np.pi * 3 * t)) * t) / k for k in range(1, 12))
    y = 0.08 * voiced * (0.6 + 0.4 * np.sin(2 * np.pi * 5 * t)) + 0.01 * rng.standard_normal(len(t))
    y = np.concatenate([1e-4 * rng.standard_normal(12000), y, 1e-4 * rng.standard_normal(7000)])
    y = (np.round(y * 32768) / 32768).astype(np.float32)     # on the 16-bit grid like a corpus file
    item = SourceItem("src", Sig(y))
    x, span = prepare_source(item, REC)
    return item, x, span


CHEAP = ["volume", "noise", "distortion", "roughness", "vibration", "echo"]
HEAVY = ["pitch", "speed", "clarity"]
CASES = [(c, *k) for c in CHEAP for k in itertools.product(vg.TIERS, vg.TRAJECTORIES, vg.DIRECTIONS)]
CASES += [(c, tier, traj, d) for c in HEAVY for tier in ("low", "high")
          for traj in ("linear", "quad_first_flat", "jump") for d in vg.DIRECTIONS]


def test_span_matches(source):
    item, x, span = source
    assert (span.onset, span.offset, span.found) == ref.speech_span(x)


@pytest.mark.parametrize("category,tier,trajectory,direction", CASES)
def test_clip_equals_reference(source, category, tier, trajectory, direction):
    item, x, span = source
    res, _ = render_clip(x, item, REC, span, category=category, tier=tier, trajectory=trajectory,
                         direction=direction, cache={})
    y, on, off = ref.render_reference(x, category, tier, trajectory, direction, noise_ids=("src", "src"))
    assert (res.onset, res.offset) == (on, off)
    ours, theirs = to_int16(res.y)[0], to_int16(y)[0]
    assert len(ours) == len(theirs)
    np.testing.assert_array_equal(ours, theirs)


def test_noise_seed_string_matches_spec():
    from generation.render import tier_params
    from generation.transforms.envelope import noise_seed
    import hashlib

    p = tier_params(REC, "noise", "medium")
    seed = noise_seed(p, item_id="p226_01", clip_ref="p226_106", trajectory="linear", tier="medium",
                      direction="increase")
    want = hashlib.sha256(b"42:p226_01__p226_106__linear__mid__up").digest()[:8]
    assert seed == int.from_bytes(want, "big")
