"""The model layer (harness_tasks.models.families) on tiny random checkpoints of each family,
in float32 and bfloat16 (CPU)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _family_helpers import BUILDERS, PROCESSORS  # noqa: E402

from harness_tasks.models.families import FAMILIES, Item, load  # noqa: E402

PROMPT = 'Does the voice pitch increase or decrease over time?\nAnswer with one word: "increase" or "decrease".'
WORDS = ("increase", "decrease")


def tone(seed: int, seconds: float = 1.0, sr: int = 48000) -> tuple[np.ndarray, int]:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    y = 0.3 * np.sin(2 * np.pi * (150 + 100 * seed) * t) + 0.05 * rng.standard_normal(t.size)
    return y.astype(np.float32), sr


_FOLDERS: dict = {}


def built(name: str, tmp_path_factory):
    """(family, folder) of the tiny checkpoint, built once per module."""
    if name not in _FOLDERS:
        _FOLDERS[name] = (name, BUILDERS[name](tmp_path_factory.mktemp(name)))
    return _FOLDERS[name]


@pytest.fixture(scope="module", params=list(BUILDERS))
def folder(request, tmp_path_factory):
    return built(request.param, tmp_path_factory)


_CACHE: dict = {}


def loaded(folder, dtype):
    key = (str(folder[1]), dtype)
    if key not in _CACHE:
        make = PROCESSORS.get(folder[0])
        _CACHE[key] = load(str(folder[1]), dtype=dtype, device="cpu",
                           processor=make(folder[1]) if make else None)
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
    # on more clips: every row whose fp32 top-2 margin exceeds twice the bf16 error agrees
    many = [Item(PROMPT, [tone(i, 0.5 + 0.1 * i)]) for i in range(8)]
    m32 = loaded(folder, "float32").logits(loaded(folder, "float32").batch(many))
    m16 = loaded(folder, "bfloat16").logits(loaded(folder, "bfloat16").batch(many))
    top2 = m32.topk(2, dim=-1).values
    clear = (top2[:, 0] - top2[:, 1]) > 2 * float((m32 - m16).abs().max())
    assert torch.equal(m32.argmax(-1)[clear], m16.argmax(-1)[clear])


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


def test_remote_code_checkpoint_loads_through_the_auto_classes(tmp_path):
    from _family_helpers import build_tiny_remote_code

    folder = build_tiny_remote_code(tmp_path / "remote")
    with pytest.raises(ValueError, match="trust_remote_code"):
        load(str(folder), device="cpu")
    lm = load(str(folder), device="cpu", dtype="float32", trust_remote_code=True)
    assert type(lm.model).__name__ == "TinyRemoteAudioLM"
    assert type(lm.model).remote_marker == "loaded from modeling_tiny_remote.py"
    assert type(lm.model).__module__ != "transformers" and "modeling_tiny_remote" in type(lm.model).__module__
    assert lm.family == "generic"
    a = lm.logits(lm.batch([Item(PROMPT, [tone(0)])]))
    b = lm.logits(lm.batch([Item(PROMPT, [tone(1)])]))
    assert float((a - b).abs().max()) > 1e-2
    assert len(lm.generate(lm.batch([Item(PROMPT, [tone(0)])]), max_new_tokens=3)) == 1


def test_family_detected_from_the_config(folder):
    from transformers import AutoConfig

    from harness_tasks.models.families import detect_family

    name, path = folder
    cfg = AutoConfig.from_pretrained(path)
    assert detect_family(cfg).name == name
    assert detect_family(cfg, "generic").name == "generic"
    with pytest.raises(ValueError, match="unknown model family"):
        detect_family(cfg, "nope")


def test_voxtral_audio_goes_through_the_chat_template():
    from harness_tasks.models.families.voxtral import Voxtral, wav_base64

    y = np.sin(np.linspace(0, 100, 16000)).astype(np.float32) * 0.5
    conv = Voxtral().conversation(Item("Q?", [(y, 16000)], audio_first=True), [y], 16000)
    part = conv[0]["content"][0]
    assert part["type"] == "audio" and part["base64"] == wav_base64(y, 16000) and "audio" not in part
    import base64
    import io
    import wave

    with wave.open(io.BytesIO(base64.b64decode(part["base64"]))) as w:
        back = np.frombuffer(w.readframes(w.getnframes()), "<i2") / 32767.0
        assert w.getframerate() == 16000 and w.getnchannels() == 1
    assert np.abs(back - y).max() < 1e-4


def test_voxtral_prompt_is_laid_out_by_mistral_common(tmp_path_factory):
    """Voxtral's prompt comes from the real tokenizer package (mistral-common's Tekkenizer over the
    tiny tekken.json): [INST] + parts in order + [/INST], each clip [BEGIN_AUDIO] + [AUDIO] x 12.5/s
    of whole chunks; a system turn with audio is refused by tokenizers before v13; a target is the
    answer's tokens + </s> after [/INST]."""
    from transformers import MistralCommonBackend

    lm = loaded(built("voxtral", tmp_path_factory), "float32")
    assert isinstance(lm.tokenizer, MistralCommonBackend)
    assert type(lm.tokenizer.tokenizer).__module__.startswith("mistral_common")
    chunk = 25                                         # 2-s chunks of the tiny tekken.json at 12.5 tokens/s
    for audio_first, want in ((False, f"[INST]QUESTION[BEGIN_AUDIO]{'[AUDIO]' * chunk}[/INST]"),
                              (True, f"[INST][BEGIN_AUDIO]{'[AUDIO]' * chunk}QUESTION[/INST]")):
        b = lm.batch([Item("QUESTION", [tone(0, 1.0)], audio_first=audio_first)])
        assert lm.tokenizer.decode(b["input_ids"][0]) == "<s>" + want
    with pytest.raises(ValueError, match="version 13"):
        lm.batch([Item("QUESTION", [tone(0)], system="SYSTEM")])
    b = lm.batch([Item("Q", [tone(0)], target="up")])
    assert lm.tokenizer.decode(b["input_ids"][0]).endswith("[/INST]up</s>")


