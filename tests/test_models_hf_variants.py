"""Every prompt variant group through every tiny model family (tests/_family_helpers.BUILDERS: the
paper's families and Gemma 3n, Gemma 4, Qwen3-Omni, Voxtral, Music Flamingo), Audio Flamingo 3 with its real
chat template's behaviour (tests/_harness_helpers.AF3_TEMPLATE), and greedy decoding that ignores
the checkpoint's sampling settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import vocalgrad  # noqa: E402
from _family_helpers import BUILDERS, PROCESSORS  # noqa: E402
from _harness_helpers import AF3_GENERATION, build_tiny_audio_flamingo3, hub_rows, make_hub_folder  # noqa: E402
from _harness_helpers import tone_clip, write_config  # noqa: E402

from harness_tasks import fewshot, prompts  # noqa: E402
from harness_tasks.models.base import Query  # noqa: E402
from harness_tasks.models.families import Item, load  # noqa: E402
from harness_tasks.parsing import is_error_answer  # noqa: E402
from harness_tasks.variants import VARIANTS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SOUND = "<sound>"


def tone(seed: int, seconds: float = 1.0, sr: int = 48000):
    clip = tone_clip(seed, seconds, sr)
    return clip["array"], clip["sampling_rate"]


def variant_items() -> dict[str, Item]:
    """One request per task group as its task builds it (prompt text, clips, audio order)."""
    out = {}
    for name, v in VARIANTS.items():
        category = vocalgrad.BEEP_CATEGORIES[0] if name == "beep" else "pitch"
        if v.kind == "paraphrase":
            text = prompts.paraphrase_prompt(next(iter(prompts.PARAPHRASES)))
        elif v.kind == "xattr":
            text = prompts.build_prompt("volume")        # pitch clips, the volume question
        elif v.fewshot:
            text = fewshot.doc_to_text_fewshot({"category": category,
                                                "fewshot_labels": ["increase", "decrease", "decrease", "increase"]})
        else:
            text = prompts.build_prompt(category, v.prompt)
        n = 5 if v.fewshot else 1
        out[v.group] = Item(text, [tone(i, 0.6 + 0.1 * i) for i in range(n)], audio_first=v.audio_first)
    return out


ITEMS = variant_items()


@pytest.fixture(scope="module", params=list(BUILDERS))
def family_lm(request, tmp_path_factory):
    folder = BUILDERS[request.param](tmp_path_factory.mktemp(request.param))
    make = PROCESSORS.get(request.param)
    return load(str(folder), dtype="float32", device="cpu", processor=make(folder) if make else None)


def test_every_variant_group_runs_through_every_family(family_lm):
    lm = family_lm
    one = {}
    for group, item in ITEMS.items():
        b = lm.batch([item])
        heard = int(lm.audio_positions(b)[0].sum())
        # every clip is heard: the audio positions are those of the clips run one by one
        alone = sum(int(lm.audio_positions(lm.batch([Item("x", [clip])]))[0].sum()) for clip in item.audios)
        assert heard == alone > 0, group
        texts = lm.generate(b, max_new_tokens=2)
        assert len(texts) == 1 and isinstance(texts[0], str)
        one[group] = b["input_ids"][0].tolist()
    # the audio-first request is laid out differently from the default one in every family
    assert one["vocalgrad_audiofirst"] != one["vocalgrad"], lm.family


def test_several_requests_with_different_clip_counts_batch_together(family_lm):
    lm = family_lm
    items = [ITEMS["vocalgrad_fewshot"], ITEMS["vocalgrad"], ITEMS["vocalgrad_audiofirst"]]
    together = lm.logits(lm.batch(items))
    assert together.shape[0] == 3 and bool(torch.isfinite(together).all())
    if lm.length_sensitive:     # their audio encoders see the padding (docs/model-layer.md): batch_size=1 is exact
        return
    alone = torch.cat([lm.logits(lm.batch([it])) for it in items])
    assert float((together - alone).abs().max()) < 1e-4


def test_tiny_checkpoints_carry_the_templates_they_stand_for(tmp_path):
    """Qwen2-Audio: the installed processor's own default template (what a checkpoint without one
    falls back to), reloaded from disk; AF3: the real template's behaviour and sampling config."""
    from transformers import Qwen2AudioProcessor

    from _harness_helpers import AF3_TEMPLATE, build_tiny_qwen2_audio

    qwen = load(str(build_tiny_qwen2_audio(tmp_path / "q")), dtype="float32", device="cpu")
    assert qwen.processor.chat_template == Qwen2AudioProcessor.default_chat_template.fget(qwen.processor)
    assert (qwen.tokenizer.eos_token, qwen.tokenizer.pad_token) == ("<|im_end|>", "<|endoftext|>")
    af3 = load(str(build_tiny_audio_flamingo3(tmp_path / "a")), dtype="float32", device="cpu")
    assert af3.processor.chat_template == AF3_TEMPLATE
    cfg = af3.model.generation_config
    assert {k: getattr(cfg, k) for k in AF3_GENERATION} == AF3_GENERATION
    assert cfg.eos_token_id == [af3.tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", "<|endoftext|>")]


def test_musicflamingo_lays_out_requests_as_af3_with_its_own_system_turn(tmp_path):
    """Music Flamingo: the conversion's template behaviour (AF3's with its own default system turn),
    reloaded from disk; few-shot clips each get the processor's <|sound_bos|> <sound>... <|sound_eos|>."""
    from _family_helpers import MUSICFLAMINGO_SYSTEM, MUSICFLAMINGO_TEMPLATE, build_tiny_musicflamingo

    lm = load(str(build_tiny_musicflamingo(tmp_path / "mf")), dtype="float32", device="cpu")
    assert lm.family == "musicflamingo" and lm.processor.chat_template == MUSICFLAMINGO_TEMPLATE
    question = ITEMS["vocalgrad"].prompt
    assert rendered(lm, ITEMS["vocalgrad"]) == (f"<|im_start|>system\n{MUSICFLAMINGO_SYSTEM}<|im_end|>\n"
                                                f"<|im_start|>user\n{SOUND}{question}<|im_end|>\n"
                                                f"<|im_start|>assistant\n")
    few = lm.batch([ITEMS["vocalgrad_fewshot"], ITEMS["vocalgrad"]])
    bos, eos = lm.tokenizer.convert_tokens_to_ids(["<|sound_bos|>", "<|sound_eos|>"])
    ids = few["input_ids"][0].tolist()
    assert ids.count(bos) == ids.count(eos) == 5
    single = lm.batch([ITEMS["vocalgrad"]])
    assert torch.equal(few["input_ids"][1, -single["input_ids"].shape[1]:], single["input_ids"][0])


# ----------------------------------------------------------------------------- Audio Flamingo 3
@pytest.fixture(scope="module")
def af3_dir(tmp_path_factory):
    return build_tiny_audio_flamingo3(tmp_path_factory.mktemp("af3"))


@pytest.fixture(scope="module")
def af3(af3_dir):
    return load(str(af3_dir), dtype="float32", device="cpu")


def rendered(lm, item: Item) -> str:
    return lm._family.render(lm, [lm.conversation(item)])[0]


def test_af3_prompts_under_its_real_template(af3):
    default = rendered(af3, ITEMS["vocalgrad"])
    question = ITEMS["vocalgrad"].prompt
    head = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"   # the template's default system turn
    # the benchmark's prompt: one turn, the clip first (the template's order), as the authors ran it
    assert default == f"{head}<|im_start|>user\n{SOUND}{question}<|im_end|>\n<|im_start|>assistant\n"
    first = rendered(af3, ITEMS["vocalgrad_audiofirst"])
    assert first == (f"{head}<|im_start|>user\n{SOUND}<|im_end|>\n<|im_start|>user\n{question}<|im_end|>\n"
                     f"<|im_start|>assistant\n")
    assert first != default
    for group in ("vocalgrad_swap", "vocalgrad_audioref"):
        text = rendered(af3, ITEMS[group])
        assert text.count(SOUND) == 1 and f"{SOUND}{ITEMS[group].prompt}<|im_end|>" in text
    few = rendered(af3, ITEMS["vocalgrad_fewshot"])
    assert few.count(SOUND) == 5 and few.count("<|im_start|>user\n") == 6
    # text and clips stay in the request's order: each example's label follows its clip
    turns = few.split("<|im_start|>user\n")[1:]
    assert turns[0].startswith("You will receive 4 labeled audio examples") and SOUND not in turns[0]
    for n, label in enumerate(["increase", "decrease", "decrease", "increase"], 1):
        assert turns[n].startswith(f"{SOUND}Example {n} label: {label}")
    assert turns[5].startswith(f"{SOUND}For the query audio, answer the same question:")


def test_af3_several_clips_equal_the_processor_on_each_clip(af3):
    """Rows with several clips are encoded clip by clip; a one-clip row in the same batch gets the
    processor's own tokens, and each clip's feature rows are the processor's for that clip."""
    few, plain = ITEMS["vocalgrad_fewshot"], ITEMS["vocalgrad"]
    b = af3.batch([plain, few])
    own = af3.batch([plain])
    n = own["input_ids"].shape[1]
    assert torch.equal(b["input_ids"][0, -n:], own["input_ids"][0])
    assert torch.equal(b["input_features"][:1], own["input_features"])
    for k, clip in enumerate(few.audios):
        alone = af3.batch([Item("x", [clip])])
        assert torch.equal(b["input_features"][1 + k], alone["input_features"][0])
    positions = af3.audio_positions(b)[1]
    runs = int(((positions[1:].int() - positions[:-1].int()) == 1).sum())
    assert runs == 5


def _argmax_decode(lm, item: Item, steps: int) -> str:
    """Greedy decoding by hand: the argmax of a full forward pass, token by token."""
    b = lm.batch([item])
    ids, feats = b["input_ids"], {k: v for k, v in b.items() if k not in ("input_ids", "attention_mask")}
    eos = set(lm.model.generation_config.eos_token_id)
    out = []
    with torch.inference_mode():
        for _ in range(steps):
            nxt = int(lm.model(input_ids=ids, attention_mask=torch.ones_like(ids), **feats).logits[0, -1].argmax())
            if nxt in eos:
                break
            out.append(nxt)
            ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
    return lm.tokenizer.decode(out, skip_special_tokens=True)


def test_af3_greedy_ignores_the_checkpoints_sampling_and_repetition_penalty(af3, af3_dir):
    own = af3.model.generation_config
    assert own.do_sample is True and own.repetition_penalty == AF3_GENERATION["repetition_penalty"]
    settings = af3.generation_settings()
    assert settings["do_sample"] is False and settings["num_beams"] == 1
    assert settings["repetition_penalty"] == 1.0 and settings["no_repeat_ngram_size"] == 0
    assert settings["eos_token_id"] == own.eos_token_id and settings["pad_token_id"] == own.pad_token_id
    item = ITEMS["vocalgrad"]
    greedy = [af3.generate(af3.batch([item]), max_new_tokens=24) for _ in range(2)]
    assert greedy[0] == greedy[1] == [_argmax_decode(af3, item, 24)]
    # the checkpoint's config is left as it was
    assert af3.model.generation_config is own and own.do_sample is True
    # what the checkpoint asks for is there on request
    ckpt = load(str(af3_dir), dtype="float32", device="cpu", generation="checkpoint").generation_settings()
    assert ckpt["do_sample"] is True and {k: ckpt[k] for k in AF3_GENERATION} == AF3_GENERATION
    with pytest.raises(ValueError, match="generation must be one of"):
        load(str(af3_dir), device="cpu", generation="sample")


def test_af3_generation_settings_in_the_answer_log_and_results(af3_dir, tmp_path, caplog):
    import logging

    from harness_tasks.models.hf import HFAudioLM

    lm = HFAudioLM(pretrained=str(af3_dir), device="cpu", dtype="float32", retry_unparsed=False,
                   answer_log=str(tmp_path / "log"))
    q = Query(ITEMS["vocalgrad"].prompt, [tone_clip(0)], max_new_tokens=3)
    key = lm.query_key(q)
    lm._run([q], disable_tqdm=True)
    line = json.loads((tmp_path / "log" / "answers.jsonl").read_text().splitlines()[0])
    assert line["key"] == key and line["generation"] == lm.generation_settings
    assert line["generation"]["do_sample"] is False and line["generation"]["repetition_penalty"] == 1.0
    assert lm.identity()["generation"] == lm.generation_settings
    assert lm.get_model_info()["vocalgrad_hf"]["generation"] == lm.generation_settings
    assert "answers change from run to run" not in caplog.text
    with caplog.at_level(logging.WARNING, logger="vocalgrad"):
        other = HFAudioLM(pretrained=str(af3_dir), device="cpu", dtype="float32", generation="checkpoint",
                          answer_log="none")
    assert "answers change from run to run" in caplog.text      # the checkpoint samples
    assert other.query_key(q) != key       # other settings, other answers: not reused


@pytest.fixture(scope="module")
def pitch_hub(tmp_path_factory):
    root = make_hub_folder(tmp_path_factory.mktemp("hub"), categories=("pitch",), sources=2)
    train = [dict(r, split="train") for r in hub_rows("pitch", sources=4, config_split="train", tiers=("low", "high"))]
    write_config(root, "train", train, split="train")
    return root


@pytest.mark.slow
def test_af3_answers_every_variant_group_through_vocalgrad_eval(af3_dir, pitch_hub, tmp_path):
    groups = ("vocalgrad_fewshot", "vocalgrad_audiofirst", "vocalgrad_swap", "vocalgrad_audioref")
    tasks = [f"{g}_pitch" for g in groups]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VOCALGRAD_DATASET": str(pitch_hub), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "harness_tasks.cli", "--model", "vocalgrad-hf", "--model_args",
         f"pretrained={af3_dir},dtype=float32,retry_unparsed=false,answer_log=none", "--tasks", ",".join(tasks),
         "--device", "cpu", "--log_samples", "--gen_kwargs", "max_gen_toks=3", "--output_path", str(tmp_path / "out")],
        env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    (res_file,) = (tmp_path / "out").rglob("results_*.json")
    res = json.loads(res_file.read_text())
    assert res["config"]["vocalgrad_hf"]["generation"]["do_sample"] is False
    for task in tasks:
        assert res["results"][task]["error_rate,none"] == 0.0, task
        (samples,) = (tmp_path / "out").rglob(f"samples_{task}_*.jsonl")
        rows = [json.loads(line) for line in samples.read_text().splitlines()]
        assert len(rows) == 4
        assert not any(is_error_answer(r["resps"][0][0]) for r in rows), task
        if task.startswith("vocalgrad_fewshot"):
            assert all(len(r["doc"]["fewshot_ids"]) == 4 for r in rows)
