"""vocalgrad-hf over the model layer: bf16, scoring=logits|both (acc_logit), OOM halving,
undecodable clips, peft adapters, system prompt (tiny random Qwen2-Audio, offline)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _harness_helpers import build_tiny_qwen2_audio, make_hub_folder, offline_lm_eval, run_lm_eval  # noqa: E402
from _harness_helpers import tone_clip as clip  # noqa: E402

from harness_tasks.logit_answers import split_logit_answer  # noqa: E402
from harness_tasks.models.base import Query  # noqa: E402
from harness_tasks.models.hf import HFAudioLM  # noqa: E402
from harness_tasks.parsing import classify_answer, is_error_answer  # noqa: E402

PROMPT = 'Does the voice pitch increase or decrease over time?\n\nAnswer with only one word: "increase" or "decrease".'


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_qwen2_audio(tmp_path_factory.mktemp("qwen2_audio"))


class Req:
    def __init__(self, audio, max_toks=6, prompt=PROMPT, words=None):
        gen = {"until": [], "max_gen_toks": max_toks, "do_sample": False}
        if words:
            gen["vocalgrad_answer_words"] = words
        self.args = (prompt, gen, {"audio": [audio]})


def hf(model_dir, **kw):
    kw.setdefault("answer_log", "none")
    try:
        return HFAudioLM(pretrained=str(model_dir), device="cpu", **kw)
    except TypeError as exc:          # a base without the answer log
        if "answer_log" not in str(exc):
            raise
        kw.pop("answer_log")
        return HFAudioLM(pretrained=str(model_dir), device="cpu", **kw)


def test_bfloat16_runs_and_matches_float32_choice(model_dir):
    reqs = [Req(clip(i)) for i in range(4)]
    a32 = hf(model_dir, dtype="float32", scoring="logits").generate_until(reqs, disable_tqdm=True)
    a16 = hf(model_dir, dtype="bfloat16", scoring="logits").generate_until(reqs, disable_tqdm=True)
    assert [split_logit_answer(a)[1] for a in a32] == [split_logit_answer(a)[1] for a in a16]
    gen16 = hf(model_dir, dtype="bfloat16", retry_unparsed=False).generate_until(reqs[:2], disable_tqdm=True)
    assert all(isinstance(a, str) and not is_error_answer(a) for a in gen16)


def test_logit_scoring_picks_the_higher_first_token_logprob_without_generating(model_dir, monkeypatch):
    lm = hf(model_dir, dtype="float32", scoring="logits", batch_size=2)
    monkeypatch.setattr(lm.lm, "generate", lambda *a, **k: pytest.fail("generated with scoring=logits"))
    clips = [clip(i, s) for i, s in enumerate([1.0, 0.5, 1.2])]
    answers = lm.generate_until([Req(c) for c in clips], disable_tqdm=True)
    for c, a in zip(clips, answers):
        text, label, scores = split_logit_answer(a)
        assert text == label and classify_answer(a)[0] == label     # the tag is invisible to the parser
        b = lm.prepare([Query(PROMPT, [c])])
        lp = lm.lm.answer_logprobs(b, ["increase", "decrease"])[0]
        assert scores == pytest.approx({"increase": float(lp[0]), "decrease": float(lp[1])}, abs=2e-4)
        assert label == ("increase" if lp[0] > lp[1] else "decrease")
    # task answer words (paraphrase, yes/no) are scored by their own first word
    a = lm.generate_until([Req(clips[0], words={"yes": ["yes"], "no": ["no"]})], disable_tqdm=True)[0]
    assert split_logit_answer(a)[1] in ("yes", "no") and set(split_logit_answer(a)[2]) == {"yes", "no"}


def test_both_keeps_the_generated_text_and_adds_the_logit_choice(model_dir):
    reqs = [Req(clip(i)) for i in range(3)]
    gen = hf(model_dir, dtype="float32", retry_unparsed=False).generate_until(reqs, disable_tqdm=True)
    both = hf(model_dir, dtype="float32", retry_unparsed=False, scoring="both").generate_until(reqs, disable_tqdm=True)
    logit = hf(model_dir, dtype="float32", scoring="logits").generate_until(reqs, disable_tqdm=True)
    assert [split_logit_answer(a)[0] for a in both] == list(gen)
    assert [split_logit_answer(a)[1] for a in both] == [split_logit_answer(a)[1] for a in logit]


def test_lm_eval_reports_acc_logit_beside_generation_accuracy(model_dir, tmp_path, monkeypatch):
    hub = make_hub_folder(tmp_path / "hub", categories=("pitch",), sources=3)
    monkeypatch.setenv("VOCALGRAD_DATASET", str(hub))
    offline_lm_eval(monkeypatch)
    out = {}
    for scoring in ("generate", "logits", "both"):
        lm = hf(model_dir, dtype="float32", scoring=scoring, retry_unparsed=False)
        res = run_lm_eval(lm, ["vocalgrad_pitch"], gen_kwargs="max_gen_toks=4", log_samples=True)
        out[scoring] = (res["results"]["vocalgrad_pitch"], res["samples"]["vocalgrad_pitch"])
    gen, logits, both = (out[k][0] for k in ("generate", "logits", "both"))
    assert math.isnan(gen["acc_logit,none"]) and math.isnan(gen["increase_ratio_logit,none"])
    samples = out["logits"][1]
    labels = [split_logit_answer(s["resps"][0][0])[1] for s in samples]
    golds = [s["target"] for s in samples]
    expect = sum(a == g for a, g in zip(labels, golds)) / len(golds)
    assert logits["acc_logit,none"] == pytest.approx(expect) == pytest.approx(logits["acc,none"])
    assert logits["increase_ratio_logit,none"] == pytest.approx(labels.count("increase") / len(labels))
    assert logits["unparsed_rate,none"] == 0.0
    assert both["acc_logit,none"] == pytest.approx(logits["acc_logit,none"])
    assert both["acc,none"] == pytest.approx(gen["acc,none"])
    print(f"\ntiny Qwen2-Audio, {len(golds)} clips: generation acc {gen['acc,none']:.3f} "
          f"(unparsed {gen['unparsed_rate,none']:.3f}); logits acc_logit {logits['acc_logit,none']:.3f} "
          f"increase_ratio_logit {logits['increase_ratio_logit,none']:.3f}")


def test_cuda_oom_halves_the_batch_then_gives_error_answers(model_dir, monkeypatch):
    lm = hf(model_dir, dtype="float32", batch_size=4, retry_unparsed=False)
    reqs = [Req(clip(i)) for i in range(4)]
    expected = hf(model_dir, dtype="float32", retry_unparsed=False).generate_until(reqs, disable_tqdm=True)
    real = lm.lm.generate
    sizes = []

    def small_only(batch, **kw):
        sizes.append(batch["input_ids"].shape[0])
        if batch["input_ids"].shape[0] > 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(batch, **kw)

    monkeypatch.setattr(lm.lm, "generate", small_only)
    assert list(lm.generate_until(reqs, disable_tqdm=True)) == list(expected)
    assert sizes == [4, 2, 1, 1, 2, 1, 1]

    def never(batch, **kw):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    monkeypatch.setattr(lm.lm, "generate", never)
    out = lm.generate_until(reqs[:2], disable_tqdm=True)
    assert all(is_error_answer(a) and "out of memory" in a for a in out)
    assert classify_answer(out[0]) == (None, "error")

    def one_bad_clip(batch, **kw):            # any other failure: isolated to the clip that causes it
        if bad_n in lm.lm.audio_positions(batch).sum(1).tolist():
            raise RuntimeError("shape mismatch in the audio projector")
        return real(batch, **kw)

    bad = Req(clip(9, seconds=1.6))
    bad_n = int(lm.lm.audio_positions(lm.prepare([lm._to_query(0, bad)])).sum())
    monkeypatch.setattr(lm.lm, "generate", one_bad_clip)
    out = lm.generate_until(reqs[:3] + [bad], disable_tqdm=True)
    assert list(out[:3]) == list(expected[:3]) and is_error_answer(out[3]) and "projector" in out[3]


def test_undecodable_clip_becomes_an_error_answer(model_dir):
    class Broken(dict):
        clip_id = "broken"

        def __getitem__(self, key):
            raise RuntimeError("FLAC decoder: lost sync")

    lm = hf(model_dir, dtype="float32", batch_size=3, retry_unparsed=False)
    out = lm.generate_until([Req(clip(0)), Req(Broken()), Req(clip(1))], disable_tqdm=True)
    assert is_error_answer(out[1]) and "broken" in out[1] and "lost sync" in out[1]
    assert not is_error_answer(out[0]) and not is_error_answer(out[2])


def test_peft_adapter_system_prompt_and_provenance(model_dir, tmp_path):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM  # noqa: F401
    from transformers import Qwen2AudioForConditionalGeneration

    base = Qwen2AudioForConditionalGeneration.from_pretrained(model_dir)
    peft_model = get_peft_model(base, LoraConfig(r=2, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    peft_model.save_pretrained(tmp_path / "adapter")
    plain = hf(model_dir, dtype="float32")
    tuned = hf(model_dir, dtype="float32", peft=str(tmp_path / "adapter"))
    q = [Query(PROMPT, [clip(0)])]
    assert float((plain.first_token_logits(q) - tuned.first_token_logits(q)).abs().max()) > 1e-3
    assert tuned.lm.provenance()["peft"] == str(tmp_path / "adapter")
    pinned = hf(model_dir, dtype="float32", revision="main")
    assert pinned.lm.provenance()["revision"] == "main" and pinned.identity()["provenance"]["revision"] == "main"
    sys_lm = hf(model_dir, dtype="float32", system_prompt="You are a careful listener.")
    ids = sys_lm.prepare(q)["input_ids"][0]
    assert "You are a careful listener." in sys_lm.tokenizer.decode(ids)
    assert "careful listener" not in plain.tokenizer.decode(plain.prepare(q)["input_ids"][0])
    with pytest.raises(ValueError, match="scoring must be one of"):
        hf(model_dir, scoring="vibes")


# ----------------------------------------------------------------------------- answer-word token ids
def _bpe_tokenizer():
    """A byte-level BPE tokenizer built offline whose merges make " increase" ONE token but
    "increase" two ("incr" + "ease"), and the reverse for decrease: "decrease" one token,
    " decrease" the bare space token "Ġ" + "decrease"."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import PreTrainedTokenizerFast

    merges = [("i", "n"), ("in", "c"), ("inc", "r"), ("e", "a"), ("ea", "s"), ("eas", "e"), ("Ġ", "incr"),
              ("Ġincr", "ease"), ("d", "e"), ("de", "c"), ("dec", "r"), ("decr", "ease")]
    vocab = {ch: i for i, ch in enumerate(sorted(ByteLevel.alphabet()))}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tok), vocab


