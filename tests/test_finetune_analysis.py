"""Fine-tuning study, torch-free parts: validation split, direction alignment, transfer scores."""

from __future__ import annotations

import numpy as np
import pytest

import vocalgrad
from analysis.finetune.alignment import alignment_rows, category_direction, cosine_matrix
from analysis.finetune.split import data_fingerprint, stratified_split
from analysis.finetune.transfer_metrics import argmax_first, classification_scores


def _grid_ids(category: str, sources: int):
    ids, labels = [], []
    for s in range(sources):
        for traj in vocalgrad.TRAJECTORIES:
            for tier in vocalgrad.TIERS:
                for d in vocalgrad.DIRECTIONS:
                    ids.append(vocalgrad.clip_id(f"p{s:03d}_{s:03d}", category, traj, tier, d))
                    labels.append(d)
    return ids, labels


def test_split_paper_sizes_stratified_and_deterministic():
    ids, labels = _grid_ids("volume", 500)                  # 12,000 clips as in the paper
    sp = stratified_split(ids, labels)
    assert (len(sp.train), len(sp.val)) == (10800, 1200)
    lab = dict(zip(ids, labels))
    assert sp.counts(lab)["val"] == {"increase": 600, "decrease": 600}
    assert not set(sp.train) & set(sp.val) and set(sp.train) | set(sp.val) == set(ids)
    assert list(sp.val) == sorted(sp.val)
    assert stratified_split(list(reversed(ids)), list(reversed(labels))) == sp    # input order does not matter
    assert stratified_split(ids, labels, seed=1).val != sp.val


def test_split_errors_and_small_groups():
    with pytest.raises(ValueError, match="val_fraction"):
        stratified_split(["a"], ["increase"], val_fraction=1.0)
    with pytest.raises(ValueError, match="duplicate"):
        stratified_split(["a", "a"], ["increase", "decrease"])
    sp = stratified_split(["a", "b", "c", "d"], ["increase", "increase", "decrease", "decrease"])
    assert len(sp.val) == 2 and len(sp.train) == 2          # max(1, round(0.2)) = 1 per label


def test_fingerprint_changes_with_labels_and_audio():
    ids, labels = ["a", "b"], ["increase", "decrease"]
    f = data_fingerprint(ids, labels, ["x", "y"])
    assert f == data_fingerprint(ids[::-1], labels[::-1], ["y", "x"])
    assert f != data_fingerprint(ids, labels[::-1], ["x", "y"])
    assert f != data_fingerprint(ids, labels, ["x", "z"])


def _planted(category, u, sources=20, layers=3, dim=16, noise=0.0, seed=0):
    """Features = source offset + condition offset + (+-1/2) u (+ noise): the pair difference is u."""
    rng = np.random.default_rng(seed)
    ids, _ = _grid_ids(category, sources)
    x = np.zeros((len(ids), layers, dim))
    offsets = {}
    for i, cid in enumerate(ids):
        p = vocalgrad.parse_clip_id(cid)
        key = (p["source_id"], p["tier"], p["trajectory"])
        offsets.setdefault(key, rng.normal(size=(layers, dim)) * 5)
        sign = 0.5 if p["direction"] == "increase" else -0.5
        x[i] = offsets[key] + sign * u + noise * rng.normal(size=(layers, dim))
    return ids, x


