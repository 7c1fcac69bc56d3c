"""vocalgrad probe without a model: pooling, cache, trainer, the mel stage on a demo render, CLI."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import vocalgrad
from analysis.probe.cache import FeatureCache, FeatureKey
from analysis.probe.pooling import pool_segments, segment_bounds
from analysis.probe.run import parse_layers, parse_stages, run_probe


# ----------------------------------------------------------------------------- pooling
@pytest.mark.parametrize("t", [16, 37, 100, 401])
def test_segments_partition_the_frames(t):
    b = segment_bounds(t)
    assert len(b) == 16 and b[0][0] == 0 and b[-1][1] == t
    assert all(b[i][1] == b[i + 1][0] for i in range(15))
    sizes = [stop - start for start, stop in b]
    assert max(sizes) - min(sizes) <= 1


def test_short_sequences_give_every_segment_a_frame():
    b = segment_bounds(5)
    assert all(stop - start == 1 for start, stop in b)
    assert [start for start, _ in b] == sorted(start for start, _ in b)
    with pytest.raises(ValueError, match="empty"):
        segment_bounds(0)


def test_pool_segments_means_and_layout():
    t, d = 48, 3
    x = np.zeros((t, d), np.float32)
    for s in range(16):                       # 3 frames per segment, value = segment index
        x[3 * s:3 * s + 3] = s + np.arange(d) / 10
    out = pool_segments(x)
    assert out.shape == (16 * d,)
    np.testing.assert_allclose(out.reshape(16, d)[:, 0], np.arange(16))
    np.testing.assert_allclose(out.reshape(16, d)[5], 5 + np.arange(d) / 10, rtol=1e-6)
    batch = pool_segments(np.stack([x, 2 * x]))        # leading axes are kept
    np.testing.assert_allclose(batch[1], 2 * out, rtol=1e-6)


def test_log_mel_follows_the_spec_settings():
    import librosa

    from analysis.probe.mel import log_mel, mel_feature

    sr = 48000
    t = np.arange(int(1.5 * sr)) / sr
    y = (0.3 * np.sin(2 * np.pi * 440 * t) * np.linspace(0.1, 1, t.size)).astype(np.float32)
    got = log_mel(y, sr)
    import soxr

    y16 = soxr.resample(y, sr, 16000, quality="HQ")
    ref = librosa.power_to_db(librosa.feature.melspectrogram(y=y16, sr=16000, n_fft=1024, hop_length=256,
                                                             n_mels=128, fmax=8000), ref=np.max).T
    assert got.shape == ref.shape == (1 + len(y16) // 256, 128)
    np.testing.assert_allclose(got, ref, atol=1e-3)
    assert got.max() == pytest.approx(0.0)                  # dB re max
    feat = mel_feature(y, sr)
    assert feat.shape == (16 * 128,)
    assert feat.reshape(16, 128)[-1].mean() > feat.reshape(16, 128)[0].mean()   # louder at the end


# ----------------------------------------------------------------------------- trainer
def _gauss(n, dim, seed, shift):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    w = np.random.default_rng(99).standard_normal(dim)
    x = rng.standard_normal((n, dim)) * 3 + 5 + np.outer(2 * y - 1, w) * shift
    return x.astype(np.float16), y


def test_trainer_separable_features_reach_about_100_percent():
    from analysis.probe.trainer import train_probe

    xtr, ytr = _gauss(400, 32, 0, 1.5)
    xte, yte = _gauss(300, 32, 1, 1.5)
    res = train_probe(xtr, ytr, xte, yte)
    assert res.accuracy >= 0.97 and res.balanced_accuracy >= 0.97 and res.train_accuracy >= 0.97
    assert (res.n_train, res.n_test, res.dim) == (400, 300, 32)
    again = train_probe(xtr, ytr, xte, yte)
    assert again.accuracy == res.accuracy        # seeded: deterministic


def test_trainer_non_separable_features_stay_near_chance():
    from analysis.probe.trainer import train_probe

    xtr, ytr = _gauss(400, 32, 2, 0.0)
    xte, yte = _gauss(600, 32, 3, 0.0)
    res = train_probe(xtr, ytr, xte, yte)
    assert 0.42 <= res.accuracy <= 0.58
    assert 0.42 <= res.balanced_accuracy <= 0.58


def test_balanced_accuracy_and_input_checks():
    from analysis.probe.trainer import balanced_accuracy, train_probe

    y = np.array([1] * 9 + [0])
    assert balanced_accuracy(y, np.ones(10)) == pytest.approx(0.5)
    assert balanced_accuracy(y, y) == 1.0
    with pytest.raises(ValueError, match="differ in size"):
        train_probe(np.zeros((4, 3)), [0, 1, 0, 1], np.zeros((2, 5)), [0, 1])
    with pytest.raises(ValueError, match="0/1"):
        train_probe(np.zeros((2, 3)), [0, 2], np.zeros((2, 3)), [0, 1])


# ----------------------------------------------------------------------------- cache
def test_cache_resumes_and_checks_fingerprint_and_ids(tmp_path):
    fp = {"model": "m", "data": "d"}
    cache = FeatureCache(tmp_path, "grp", fp)
    keys = [FeatureKey("lm_audio", 1, "train", "pitch"), FeatureKey("lm_text", 1, "train", "pitch")]
    data = {k: np.arange(10 * (4 + i), dtype=np.float32).reshape(10, 4 + i) for i, k in enumerate(keys)}
    w = cache.writer(keys, 10, "ids1")
    assert w.start == 0
    w.write({k: v[:4] for k, v in data.items()})                 # "interrupted" after 4 clips
    assert not cache.has(keys[0], "ids1")
    w2 = cache.writer(keys, 10, "ids1")
    assert w2.start == 4
    w2.write({k: v[4:] for k, v in data.items()})
    w2.close()
    for k in keys:
        got = cache.load(k, "ids1")
        assert got.dtype == np.float16
        np.testing.assert_allclose(got, data[k], rtol=1e-3)
    assert not list(cache.folder("train", "pitch").glob("*.partial.npy"))
    assert not list(cache.folder("train", "pitch").glob(".progress-*"))
    assert not cache.has(keys[0], "other-ids")
    assert not FeatureCache(tmp_path, "grp", {**fp, "model": "m2"}).has(keys[0], "ids1")
    with pytest.raises(FileNotFoundError, match="no cached features"):
        cache.load(FeatureKey("lm_audio", 2, "train", "pitch"), "ids1")


def test_parse_layers_and_stages():
    assert parse_layers("all", 3) == [1, 2, 3]
    assert parse_layers("3,1,1", 3) == [1, 3]
    assert parse_layers("0", 3) == [0]
    with pytest.raises(ValueError, match="out of range.*3 LM layers"):
        parse_layers("1,4", 3)
    with pytest.raises(ValueError, match="comma-separated"):
        parse_layers("first", 3)
    assert parse_stages("lm_text,mel") == ["mel", "lm_text"]
    with pytest.raises(ValueError, match="unknown stage"):
        parse_stages("mel,encoder")


# ----------------------------------------------------------------------------- mel stage, demo render
N_DEMO = 4      # demo sources per split: 96 clips per category and split


@pytest.fixture(scope="module")
def demo_hub(tmp_path_factory):
    from generation.hub import build_hub
    from generation.render import render

    root = tmp_path_factory.mktemp("probe_demo")
    cats = ["volume", "noise"]
    render("demo", root / "test", categories=cats, n_sources=N_DEMO, jobs=1, progress=False)
    render("demo", root / "train", split="train", categories=cats, n_sources=N_DEMO, jobs=1, progress=False)
    build_hub([root / "test", root / "train"], root / "hub", allow_partial=True)
    return root / "hub"


def test_mel_stage_on_demo_render_is_well_above_chance(demo_hub, tmp_path, monkeypatch):
    out = tmp_path / "out"
    res = run_probe(data=str(demo_hub), out=out, stages="mel", progress=False)
    by_cat = {r["category"]: r for r in res["rows"]}
    assert set(by_cat) == {"volume", "noise"} and all(r["stage"] == "mel" for r in res["rows"])
    print("mel probe accuracy:", {c: (r["accuracy"], r["balanced_accuracy"]) for c, r in by_cat.items()})
    for r in by_cat.values():
        assert r["accuracy"] >= 0.8 and r["balanced_accuracy"] >= 0.8
        assert r["n_train"] == r["n_test"] == N_DEMO * vocalgrad.CONDITIONS_PER_CATEGORY
        assert r["dim"] == 16 * 128
    assert res["computed"]["mel"] == 4 * N_DEMO * vocalgrad.CONDITIONS_PER_CATEGORY
    with open(out / "probe.csv") as fh:
        table = list(csv.DictReader(fh))
    assert [t["category"] for t in table] == ["volume", "noise"]
    assert float(table[0]["accuracy"]) == pytest.approx(by_cat["volume"]["accuracy"])
    md = (out / "probe.md").read_text()
    assert "| log-mel |" in md and "volume" in md
    assert (out / "probe_stages.png").stat().st_size > 1000
    assert not (out / "probe_layers.png").exists()          # no layered stage probed

    # second run: everything from the cache, same numbers, no audio decoded
    from analysis.probe import data as data_mod

    monkeypatch.setattr(data_mod.ClipSet, "audio", lambda self, i: pytest.fail("audio decoded on a cached run"))
    again = run_probe(data=str(demo_hub), out=out, stages="mel", progress=False, plots=False)
    assert again["computed"] == {"mel": 0, "model": 0}
    assert [r["accuracy"] for r in again["rows"]] == [r["accuracy"] for r in res["rows"]]
    (meta_path,) = (out / "cache").glob("mel-*/test/volume/mel.json")
    meta = json.loads(meta_path.read_text())
    assert meta["clips"] == N_DEMO * vocalgrad.CONDITIONS_PER_CATEGORY and meta["dtype"] == "float16"


# ----------------------------------------------------------------------------- CLI and errors
def test_importing_the_probe_cli_does_not_import_torch():
    import subprocess
    import sys

    code = ("import sys, vocalgrad_commands.cli as c; c.build_parser(); import analysis.probe.run; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(__import__("pathlib").Path(__file__).parents[1]))


def test_cli_mel_only_and_clear_errors(tmp_path, capsys):
    from _probe_helpers import make_probe_hub

    from vocalgrad_commands.cli import main

    small = make_probe_hub(tmp_path / "small")
    rc = main(["probe", "--data", str(small), "--stages", "mel", "--categories", "volume",
               "--out", str(tmp_path / "o"), "--quiet", "--no-plots", "--epochs", "5"])
    assert rc == 0
    assert "volume mel" in capsys.readouterr().out
    assert (tmp_path / "o" / "probe.csv").is_file()

    rc = main(["probe", "--data", str(small), "--stages", "mel,lm_text", "--out", str(tmp_path / "o2")])
    assert rc == 2 and "need --model" in capsys.readouterr().err

    rc = main(["probe", "--data", str(tmp_path / "nothing"), "--stages", "mel", "--categories", "volume",
               "--out", str(tmp_path / "o3"), "--quiet"])
    assert rc == 2 and "no such folder" in capsys.readouterr().err

    import shutil

    no_train = small
    shutil.rmtree(no_train / "train")
    rc = main(["probe", "--data", str(no_train), "--stages", "mel", "--out", str(tmp_path / "o4"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "train" in err and "vocalgrad hub TEST_RENDER TRAIN_RENDER" in err
