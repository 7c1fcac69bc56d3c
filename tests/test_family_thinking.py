"""Thinking checkpoints, refused checkpoints and transformers floors on tiny checkpoints built from
the real transformers config classes (docs/model-layer.md, the "reasons" column; docs/models.md)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _family_helpers import BUILDERS, PROCESSORS  # noqa: E402

from harness_tasks.clip_audio import ClipAudio  # noqa: E402
from harness_tasks.models import hf  # noqa: E402
from harness_tasks.models.families import FAMILIES, FamilyUnavailable, load  # noqa: E402
from harness_tasks.models.families.decoding import decode_answers  # noqa: E402
from harness_tasks.models.families.versions import check_transformers  # noqa: E402
from harness_tasks.models.thinking import split_reasoning  # noqa: E402
from harness_tasks.workers.envs import __file__ as _envs_init  # noqa: E402

LOCK = Path(_envs_init).with_name("transformers_worker.txt")


@pytest.fixture(scope="module")
def qwen3_omni(tmp_path_factory):
    """The tiny Qwen3-Omni thinker, reachable under the three checkpoint names people meet."""
    root = tmp_path_factory.mktemp("q3o")
    base = BUILDERS["qwen3_omni"](root / "base")
    links = {}
    for kind in ("Instruct", "Thinking", "Captioner"):
        links[kind] = root / f"Qwen3-Omni-30B-A3B-{kind}"
        links[kind].symlink_to(base, target_is_directory=True)
    return links


def _thinking_processor(folder):
    """The tiny processor with a template whose generation prompt opens ``<think>`` (as Qwen3
    thinking templates prefill it)."""
    proc = PROCESSORS["qwen3_omni"](folder)
    proc.chat_template = proc.chat_template.replace("<|im_start|>assistant\n{% endif %}",
                                                    "<|im_start|>assistant\n<think>\n{% endif %}")
    assert proc.chat_template.endswith("<think>\n{% endif %}")
    return proc


def test_qwen3_omni_instruct_thinking_and_captioner_told_apart(qwen3_omni):
    with pytest.raises(FamilyUnavailable) as err:
        load(str(qwen3_omni["Captioner"]), device="cpu", processor=PROCESSORS["qwen3_omni"](qwen3_omni["Captioner"]))
    assert "\n" not in str(err.value) and "Captioner takes no instruction" in str(err.value)
    inst = load(str(qwen3_omni["Instruct"]), device="cpu", processor=PROCESSORS["qwen3_omni"](qwen3_omni["Instruct"]))
    think = load(str(qwen3_omni["Thinking"]), device="cpu", processor=_thinking_processor(qwen3_omni["Thinking"]))
    assert (inst.family, inst.thinks, think.family, think.thinks) == ("qwen3_omni", False, "qwen3_omni", True)
    assert think.reasoning == (("<think>", "</think>"),) and think.reasoning_opened and not inst.reasoning_opened
    forced = load(str(qwen3_omni["Instruct"]), device="cpu", thinking=True,
                  processor=PROCESSORS["qwen3_omni"](qwen3_omni["Instruct"]))
    assert forced.thinks                                   # a renamed folder: thinking=true


def _clips(n):
    rng = np.random.default_rng(0)
    return [ClipAudio(f"c{i}", {"array": rng.standard_normal(8000).astype(np.float32) * 0.1, "sampling_rate": 16000})
            for i in range(n)]


def test_tiny_thinking_model_past_its_budget_is_counted_and_logged(qwen3_omni, monkeypatch):
    folder = qwen3_omni["Thinking"]
    lm = hf.HFAudioLM(pretrained=str(folder), processor=_thinking_processor(folder), device="cpu",
                      reasoning_budget=6, retry_unparsed=False, answer_log="none")
    budgets = []
    real = lm.lm.generate
    monkeypatch.setattr(lm.lm, "generate", lambda batch, max_new_tokens: budgets.append(max_new_tokens)
                        or real(batch, max_new_tokens=max_new_tokens))
    answers = lm.generate_until([("Does it rise?", {"until": [], "max_gen_toks": 4}, {"audio": [c]})
                                 for c in _clips(2)], disable_tqdm=True)
    assert budgets == [10, 10]                              # 4 answer tokens + 6 reasoning tokens
    # the reply starts inside the block the template opened; it never closes within the budget
    assert all(a.startswith("<think>\n") and split_reasoning(a)[2] for a in answers)
    card = lm.model_card()["reasoning"]
    assert card["thinks"] and card["opened_by_template"] and card["budget"] == 6
    assert (card["answers"], card["cut_off"], card["cut_off_share"]) == (2, 2, 1.0)
    default = hf.HFAudioLM(pretrained=str(folder), processor=_thinking_processor(folder), device="cpu",
                           answer_log="none")
    assert default.reasoning_budget == 4096 and default.model_card()["reasoning"]["budget"] == 4096


def test_gemma4_thought_channel_is_kept_in_decoding_and_split_off(tmp_path):
    folder = BUILDERS["gemma4"](tmp_path / "g4")
    proc = PROCESSORS["gemma4"](folder)
    # the thought-channel markers, special tokens in Gemma 4's tokenizer (added here only: a larger
    # vocabulary would change the tiny model the other family tests measure)
    proc.tokenizer.add_special_tokens({"additional_special_tokens": ["<|channel>", "<channel|>"]},
                                      replace_extra_special_tokens=False)
    lm = load(str(folder), device="cpu", processor=proc)
    tok = lm.tokenizer
    opened, closed = tok.convert_tokens_to_ids("<|channel>"), tok.convert_tokens_to_ids("<channel|>")
    assert sorted(lm.keep_token_ids) == sorted([opened, closed]) and not lm.thinks
    row = ([opened] + tok("thought\nit could decrease", add_special_tokens=False)["input_ids"] + [closed]
           + tok("increase", add_special_tokens=False)["input_ids"] + [tok.eos_token_id, tok.pad_token_id])
    (text,) = decode_answers(tok, torch.tensor([row]), keep=lm.keep_token_ids)
    assert text == "<|channel>thought\nit could decrease<channel|>increase"
    assert split_reasoning(text, lm.reasoning) == ("it could decrease", "increase", False)
    (plain,) = tok.batch_decode(torch.tensor([row]), skip_special_tokens=True)
    assert split_reasoning(plain)[1] == "thought\nit could decreaseincrease"   # what skipping alone would leave


def _save_config(config, folder: Path) -> Path:
    config.save_pretrained(folder)
    return folder


@pytest.mark.parametrize("model_type", ["nemotron_h_omni", "gemma4_unified"])
def test_families_without_a_verified_route_are_refused_in_one_line(tmp_path, model_type):
    import transformers

    cls = transformers.AutoConfig.for_model(model_type).__class__    # the real config class
    folder = _save_config(cls(), tmp_path / model_type)
    with pytest.raises(FamilyUnavailable) as err:
        load(str(folder), device="cpu")
    msg = str(err.value)
    assert "\n" not in msg and f"model type {model_type} has no VocalGrad family" in msg and "family=generic" in msg


def test_each_family_states_its_transformers_floor_and_stops_below_it():
    with pytest.raises(FamilyUnavailable, match=r"gemma4 needs transformers >= 5\.5 \(installed 5\.4\.2\)"):
        check_transformers(FAMILIES["gemma4"], installed="5.4.2")
    check_transformers(FAMILIES["gemma4"], installed="5.5.0")
    lock = re.search(r"^transformers==(\S+)$", LOCK.read_text(), re.M).group(1)
    refused = set()
    for name, fam in FAMILIES.items():
        try:
            check_transformers(fam, installed=lock)
        except FamilyUnavailable as exc:
            assert "\n" not in str(exc)
            refused.add(name)
    assert lock == "4.57.6"
    assert refused == {"audioflamingo3", "musicflamingo", "gemma4", "gemma4_unified"}


def test_transformers_worker_refuses_a_family_its_transformers_cannot_serve(tmp_path, monkeypatch):
    import transformers

    from harness_tasks.workers import transformers_worker

    folder = _save_config(transformers.AutoConfig.for_model("gemma4"), tmp_path / "g4cfg")
    monkeypatch.setattr(transformers, "__version__", "4.57.6")
    with pytest.raises(SystemExit) as err:
        transformers_worker.main([f"pretrained={folder}", "device=cpu"])
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("transformers_worker: model family gemma4 needs transformers >= 5.5")


def test_hf_docstring_names_every_family_that_is_not_batchable():
    names = {"phi4_multimodal": "Phi-4", "granite_speech": "Granite", "gemma3n": "Gemma 3n", "qwen3_omni": "Qwen3-Omni"}
    not_batchable = {n for n, f in FAMILIES.items() if not f.batchable}
    assert not_batchable == set(names)
    doc = " ".join(hf.__doc__.split())
    listed = doc.split("drift with mixed audio lengths")[0].rsplit(";", 1)[-1]
    assert all(names[n] in listed for n in not_batchable), listed


def _rendered(lm, monkeypatch):
    """The prompt of a short item and the keyword arguments its chat template was called with."""
    from harness_tasks.models.families import Item

    seen = []
    real = lm.processor.apply_chat_template
    monkeypatch.setattr(lm.processor, "apply_chat_template", lambda *a, **kw: seen.append(kw) or real(*a, **kw))
    text = lm._family.render(lm, [lm.conversation(Item("Does it rise?", []))])[0]
    return text, seen[-1]


@pytest.mark.parametrize("mode, kwargs, thinks", [("on", {"enable_thinking": True}, True),
                                                  ("off", {"enable_thinking": False}, False),
                                                  ("auto", {}, False)])
def test_gemma4_thinking_switch_reaches_the_chat_template(tmp_path, monkeypatch, mode, kwargs, thinks):
    folder = BUILDERS["gemma4"](tmp_path / "g4")
    lm = load(str(folder), device="cpu", processor=PROCESSORS["gemma4"](folder), thinking=mode)
    _, called = _rendered(lm, monkeypatch)
    assert (lm.thinking, lm.template_kwargs, lm.thinks) == (mode, kwargs, thinks)
    assert {k: called[k] for k in ("enable_thinking",) if k in called} == kwargs       # auto passes no switch
    adapter = hf.HFAudioLM(pretrained=lm.model, processor=lm.processor, thinking=mode, device="cpu", answer_log="none")
    card = adapter.model_card()["reasoning"]
    assert (card["thinking"], card["template_kwargs"], card["budget"]) == (mode, kwargs, 4096 if thinks else 0)


def test_qwen2_audio_real_template_with_thinking_off_is_unchanged_and_on_is_refused(tmp_path, monkeypatch):
    """Qwen2-Audio's chat template is the one its processor class ships in transformers; it has no
    thinking mode, so ``off`` renders the same prompt as ``auto`` and ``on`` is refused in one line."""
    folder = BUILDERS["qwen2_audio"](tmp_path / "q2a")
    auto = load(str(folder), device="cpu")
    off = load(str(folder), device="cpu", thinking="off")
    assert _rendered(auto, monkeypatch)[0] == _rendered(off, monkeypatch)[0] and off.template_kwargs == {}
    with pytest.raises(ValueError) as err:
        load(str(folder), device="cpu", thinking="on")
    assert "\n" not in str(err.value) and "family qwen2_audio has no thinking mode" in str(err.value)


def test_qwen3_omni_thinking_is_the_checkpoints_not_a_template_switch(qwen3_omni, monkeypatch):
    inst = load(str(qwen3_omni["Instruct"]), device="cpu", thinking="on",
                processor=PROCESSORS["qwen3_omni"](qwen3_omni["Instruct"]))
    think = load(str(qwen3_omni["Thinking"]), device="cpu", thinking="off",
                 processor=PROCESSORS["qwen3_omni"](qwen3_omni["Thinking"]))
    assert (inst.thinks, inst.template_kwargs, think.thinks, think.template_kwargs) == (True, {}, False, {})
    assert "enable_thinking" not in _rendered(inst, monkeypatch)[1]


def test_the_transformers_worker_passes_thinking_to_the_chat_template(tmp_path, monkeypatch):
    from harness_tasks.workers import transformers_worker

    folder = BUILDERS["gemma4"](tmp_path / "g4w")
    made = []

    class Spy(hf.HFAudioLM):
        def __init__(self, **kw):
            super().__init__(processor=PROCESSORS["gemma4"](folder), **kw)
            made.append(self)

    monkeypatch.setattr(hf, "HFAudioLM", Spy)
    monkeypatch.setattr(transformers_worker, "serve", lambda answer, **kw: None)
    transformers_worker.main([f"pretrained={folder}", "device=cpu", "thinking=on"])
    (lm,) = made
    assert lm.lm.template_kwargs == {"enable_thinking": True} and lm.reasoning_budget == 4096