def test_voxtral_tokenizer_package_is_the_one_scripts_test_sh_installs():
    """mistral-common is installed without its dependency list (it declares numpy<2.4 on Python <=
    3.12; this project pins numpy 2.4): the version scripts/test.sh pins is the one here, new
    enough for transformers' MistralCommonBackend, and numpy is this project's."""
    import re
    from importlib.metadata import version
    from pathlib import Path

    from packaging.version import Version
    from transformers.utils import import_utils

    script = (Path(__file__).resolve().parents[1] / "scripts" / "test.sh").read_text()
    (pinned,) = re.findall(r'--no-deps "mistral-common==([0-9.]+)"', script)
    assert version("mistral-common") == pinned
    assert Version(pinned) >= Version(import_utils.MISTRAL_COMMON_MIN_VERSION)
    assert import_utils.is_mistral_common_available()
    assert Version(np.__version__).release[:2] == (2, 4)


def test_gemma3n_runs_without_timm_on_its_real_audio_path(tmp_path_factory):
    """Gemma 3n's audio tower, projector and language model are the real ones; only the vision
    tower (timm) is a stand-in, which audio never reaches."""
    lm = loaded(built("gemma3n", tmp_path_factory), "float32")
    assert type(lm.model.model.audio_tower).__module__.startswith("transformers.models.gemma3n")
    b = lm.batch([Item(PROMPT, [tone(0)])])
    assert int(lm.audio_positions(b)[0].sum()) == lm.model.config.audio_soft_tokens_per_image


@pytest.mark.parametrize("audio_first", [False, True])
def test_prompt_order_text_first_by_default_audio_first_flips_it(folder, audio_first):
    lm = loaded(folder, "float32")
    system = None if lm.family == "voxtral" else "SYSTEM"      # refused with audio (test above)
    b = lm.batch([Item("QUESTION", [tone(0)], audio_first=audio_first, system=system)])
    ids = b["input_ids"][0]
    first_audio = int(lm.audio_positions(b)[0].int().argmax())
    before = lm.tokenizer.decode(ids[:first_audio], skip_special_tokens=True)
    after = lm.tokenizer.decode(ids[first_audio:], skip_special_tokens=True)
    assert system is None or "SYSTEM" in before
    if lm.family in ("audioflamingo3", "musicflamingo"):
        # its template puts a turn's clip before the turn's text: the question follows the clip
        # either way; audio-first gives the clip a turn of its own (tests/test_models_hf_variants.py)
        assert "QUESTION" in after and "QUESTION" not in before
        return
    assert ("QUESTION" in before) != audio_first and ("QUESTION" in after) == audio_first


