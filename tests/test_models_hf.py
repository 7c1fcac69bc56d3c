"""vocalgrad-hf with tiny random Qwen2-Audio and Audio Flamingo 3 models built offline."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _harness_helpers import build_tiny_audio_flamingo3, build_tiny_qwen2_audio  # noqa: E402
from _harness_helpers import tone_clip as clip  # noqa: E402

from harness_tasks.models.base import Query  # noqa: E402
from harness_tasks.models.hf import HFAudioLM  # noqa: E402
from harness_tasks.parsing import classify_answer  # noqa: E402

PROMPT = 'Does the voice pitch increase or decrease over time?\n\nAnswer with only one word: "increase" or "decrease".'
BUILDERS = {"qwen2_audio": build_tiny_qwen2_audio, "audioflamingo3": build_tiny_audio_flamingo3}


@pytest.fixture(scope="module", params=list(BUILDERS))
def model_dir(request, tmp_path_factory):
    return BUILDERS[request.param](tmp_path_factory.mktemp(request.param))


@pytest.fixture(scope="module")
def lm(model_dir):
    return HFAudioLM(pretrained=str(model_dir), device="cpu", dtype="float32", batch_size=1)


class Req:
    def __init__(self, audio, max_toks=8, prompt=PROMPT):
        self.args = (prompt, {"until": [], "max_gen_toks": max_toks, "do_sample": False}, {"audio": [audio]})


def test_audio_reaches_the_model(lm):
    a, b = clip(0), clip(1)
    la = lm.first_token_logits([Query(PROMPT, [a])])
    lb = lm.first_token_logits([Query(PROMPT, [b])])
    la2 = lm.first_token_logits([Query(PROMPT, [a])])
    assert float((la - la2).abs().max()) == 0.0
    assert float((la - lb).abs().max()) > 1e-3


def test_prompt_order_text_first_by_default_and_audio_first_option(lm):
    from transformers import AutoProcessor  # noqa: F401  (the processor was reloaded from disk)

    y = np.zeros(16000, dtype=np.float32)
    text = lm.processor.apply_chat_template([lm.conversation("QUESTION", [y])], tokenize=False,
                                            add_generation_prompt=True)[0]
    audio_tok = "<sound>" if "<sound>" in text else "<|AUDIO|>"
    lm.audio_first = True
    try:
        text2 = lm.processor.apply_chat_template([lm.conversation("QUESTION", [y])], tokenize=False,
                                                 add_generation_prompt=True)[0]
    finally:
        lm.audio_first = False
    assert text2.index(audio_tok) < text2.index("QUESTION") and text2 != text
    if audio_tok == "<sound>":
        # Audio Flamingo 3's template writes a turn's clip before its text: the default (one
        # turn, as the authors ran it) is <sound>QUESTION; audio-first gives the clip its own turn
        assert "<sound>QUESTION<|im_end|>" in text
        assert "<sound><|im_end|>\n<|im_start|>user\nQUESTION<|im_end|>" in text2
    else:
        assert text.index("QUESTION") < text.index(audio_tok)


def test_results_do_not_depend_on_batch_size(lm, model_dir):
    clips = [clip(i, seconds=s) for i, s in enumerate([1.0, 0.4, 1.5, 0.7])]
    single_lm = HFAudioLM(pretrained=str(model_dir), device="cpu", dtype="float32", batch_size=1,
                          retry_unparsed=False)
    batched_lm = HFAudioLM(pretrained=str(model_dir), device="cpu", dtype="float32", batch_size=3,
                           retry_unparsed=False)
    single = single_lm.generate_until([Req(c, max_toks=12) for c in clips], disable_tqdm=True)
    batched = batched_lm.generate_until([Req(c, max_toks=12) for c in clips], disable_tqdm=True)
    assert list(single) == list(batched) and len(set(single)) > 1
    l1 = np.concatenate([lm.first_token_logits([Query(PROMPT, [c])]).numpy() for c in clips])
    l3 = batched_lm.first_token_logits([Query(PROMPT, [c]) for c in clips]).numpy()
    np.testing.assert_allclose(l1, l3, atol=1e-4)


def test_unparsed_answers_get_one_256_token_retry(lm, monkeypatch):
    budgets = []
    real = lm.model.generate

    def spy(**kw):
        budgets.append(kw["generation_config"].max_new_tokens)
        assert kw["generation_config"].do_sample is False
        return real(**kw)

    monkeypatch.setattr(lm.model, "generate", spy)
    out = lm.generate_until([Req(clip(3), max_toks=2)], disable_tqdm=True)
    # a random byte-level model practically never says exactly one direction word
    assert classify_answer(out[0])[1] != "parsed"
    assert budgets == [2, 256] and out[0].retried
    budgets.clear()
    lm.retry_unparsed = False
    try:
        lm.generate_until([Req(clip(3), max_toks=2)], disable_tqdm=True)
    finally:
        lm.retry_unparsed = True
    assert budgets == [2]


def test_clear_errors(model_dir, tmp_path):
    with pytest.raises(ValueError, match="not a transformers class"):
        HFAudioLM(pretrained=str(model_dir), model_class="NoSuchModel", device="cpu")
    with pytest.raises(TypeError, match="unknown model argument"):
        HFAudioLM(pretrained=str(model_dir), device="cpu", temprature=0)


def test_through_lm_eval_on_a_hub_folder(lm, tmp_path, monkeypatch):
    import lm_eval
    import lm_eval.evaluator
    from lm_eval.tasks import TaskManager

    import harness_tasks
    from _harness_helpers import make_hub_folder

    hub = make_hub_folder(tmp_path / "hub", categories=("pitch",))
    monkeypatch.setenv("VOCALGRAD_DATASET", str(hub))
    monkeypatch.setattr(lm_eval.evaluator, "add_env_info", lambda results: None)
    lm.retry_unparsed = False
    try:
        res = lm_eval.simple_evaluate(
            model=lm, tasks=["vocalgrad_pitch"], gen_kwargs="max_gen_toks=4", log_samples=True, bootstrap_iters=0,
            task_manager=TaskManager(include_path=harness_tasks.TASK_DIR, include_defaults=False))
    finally:
        lm.retry_unparsed = True
    r = res["results"]["vocalgrad_pitch"]
    assert 0.0 <= r["acc,none"] <= 1.0 and r["unparsed_rate,none"] >= 0.0
    samples = res["samples"]["vocalgrad_pitch"]
    assert len(samples) == 2 and all(isinstance(s["resps"][0][0], str) for s in samples)
    assert samples[0]["arguments"][0][1]["max_gen_toks"] == 4
