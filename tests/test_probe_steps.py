"""The steps `run_probe` and `run_positions` share (analysis/probe/run.py): cache filling, lazy loading."""

from __future__ import annotations

import numpy as np

from analysis.probe.cache import FeatureCache, FeatureKey
from analysis.probe.run import LazyFeatures, fill_cache, short_name


def test_fill_cache_resumes_in_steps_and_counts_only_new_clips(tmp_path):
    cache = FeatureCache(tmp_path, "grp", {"model": "m"})
    key = FeatureKey("lm_text", 1, "train", "pitch")
    data = np.arange(7 * 3, dtype=np.float32).reshape(7, 3)
    cache.writer([key], 7, "ids").write({key: data[:2]})       # "interrupted" after 2 clips
    calls = []

    def compute(idx):
        calls.append(list(idx))
        return {key: data[idx]}

    n = fill_cache(cache.writer([key], 7, "ids"), 7, 3, "test", False, compute)
    assert n == 5 and calls == [[2, 3, 4], [5, 6]]
    np.testing.assert_allclose(cache.load(key, "ids"), data, rtol=1e-3)
    assert cache.has(key, "ids")                                 # the writer was closed: entry final
    assert not list(cache.folder("train", "pitch").glob("*.partial.npy"))


def test_lazy_features_build_once_and_short_name():
    built = []
    lazy = LazyFeatures(lambda: built.append(1) or object())
    assert lazy.loaded is None and not built
    first = lazy()
    assert lazy() is first and lazy.loaded is first and built == [1]
    assert short_name("/models/Qwen2-Audio-7B/") == "Qwen2-Audio-7B" and short_name("org/name") == "name"
