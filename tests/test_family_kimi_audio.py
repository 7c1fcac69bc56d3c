"""The ``kimi_audio`` family (harness_tasks/models/families/kimi_audio.py) against a TEST DOUBLE.

The test double stands in for ``kimia_infer`` (MoonshotAI/Kimi-Audio's inference package), which
is not on PyPI and not installable here. It mimics only the API surface that the family calls,
with a tiny random torch model behind it, written from the package's facts (two token streams of
equal length; role, media, blank and end-of-stream tokens; discrete audio tokens at 12.5 per
second offset by ``kimia_token_offset``; one continuous "whisper" feature per clip entering at the
``is_continuous_mask`` positions; one sequence per forward; ``logits = (audio, text)``), none of
its code. Passing tests against it say the glue is consistent, not that the real model works.

:func:`write_fake` writes the package and a checkpoint folder; the tests put the package folder on
``sys.path``. No Kimi-Audio weights, no GPU: the real model is not run here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import _finetune_helpers as fh
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("soundfile")
pytest.importorskip("peft")

import vocalgrad  # noqa: E402
from harness_tasks.models import families  # noqa: E402
from harness_tasks.models.families import Item  # noqa: E402
from harness_tasks.models.families import kimi_audio as kimi_family  # noqa: E402
from harness_tasks.models.families.kimi_audio import KimiLoadedModel  # noqa: E402

_real_check = kimi_family.check_transformers

from _kimi_double import write_fake  # noqa: E402


# ---------------------------------------------------------------------------- tests

PROMPT = vocalgrad.default_prompt("volume")
WORDS = ("increase", "decrease")
ASSISTANT, BLANK, EOS, MEDIA_BEGIN, MEDIA_END = 303, 300, 301, 304, 305


def tone(seconds: float, seed: int = 0, sr: int = 16000, rise: bool = True):
    t = np.arange(int(seconds * sr)) / sr
    g = t / t[-1] if rise else 1 - t / t[-1]
    y = 0.3 * np.sin(2 * np.pi * (200 + 50 * seed) * t) * 10 ** ((-20 + 20 * g) / 20)
    return y.astype(np.float32), sr


@pytest.fixture(autouse=True)
def _double_runs_under_any_transformers(monkeypatch):
    """The double's model is ours, not the checkpoint's code that needs transformers < 5: the range
    check (tested on its own below) is switched off for it."""
    monkeypatch.setattr(kimi_family, "check_transformers", lambda version=None: None)


def test_the_family_states_and_checks_the_transformers_range_of_kimis_model_code():
    import transformers

    assert kimi_family.TRANSFORMERS_RANGE == (">=4.34.1", "<5")
    check = _real_check
    check("4.57.6")
    check("4.34.1")
    for bad in ("5.0.0", transformers.__version__ if transformers.__version__.startswith("5") else "5.24.0"):
        with pytest.raises(kimi_family.KimiApiError) as err:
            check(bad)
        msg = str(err.value)
        assert "\n" not in msg and f"transformers {bad} is installed" in msg and "<5" in msg
        assert "kimi_audio" in msg and "4.57.6" in msg


def test_loading_under_transformers_5_stops_before_the_model_loads(fake, monkeypatch):
    import transformers

    monkeypatch.syspath_prepend(str(fake[0]))
    monkeypatch.setattr(kimi_family, "check_transformers", _real_check)
    monkeypatch.setattr(transformers, "__version__", "5.24.0")
    with pytest.raises(kimi_family.KimiApiError, match="transformers 5.24.0 is installed"):
        families.load(str(fake[1]), device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    return write_fake(tmp_path_factory.mktemp("kimi"))


@pytest.fixture
def lm(fake, monkeypatch):
    monkeypatch.syspath_prepend(str(fake[0]))
    return families.load(str(fake[1]), device="cpu", dtype="float32")


def _drop_kimia(monkeypatch):
    for name in [n for n in sys.modules if n == "kimia_infer" or n.startswith("kimia_infer.")]:
        monkeypatch.delitem(sys.modules, name)


@pytest.fixture
def other_double(monkeypatch):
    """Room for another double of kimia_infer: its modules are imported afresh and forgotten afterwards."""
    _drop_kimia(monkeypatch)
    yield
    for name in [n for n in sys.modules if n == "kimia_infer" or n.startswith("kimia_infer.")]:
        del sys.modules[name]


def test_without_kimia_infer_a_one_line_error_says_how_to_install(fake, monkeypatch):
    _drop_kimia(monkeypatch)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(fake[0])])
    hint = r"kimia_infer package \(not on PyPI\): git clone https://github.com/MoonshotAI/Kimi-Audio"
    with pytest.raises(ImportError, match=hint):
        families.load(str(fake[1]), device="cpu")


@pytest.mark.parametrize("variant, says", [
    ("no_output_type", r"get_prompt\(messages\) takes no output_type"),
    ("required_flag", r"also requires output_type, add_assistant_start_msg"),
    ("no_assistant_start", r"ends with audio token 306 \(the message end\), not the assistant start token"),
])
def test_an_incompatible_kimia_infer_api_is_a_one_line_error_at_load(tmp_path, monkeypatch, other_double, variant,
                                                                      says):
    from harness_tasks.models.families.kimi_audio import KimiApiError

    pkg, ckpt = write_fake(tmp_path, variant=variant)
    monkeypatch.syspath_prepend(str(pkg))
    with pytest.raises(KimiApiError, match=says) as err:
        families.load(str(ckpt), device="cpu")
    assert "\n" not in str(err.value) and "2607d515f5b7dffa1dcc7526f9f26feb48e356c4" in str(err.value)
    assert isinstance(err.value, vocalgrad.VocalGradError)


def test_a_fork_with_add_assistant_start_msg_gives_the_same_rows(tmp_path, monkeypatch, fake, other_double):
    monkeypatch.syspath_prepend(str(fake[0]))
    items = [Item(PROMPT, [tone(0.9)]), Item(PROMPT, [tone(0.9)], target="decrease")]
    want = [families.load(str(fake[1]), device="cpu", dtype="float32").batch([it]) for it in items]
    for name in [n for n in sys.modules if n == "kimia_infer" or n.startswith("kimia_infer.")]:
        del sys.modules[name]
    pkg, ckpt = write_fake(tmp_path, variant="fork")
    monkeypatch.syspath_prepend(str(pkg))
    fork = families.load(str(ckpt), device="cpu", dtype="float32")
    import inspect

    assert "add_assistant_start_msg" in inspect.signature(fork.prompt_manager.get_prompt).parameters
    for it, w in zip(items, want):
        got = fork.batch([it])
        assert sorted(got) == sorted(w)
        assert all(torch.equal(got[k], w[k]) for k in w if k != "whisper_input_feature")


def test_detected_from_the_checkpoint_config_or_by_family(fake, lm, monkeypatch, tmp_path):
    assert isinstance(lm, KimiLoadedModel) and lm.family == "kimi_audio"
    assert lm.provenance()["family"] == "kimi_audio" and lm.provenance()["dtype"] == "float32"
    from types import SimpleNamespace as NS

    fam = families.FAMILIES["kimi_audio"]
    assert families.detect_family(NS(model_type="kimi_audio")) is fam
    assert families.detect_family(NS(model_type="moonshot_kimia")) is fam
    assert fam.matches(NS(model_type=None, architectures=["MoonshotKimiaForCausalLM"]))
    assert fam.matches(NS(model_type=None, auto_map={"AutoModel": "modeling_moonshot_kimia.X"}))
    assert not fam.matches(NS(model_type="qwen2_audio"))
    # a folder whose config says nothing about Kimi still loads as Kimi with family=kimi_audio
    other = tmp_path / "plain"
    other.mkdir()
    (other / "config.json").write_text('{"model_type": "something_else"}')
    (other / "fake_kimia.json").write_text((fake[1] / "fake_kimia.json").read_text())
    assert families.load(str(other), family="kimi_audio", device="cpu").family == "kimi_audio"


def test_labels_mark_only_the_answer_tokens_and_the_text_end(lm):
    y = tone(1.2)
    prompt = lm.batch([Item(PROMPT, [y])])
    full = lm.batch([Item(PROMPT, [y], target="increase")])
    n = prompt["input_ids"].shape[1]
    assert int(prompt["input_ids"][0, -1]) == ASSISTANT            # the prompt ends at the assistant start
    # the training row is the inference prompt, then the answer
    for key in ("input_ids", "text_input_ids", "is_continuous_mask"):
        assert torch.equal(full[key][0, :n], prompt[key][0])
    lab = full["labels"][0]
    on = torch.nonzero(lab != -100).flatten().tolist()
    assert on == list(range(n, n + len("increase") + 1))           # 8 bytes + the text end token
    assert bytes(int(t) for t in lab[on[:-1]]).decode() == "increase" and int(lab[on[-1]]) == EOS
    assert len(lab) == n + len("increase") + 1                     # as Kimi's text-only generation continues
    assert torch.equal(full["text_input_ids"][0, n:], lab[n:])
    assert (full["input_ids"][0, n:] == BLANK).all() and not full["is_continuous_mask"][0, n:].any()
    assert lm.conversation(Item(PROMPT, [y], target="increase")) == [
        {"role": "user", "message_type": "text", "content": PROMPT},
        {"role": "user", "message_type": "audio", "content": "<clip 0>"},
        {"role": "assistant", "message_type": "text", "content": "increase"}]
    with pytest.raises(ValueError, match="no system turn"):
        lm.batch([Item(PROMPT, [y], system="be brief")])
    # the wrapper's loss is the cross-entropy of those tokens, predicted one position earlier
    out = lm.model(**full)
    logp = torch.log_softmax(out.logits[0].float(), -1)
    want = -torch.stack([logp[i - 1, lab[i]] for i in on]).mean()
    assert torch.allclose(out.loss, want, atol=1e-6)
    # the first answer token is predicted from the prompt's last position
    assert torch.allclose(lm.logits(prompt)[0], out.logits[0, n - 1].float(), atol=1e-5)


def test_audio_positions_are_the_discrete_audio_tokens_of_each_clip(lm):
    b = lm.batch([Item(PROMPT, [tone(1.2)]), Item(PROMPT, [tone(0.6)])])
    pos = lm.audio_positions(b)
    assert pos.sum(dim=1).tolist() == [1.2 * 16000 // 1280, 0.6 * 16000 // 1280]   # 12.5 per second
    for r in range(2):
        ids = b["input_ids"][r]
        begin = int(torch.nonzero(ids == MEDIA_BEGIN)[0])
        end = int(torch.nonzero(ids == MEDIA_END)[0])
        assert torch.nonzero(pos[r]).flatten().tolist() == list(range(begin + 1, end))
    assert [len(f) for f in b["whisper_input_feature"]] == [1, 1]
    # the clip is heard: another clip, other logits
    assert float((lm.logits(lm.batch([Item(PROMPT, [tone(1.2, rise=False)])]))
                  - lm.logits(lm.batch([Item(PROMPT, [tone(1.2)])]))).abs().max()) > 1e-4


def test_left_padded_batch_matches_single_items(lm):
    items = [Item(PROMPT, [tone(1.2, 0)]), Item(PROMPT, [tone(0.6, 1)]), Item(PROMPT, [tone(0.9, 2, rise=False)])]
    b = lm.batch(items)
    assert b["attention_mask"][1, 0] == 0 and b["attention_mask"][0].all()     # shorter rows padded on the left
    lp = lm.answer_logprobs(b, WORDS)
    hs = lm.hidden_states(b)
    assert len(hs) == lm.model.config.num_hidden_layers + 1                       # embeddings + each layer
    for r, it in enumerate(items):
        one = lm.batch([it])
        assert torch.allclose(lp[r], lm.answer_logprobs(one, WORDS)[0], atol=1e-5)
        assert torch.allclose(hs[-1][r, -1], lm.hidden_states(one)[-1][0, -1], atol=1e-5)


def test_answer_logprobs_are_the_two_words_first_tokens(lm):
    b = lm.batch([Item(PROMPT, [tone(1.0)]), Item(PROMPT, [tone(1.0, rise=False)])])
    assert lm.word_token_ids("increase") == [ord("i")] and lm.word_token_ids("decrease") == [ord("d")]
    want = torch.log_softmax(lm.logits(b), -1)[:, [ord("i"), ord("d")]]
    assert torch.allclose(lm.answer_logprobs(b, WORDS), want)


def test_generate_reads_the_text_stream_until_its_end_token(lm):
    b = lm.batch([Item(PROMPT, [tone(1.0)])])
    first = int(lm.logits(b)[0].argmax())
    got = lm.generate(b, max_new_tokens=1)[0]
    assert got == ("" if first == EOS or first >= 256 else bytes([first]).decode("utf-8", "replace"))
    alm = lm.model.alm
    norm, head = alm.model.norm, alm.get_output_embeddings()
    saved = [t.detach().clone() for t in (norm.weight, norm.bias, head.weight)]
    try:
        with torch.no_grad():
            norm.weight.zero_()
            norm.bias.fill_(1.0)                 # every position's final state: all ones
            head.weight.zero_()
            head.weight[ord("o")] = 1.0          # -> a head that always says "o"
        assert lm.generate(b, max_new_tokens=5) == ["ooooo"]
        with torch.no_grad():
            head.weight[ord("o")] = 0.5
            head.weight[EOS] = 1.0               # -> the text end token first
        assert lm.generate(b, max_new_tokens=5) == [""]
    finally:
        with torch.no_grad():
            for t, v in zip((norm.weight, norm.bias, head.weight), saved):
                t.copy_(v)


def test_vocalgrad_finetune_trains_a_kimi_adapter_that_reloads(fake, monkeypatch, tmp_path):
    from analysis.finetune.config import FinetuneConfig
    from analysis.finetune.targets import lora_targets
    from analysis.finetune.train import load_finetune_data, validation_scores
    from vocalgrad_commands.cli import main

    monkeypatch.syspath_prepend(str(fake[0]))
    hub = fh.make_volume_hub(tmp_path / "hub", train_sources=3)
    out = tmp_path / "run"
    rc = main(["finetune", "--model", str(fake[1]), "--family", "kimi_audio", "--data", str(hub), "--category",
               "volume", "--scope", "lm_head_only", "--out", str(out), "--device", "cpu", "--grad-accum", "2",
               "--val-fraction", "0.25", "--lr", "1e-2", "--quiet"])
    assert rc == 0
    res = json.loads((out / "finetune.json").read_text())
    assert res["base_model"]["family"] == "kimi_audio" and res["settings"]["family"] == "kimi_audio"
    assert res["lora"]["target_modules"] == ["alm.lm_head"] and res["steps"] >= 3
    assert all(np.isfinite(h["loss"]) for h in res["history"])
    from safetensors.torch import load_file

    tensors = load_file(str(out / "adapter" / "adapter_model.safetensors"))
    assert sorted(tensors) == ["base_model.model.alm.lm_head.lora_A.weight",
                               "base_model.model.alm.lm_head.lora_B.weight"]
    assert torch.any(tensors["base_model.model.alm.lm_head.lora_B.weight"] != 0)     # it trained
    # the saved adapter, loaded through the model layer, scores the validation clips as at the end of training
    cfg = FinetuneConfig(**{k: v for k, v in res["settings"].items()})
    data = load_finetune_data(cfg)
    adapted = families.load(str(fake[1]), family="kimi_audio", device="cpu", peft=str(out / "adapter"))
    again = validation_scores(adapted, data, data.val_rows, cfg)
    assert np.allclose(again["logprobs"], res["validation_after"]["logprobs"], atol=1e-5)
    base = families.load(str(fake[1]), device="cpu")
    assert not np.allclose(validation_scores(base, data, data.val_rows, cfg)["logprobs"], again["logprobs"])
    # all_linear: every linear of the decoder (2 layers x 6, the whisper-feature adaptor) + the text head
    names = lora_targets(base.model, "all_linear")
    assert len(names) == 14 and "alm.lm_head" in names and "alm.mimo_output" not in names
    assert len(lora_targets(base.model, "all_linear", include_audio_encoder=True)) == 15


def test_vocalgrad_hf_runs_on_the_family_and_batching_changes_nothing(fake, monkeypatch):
    from harness_tasks.clip_audio import ClipAudio
    from harness_tasks.models.hf import HFAudioLM

    monkeypatch.syspath_prepend(str(fake[0]))

    class Req:
        def __init__(self, seed, rise):
            y, sr = tone(0.6 + 0.3 * seed, seed, rise=rise)
            self.args = (PROMPT, {"until": [], "max_gen_toks": 4, "do_sample": False},
                         {"audio": [ClipAudio(f"c{seed}", {"array": y, "sampling_rate": sr})]})

    reqs = [Req(0, True), Req(1, False), Req(2, True)]
    outs = [HFAudioLM(pretrained=str(fake[1]), family="kimi_audio", device="cpu", dtype="float32", batch_size=bs,
                      scoring="both", retry_unparsed=False).generate_until(reqs, disable_tqdm=True) for bs in (1, 3)]
    assert outs[0] == outs[1] and len(outs[0]) == 3 and all(isinstance(o, str) for o in outs[0])
