"""The model layer (harness_tasks.models.families) on tiny random checkpoints of each family,
in float32 and bfloat16 (CPU)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _family_helpers import BUILDERS  # noqa: E402

from harness_tasks.models.families import FAMILIES, Item, load  # noqa: E402

PROMPT = 'Does the voice pitch increase or decrease over time?\nAnswer with one word: "increase" or "decrease".'
WORDS = ("increase", "decrease")


def tone(seed: int, seconds: float = 1.0, sr: int = 48000) -> tuple[np.ndarray, int]:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    y = 0.3 * np.sin(2 * np.pi * (150 + 100 * seed) * t) + 0.05 * rng.standard_normal(t.size)
    return y.astype(np.float32), sr


@pytest.fixture(scope="module", params=list(BUILDERS))
def folder(request, tmp_path_factory):
    return request.param, BUILDERS[request.param](tmp_path_factory.mktemp(request.param))


_CACHE: dict = {}


def loaded(folder, dtype):
    key = (str(folder[1]), dtype)
    if key not in _CACHE:
        _CACHE[key] = load(str(folder[1]), dtype=dtype, device="cpu")
    return _CACHE[key]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_family_detected_inputs_cast_and_audio_heard(folder, dtype):
    name, _ = folder
    lm = loaded(folder, dtype)
    assert lm.family == name and name in FAMILIES
    assert lm.provenance()["dtype"] == dtype and lm.provenance()["family"] == name
    b = lm.batch([Item(PROMPT, [tone(0)])])
    floats = [k for k, v in b.items() if v.is_floating_point()]
    assert floats and all(b[k].dtype == getattr(torch, dtype) for k in floats)
    assert all(v.device.type == "cpu" for v in b.values())
    la = lm.logits(b)
    lb = lm.logits(lm.batch([Item(PROMPT, [tone(1)])]))
    assert float((la - lm.logits(lm.batch([Item(PROMPT, [tone(0)])]))).abs().max()) == 0.0
    assert float((la - lb).abs().max()) > 1e-2          # only the clip changed


def test_bfloat16_and_float32_agree_in_argmax(folder):
    items = [Item(PROMPT, [tone(i)]) for i in range(3)]
    l32 = loaded(folder, "float32").logits(loaded(folder, "float32").batch(items))
    l16 = loaded(folder, "bfloat16").logits(loaded(folder, "bfloat16").batch(items))
    assert torch.equal(l32.argmax(-1), l16.argmax(-1))
    lp32 = loaded(folder, "float32").answer_logprobs(loaded(folder, "float32").batch(items), WORDS)
    lp16 = loaded(folder, "bfloat16").answer_logprobs(loaded(folder, "bfloat16").batch(items), WORDS)
    assert float((lp32 - lp16).abs().max()) < 0.1


def test_left_padded_batch_of_three_equals_single_runs(folder):
    lm = loaded(folder, "float32")
    seconds = [1.0, 1.0, 1.0] if lm.length_sensitive else [1.0, 0.4, 1.5]
    items = [Item(PROMPT + "?" * i, [tone(i, s)]) for i, s in enumerate(seconds)]
    b = lm.batch(items)
    assert bool((b["attention_mask"][:, 0] == 0).any())               # padded on the left
    together = lm.logits(b)
    alone = torch.cat([lm.logits(lm.batch([it])) for it in items])
    diff = float((together - alone).abs().max())
    print(f"\n{lm.family} padded-batch max abs diff {diff:.2e}")
    assert diff < 1e-4
    pos = lm.audio_positions(b)
    for row, it in enumerate(items):
        single = lm.batch([it])
        assert int(pos[row].sum()) == int(lm.audio_positions(single)[0].sum()) > 0
    assert lm.generate(b, max_new_tokens=5) == [lm.generate(lm.batch([it]), max_new_tokens=5)[0] for it in items]


def test_audio_resampled_to_processor_rate_mono_and_logged(folder, caplog):
    lm = loaded(folder, "float32")
    y, sr = tone(2, 0.8, 44100)
    stereo = np.stack([y, y])                                    # (channels, samples)
    with caplog.at_level(logging.DEBUG, logger="vocalgrad"):
        b = lm.batch([Item(PROMPT, [(stereo, sr)])])
    info = lm.last_audio[0]
    assert (info.source_rate, info.rate, info.channels) == (44100, lm.sampling_rate, 2)
    assert abs(info.seconds - 0.8) < 1e-3
    assert "44100 Hz x 2 ch" in caplog.text and "0.800 s" in caplog.text
    mono = lm.batch([Item(PROMPT, [(y, sr)])])
    assert torch.equal(lm.logits(b), lm.logits(mono))


def test_targets_give_labels_on_the_answer_tokens_only(folder):
    lm = loaded(folder, "float32")
    b = lm.batch([Item(PROMPT, [tone(0)], target="increase"), Item(PROMPT + "!!", [tone(1, 0.5)], target="no")])
    labels = b["labels"]
    for row, text in enumerate(["increase", "no"]):
        kept = b["input_ids"][row][labels[row] != -100]
        assert lm.tokenizer.decode(kept, skip_special_tokens=True) == text
        assert bool((labels[row, -len(kept):] != -100).all())
    loss = lm.model(**b).loss
    assert torch.isfinite(loss) and float(loss.detach()) > 0
    with pytest.raises(ValueError, match="every item"):
        lm.batch([Item(PROMPT, [tone(0)], target="x"), Item(PROMPT, [tone(0)])])


def test_answer_logprobs_and_hidden_states(folder):
    lm = loaded(folder, "float32")
    b = lm.batch([Item(PROMPT, [tone(0)]), Item(PROMPT, [tone(1, 0.6)])])
    lp = lm.answer_logprobs(b, WORDS)
    full = torch.log_softmax(lm.logits(b), -1)
    for j, w in enumerate(WORDS):
        ids = lm.word_token_ids(w)
        assert torch.allclose(lp[:, j], full[:, ids].max(dim=1).values)
    hs = lm.hidden_states(b)
    n = lm.model.config.get_text_config().num_hidden_layers
    assert len(hs) == n + 1 and hs[-1].shape[:2] == b["input_ids"].shape