def test_phi4_speech_adapter_is_loaded_and_active(tmp_path, caplog):
    from _family_helpers import build_tiny_phi4_multimodal, phi4_processor
    from peft import LoraConfig, get_peft_model
    from transformers import Phi4MultimodalForCausalLM

    folder = build_tiny_phi4_multimodal(tmp_path / "phi4")
    proc = phi4_processor(folder)
    with caplog.at_level(logging.WARNING, logger="vocalgrad"):
        plain = load(str(folder), processor=proc, device="cpu", dtype="float32")
    assert "no speech-lora/ adapter" in caplog.text
    lora = get_peft_model(Phi4MultimodalForCausalLM.from_pretrained(folder),
                          LoraConfig(r=2, target_modules=["qkv_proj"], init_lora_weights=False))
    lora.save_pretrained(tmp_path / "speech")
    (tmp_path / "speech").rename(folder / "speech-lora")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="vocalgrad"):
        speech = load(str(folder), processor=proc, device="cpu", dtype="float32")
    assert "merged the speech-lora adapter" in caplog.text
    item = [Item(PROMPT, [tone(0)])]
    with_adapter = speech.logits(speech.batch(item))
    assert float((plain.logits(plain.batch(item)) - with_adapter).abs().max()) > 1e-3
    with torch.inference_mode():                    # the same as running the peft model itself
        ref = lora.eval()(**plain.batch(item)).logits[:, -1].float()
    assert float((ref - with_adapter).abs().max()) < 1e-4


def test_granite_turns_are_strings_with_the_audio_placeholder():
    from harness_tasks.models.families.granite_speech import GraniteSpeech

    y = tone(0)[0]
    conv = GraniteSpeech().conversation(Item("Q?", [(y, 16000)], system="S"), [y], 16000)
    assert conv == [{"role": "system", "content": "S"}, {"role": "user", "content": "Q?<|audio|>"}]
    conv = GraniteSpeech().conversation(Item("Q?", [(y, 16000)], audio_first=True), [y], 16000)
    assert conv == [{"role": "user", "content": "<|audio|>Q?"}]


def test_prompt_tokens_are_those_of_apply_chat_template_with_one_bos(folder):
    """The prompt is tokenized as the processor's ``apply_chat_template(tokenize=True)`` would: no
    special token added twice (the Gemma tiny tokenizers add a BOS, as the real ones do, and their
    templates start with one) and none missing."""
    name, _ = folder
    lm = loaded(folder, "float32")
    fam = lm._family
    for item in (Item(PROMPT, []), Item(PROMPT, [tone(0)])):
        ids = lm.batch([item])["input_ids"][0].tolist()
        text = fam.render(lm, [lm.conversation(item)])[0]
        bos = lm.tokenizer.bos_token_id
        if lm.tokenizer.bos_token and text.startswith(lm.tokenizer.bos_token):
            assert ids[:2].count(bos) == 1 and ids[0] == bos, (name, lm.tokenizer.convert_ids_to_tokens(ids[:3]))
        if not item.audios and fam.needs_chat_template:
            ref = lm.processor.apply_chat_template([lm.conversation(item)], tokenize=True, add_generation_prompt=True,
                                                   return_dict=True)["input_ids"]
            assert ids == [int(t) for t in list(ref[0])], name
    if name in ("gemma3n", "gemma4"):      # the tiny tokenizer adds a BOS, and the template starts with one
        assert lm.tokenizer("x")["input_ids"][0] == lm.tokenizer.bos_token_id
        assert fam.render(lm, [lm.conversation(Item(PROMPT, []))])[0].startswith(lm.tokenizer.bos_token)