def test_alignment_recovers_planted_cosine():
    rng = np.random.default_rng(1)
    dim, layers = 16, 3
    a = rng.normal(size=(layers, dim))
    w = rng.normal(size=(layers, dim))
    w -= (np.sum(w * a, -1, keepdims=True) / np.sum(a * a, -1, keepdims=True)) * a      # w orthogonal to a
    a_hat, w_hat = a / np.linalg.norm(a, axis=-1, keepdims=True), w / np.linalg.norm(w, axis=-1, keepdims=True)
    theta = np.array([0.3, 1.2, 2.5])[:, None]                                          # per layer
    b = 2.0 * (np.cos(theta) * a_hat + np.sin(theta) * w_hat)
    dirs = []
    for cat, u, noise in (("volume", a, 0.0), ("pitch", b, 0.0), ("echo", -a, 0.3)):
        ids, x = _planted(cat, u, noise=noise)
        d, info = category_direction(ids, x)
        assert info["sources"] == 20 and info["pairs"] == 240 and not info["unpaired"]
        dirs.append(d)
    cos = cosine_matrix(np.stack(dirs))                        # (layers, 3, 3)
    assert cos.shape == (layers, 3, 3)
    np.testing.assert_allclose(cos[:, 0, 1], np.cos(theta[:, 0]), atol=1e-9)
    np.testing.assert_allclose(np.diagonal(cos, axis1=1, axis2=2), 1.0, atol=1e-9)
    assert np.all(cos[:, 0, 2] < -0.99)                       # opposite planted direction, with noise
    rows = alignment_rows(["volume", "pitch", "echo"], cos, [5, 10, 15])
    assert len(rows) == 3 * 3 and rows[0]["category_a"] == "volume" and rows[0]["category_b"] == "pitch"
    assert len(alignment_rows(vocalgrad.CATEGORY_NAMES, np.zeros((1, 9, 9)), [5])) == 36


def test_alignment_weights_sources_equally_and_skips_unpaired():
    ids, x = [], []
    # source s1: 12 pairs, difference (1, 0); source s2: one pair, difference (0, 1)
    for traj in vocalgrad.TRAJECTORIES:
        for tier in vocalgrad.TIERS:
            ids += [vocalgrad.clip_id("s1", "volume", traj, tier, d) for d in vocalgrad.DIRECTIONS]
            x += [[1.0, 0.0], [0.0, 0.0]]
    ids += [vocalgrad.clip_id("s2", "volume", "jump", "low", d) for d in vocalgrad.DIRECTIONS]
    x += [[0.0, 3.0], [0.0, 2.0]]
    ids.append(vocalgrad.clip_id("s3", "volume", "jump", "low", "increase"))              # no partner
    x.append([9.0, 9.0])
    d, info = category_direction(ids, np.array(x))
    np.testing.assert_allclose(d, [0.5, 0.5])                 # not (12, 1) / 13
    assert info["unpaired"] == [ids[-1]] and info["sources"] == 2


def test_transfer_scores_match_hand_computation():
    gold = ["anger", "anger", "joy", "joy", "sadness"]
    pred = ["anger", "joy", "joy", "joy", "anger"]          # sadness never predicted
    s = classification_scores(gold, pred, ["anger", "joy", "sadness", "fear"])
    pc = s["per_class"]
    assert pc["anger"]["precision"] == pytest.approx(0.5) and pc["anger"]["recall"] == pytest.approx(0.5)
    assert pc["joy"]["precision"] == pytest.approx(2 / 3) and pc["joy"]["f1"] == pytest.approx(0.8)
    assert pc["sadness"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1, "predicted": 0}
    assert pc["fear"]["support"] == 0 and pc["fear"]["f1"] == 0.0            # absent class counts as 0
    assert s["macro_f1"] == pytest.approx((0.5 + 0.8 + 0 + 0) / 4)
    assert s["macro_precision"] == pytest.approx((0.5 + 2 / 3) / 4)
    assert s["macro_recall"] == pytest.approx((0.5 + 1.0) / 4)
    assert s["accuracy"] == pytest.approx(3 / 5)
    with pytest.raises(ValueError, match="not among the classes"):
        classification_scores(["x"], ["anger"], ["anger"])


def test_argmax_ties_go_to_first_option():
    assert list(argmax_first([[1.0, 1.0, 0.0], [0.0, 2.0, 2.0], [0.0, 0.0, 3.0]])) == [0, 1, 2]
