"""vocalgrad probe with tiny random Qwen2-Audio and Audio Flamingo 3 models (offline, CPU)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("lm_eval")

from _probe_helpers import ARCHS, TINY_LAYERS, build_tiny, make_probe_hub  # noqa: E402

from analysis.probe.model_features import ModelFeatures, pooling_matrix  # noqa: E402
from analysis.probe.pooling import pool_segments  # noqa: E402
from analysis.probe.run import run_probe  # noqa: E402

HIDDEN = 32
PROMPT = "Does the volume increase or decrease over time?"


def tone(seconds: float, seed: int, sr: int = 48000) -> tuple[np.ndarray, int]:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    y = 0.3 * np.sin(2 * np.pi * (180 + 60 * seed) * t) * np.linspace(0.2, 1, t.size)
    return (y + 0.02 * rng.standard_normal(t.size)).astype(np.float32), sr


@pytest.fixture(scope="module", params=ARCHS)
def model_dir(request, tmp_path_factory):
    return build_tiny(request.param, tmp_path_factory.mktemp(request.param))


@pytest.fixture(scope="module")
def mf(model_dir):
    return ModelFeatures(str(model_dir), device="cpu", dtype="float32")


WANTED = [("pre_lm", None), ("lm_audio", 1), ("lm_audio", 2), ("lm_text", 1), ("lm_text", 2)]


def test_pooling_matrix_matches_numpy_pooling_of_the_masked_positions():
    import torch

    rng = np.random.default_rng(0)
    h = rng.standard_normal((2, 60, 5)).astype(np.float32)
    mask = np.zeros((2, 60), bool)
    mask[0, 30:42] = True          # 12 positions (< 16 segments), shifted right as with left padding
    mask[1, 5:42] = True           # 37 positions
    p = pooling_matrix(torch.from_numpy(mask))
    got = torch.bmm(p, torch.from_numpy(h)).flatten(1).numpy()
    for b in range(2):
        np.testing.assert_allclose(got[b], pool_segments(h[b][mask[b]]), rtol=1e-5, atol=1e-6)


def test_feature_shapes(mf):
    assert mf.n_layers == TINY_LAYERS
    feats = mf.features([PROMPT] * 2, [tone(0.5, 0), tone(1.5, 1)], wanted=WANTED)
    assert set(feats) == set(WANTED)
    for (stage, _), arr in feats.items():
        assert arr.shape == ((2, HIDDEN) if stage == "lm_text" else (2, 16 * HIDDEN))
        assert np.isfinite(arr).all()
    assert not np.allclose(feats[("lm_audio", 1)], feats[("lm_audio", 2)])


def test_audio_positions_follow_left_padding(mf):
    audios = [tone(0.5, 0), tone(1.5, 1)]
    inputs = mf.prepare([PROMPT] * 2, audios)
    hs, mask = mf.hidden_states(inputs)
    counts = mask.sum(dim=1).tolist()
    assert counts[0] < counts[1] and abs(counts[1] / counts[0] - 3) < 0.3     # ~25 tokens per second
    first = mask.int().argmax(dim=1).tolist()
    assert first[0] - first[1] == counts[1] - counts[0]                       # short row shifted by its padding
    # audio positions of the LM input hold the projector output, not the placeholder's embedding
    emb = mf.lm.model.get_input_embeddings().weight[mf.audio_token_id].detach()
    assert float((hs[0][mask] - emb).abs().max()) > 1e-3
    # every row in a padded batch equals the same clip run alone
    together = mf.features([PROMPT] * 2, audios, wanted=WANTED)
    for i, a in enumerate(audios):
        alone = mf.features([PROMPT], [a], wanted=WANTED)
        for k in WANTED:
            np.testing.assert_allclose(together[k][i], alone[k][0], atol=2e-4, rtol=1e-3, err_msg=str(k))


def test_same_prompt_and_message_order_as_the_harness(model_dir):
    text_first = ModelFeatures(str(model_dir), device="cpu", dtype="float32")
    audio_first = ModelFeatures(str(model_dir), device="cpu", dtype="float32", audio_first=True)
    rows = []
    for m, prompt_before_audio in ((text_first, True), (audio_first, False)):
        ids = m.prepare([PROMPT], [tone(0.5, 0)])["input_ids"][0]
        rows.append(ids.tolist())
        first_audio = int((ids == m.audio_token_id).int().argmax())
        before = m.lm.tokenizer.decode(ids[:first_audio], skip_special_tokens=True)
        if m.lm.family == "audioflamingo3":
            # its chat template writes a turn's clip before the turn's text, whatever the order
            # (docs/model-layer.md); audio-first puts the question in a turn of its own
            assert PROMPT not in before
        else:
            assert (PROMPT in before) == prompt_before_audio
    assert rows[0] != rows[1]


def test_pipeline_caches_and_resumes(model_dir, tmp_path, monkeypatch):
    hub = make_probe_hub(tmp_path / "hub")            # 4 test + 6 train clips per category
    out = tmp_path / "out"
    kw = dict(data=str(hub), out=out, model=str(model_dir), device="cpu", dtype="float32", batch_size=2,
              epochs=20, progress=False, plots=False)

    # interrupted after the first batch of the first (category, split)
    calls = {"n": 0}
    real = ModelFeatures.features

    def flaky(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(self, *a, **k)

    monkeypatch.setattr(ModelFeatures, "features", flaky)
    with pytest.raises(KeyboardInterrupt):
        run_probe(**kw, categories=["volume"], layers="all")
    monkeypatch.setattr(ModelFeatures, "features", real)

    res = run_probe(**kw, categories=["volume", "noise"], layers="all")
    # volume/train resumed after its first batch of 2 clips; everything else computed once
    assert res["computed"]["model"] == (6 - 2) + 4 + 6 + 4
    assert res["computed"]["mel"] == 20 - 6          # volume/train mel finished before the model pass
    rows = res["rows"]
    assert {(r["stage"], r["layer"]) for r in rows} == {("mel", None), ("pre_lm", None), ("lm_audio", 1),
                                                       ("lm_audio", 2), ("lm_text", 1), ("lm_text", 2)}
    assert len(rows) == 2 * 6
    assert all(0 <= r["accuracy"] <= 1 and r["n_train"] == 6 and r["n_test"] == 4 for r in rows)
    assert next(r for r in rows if r["stage"] == "lm_audio")["dim"] == 16 * HIDDEN

    # second run: nothing computed and the model is never loaded
    monkeypatch.setattr(ModelFeatures, "__init__", lambda *a, **k: pytest.fail("model loaded on a cached run"))
    again = run_probe(**kw, categories=["volume", "noise"], layers="all")
    assert again["computed"] == {"mel": 0, "model": 0}
    assert [r["accuracy"] for r in again["rows"]] == [r["accuracy"] for r in rows]

    with pytest.raises(ValueError, match="out of range"):
        run_probe(**kw, categories=["volume"], layers="3")