def test_answer_word_ids_on_a_bpe_tokenizer_with_and_without_the_leading_space():
    from harness_tasks.models.families import LoadedModel

    fast, vocab = _bpe_tokenizer()
    ids = lambda text: fast(text, add_special_tokens=False)["input_ids"]        # noqa: E731
    assert ids(" increase") == [vocab["Ġincrease"]] and ids("increase") == [vocab["incr"], vocab["ease"]]
    assert ids("decrease") == [vocab["decrease"]] and ids(" decrease") == [vocab["Ġ"], vocab["decrease"]]
    lm = LoadedModel.__new__(LoadedModel)          # word ids need only the tokenizer
    lm.tokenizer = fast
    # bare form after the prompt: its first token; the leading-space form: its first token
    # unless that token is the space alone (it starts every spaced word)
    assert lm.word_token_ids("increase") == [vocab["incr"], vocab["Ġincrease"]]
    assert lm.word_token_ids("decrease") == [vocab["decrease"]]
    logits = torch.zeros(3, len(vocab))
    logits[0, vocab["Ġincrease"]] = 5.0            # the spaced single token
    logits[1, vocab["incr"]] = 5.0                 # the bare form's first token
    logits[2, vocab["decrease"]] = 5.0
    logits[:, vocab["Ġ"]] = 4.0                    # a bare space says nothing about the word
    lp = lm.answer_logprobs(None, ["increase", "decrease"], logits=logits)
    full = torch.log_softmax(logits, -1)
    assert torch.allclose(lp[:, 0], full[:, [vocab["incr"], vocab["Ġincrease"]]].max(dim=1).values)
    assert torch.allclose(lp[:, 1], full[:, vocab["decrease"]])
    assert lp.argmax(dim=1).tolist() == [0, 0, 1]
