"""Fixtures for the harness tests: a tiny local Hub folder in the `vocalgrad hub` layout.

Clips are short synthetic tones (16 kHz by default). volume, pitch and noise clips really
change in the labelled direction (gain ramp, frequency glide, noise ramp) so that the oracle
can be checked on them; the other categories carry a plain tone.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import soundfile as sf

import vocalgrad

CHANGING = ("volume", "pitch", "noise")


def synth_clip(category: str, direction: str, *, seed: int = 0, sr: int = 16000,
               dur: float = 1.2, lead: float = 0.2, f0: float = 220.0) -> np.ndarray:
    """A harmonic tone with silence around it; the attribute changes for CHANGING categories."""
    rng = np.random.default_rng(seed)
    n, a = int(dur * sr), int(lead * sr)
    m = n - 2 * a
    t = np.linspace(0.0, 1.0, m)
    g = t if direction == "increase" else 1.0 - t
    freq = np.full(m, f0 * (1 + 0.03 * seed))
    if category == "pitch":
        freq = freq * 2 ** ((-3 + 6 * g) / 12)
    phase = 2 * np.pi * np.cumsum(freq) / sr
    tone = sum(np.sin(k * phase) / k for k in range(1, 5)) * 0.2
    if category == "volume":
        tone = tone * 10 ** ((-12 + 24 * g) / 20)
    if category == "noise":
        tone = tone + rng.standard_normal(m) * 0.08 * g
    ramp = int(0.01 * sr)
    env = np.ones(m)
    env[:ramp] = np.linspace(0, 1, ramp)
    env[-ramp:] = np.linspace(1, 0, ramp)
    y = np.zeros(n)
    y[a:a + m] = tone * env
    return np.clip(y, -1, 1).astype(np.float32)


def tone_clip(seed: int, seconds: float = 1.0, sr: int = 48000):
    """A noisy tone (150 + 100 * seed Hz) as an in-memory :class:`ClipAudio` named ``clip<seed>``."""
    from harness_tasks.clip_audio import ClipAudio

    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    y = 0.3 * np.sin(2 * np.pi * (150 + 100 * seed) * t) + 0.05 * rng.standard_normal(t.size)
    return ClipAudio(f"clip{seed}", {"array": y.astype(np.float32), "sampling_rate": sr})


def flac_bytes(y: np.ndarray, sr: int) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, y, sr, format="FLAC", subtype="PCM_16")
    return buf.getvalue()


def hub_rows(category: str, *, sources: int = 1, sr: int = 16000, config_split: str = "test",
             tiers=("low",), trajectories=("linear",)) -> list[dict]:
    rows = []
    for s in range(sources):
        sid = f"tone{s:02d}"
        for tier in tiers:
            for traj in trajectories:
                for direction in vocalgrad.DIRECTIONS:
                    y = synth_clip(category, direction, seed=s, sr=sr)
                    cid = vocalgrad.clip_id(sid, category, traj, tier, direction)
                    rows.append({
                        "audio": {"bytes": flac_bytes(y, sr), "path": f"{cid}.flac"},
                        "id": cid, "category": category,
                        "attribute": vocalgrad.category(category).attribute,
                        "direction": direction, "tier": tier, "trajectory": traj,
                        "source_id": sid, "speaker_id": "synth", "sentence_id": sid, "text": "",
                        "prompt": vocalgrad.default_prompt(category), "label": direction,
                        "duration_sec": len(y) / sr, "onset_sec": 0.2, "offset_sec": len(y) / sr - 0.2,
                        "split": config_split, "value_start": 0.0, "value_end": 1.0, "unit": "",
                    })
    return rows


def write_config(root: Path, config: str, rows: list[dict], *, split: str = "test", shards: int = 1) -> None:
    import datasets

    feats = datasets.Features({
        c: (datasets.Audio() if c == "audio" else
            datasets.Value("float64") if c in ("duration_sec", "onset_sec", "offset_sec", "value_start", "value_end")
            else datasets.Value("string"))
        for c in vocalgrad.HUB_COLUMNS
    })
    ds = datasets.Dataset.from_list(rows, features=feats)
    (root / config).mkdir(parents=True, exist_ok=True)
    for i in range(shards):
        ds.shard(shards, i, contiguous=True).to_parquet(
            str(root / config / f"{split}-{i:05d}-of-{shards:05d}.parquet"))


def make_hub_folder(root: Path, *, categories=vocalgrad.CATEGORY_NAMES, sources: int = 1,
                    sr: int = 16000, beep: bool = False, **kw) -> Path:
    """Write `<root>/<category>/test-00000-of-00001.parquet` (+ beep) and a README with configs."""
    root = Path(root)
    configs = []
    for cat in categories:
        write_config(root, cat, hub_rows(cat, sources=sources, sr=sr, **kw))
        configs.append(cat)
    if beep:
        rows = [r for cat in vocalgrad.BEEP_CATEGORIES for r in hub_rows(cat, sources=1, sr=sr, config_split="beep")]
        write_config(root, "beep", rows)
        configs.append("beep")
    lines = ["---", "configs:"]
    for c in configs:
        lines += [f"- config_name: {c}", "  data_files:", "  - split: test", f"    path: {c}/test-*.parquet"]
    lines += ["---", "", "# tiny VocalGrad fixture", ""]
    (root / "README.md").write_text("\n".join(lines))
    return root


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text())


# ----------------------------------------------------------------------------- tiny models
def _byte_tokenizer(specials: list[str], eos: str, pad: str):
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import Qwen2Tokenizer

    vocab = {ch: i for i, ch in enumerate(sorted(ByteLevel.alphabet()))}
    tok = Qwen2Tokenizer(vocab=vocab, merges=[], unk_token=None, bos_token=None, eos_token=eos, pad_token=pad)
    tok.add_special_tokens({"additional_special_tokens": specials})
    return tok


def _text_config(vocab_size: int) -> dict:
    return dict(model_type="qwen2", vocab_size=vocab_size, hidden_size=32, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=1, intermediate_size=64,
                initializer_range=0.2, max_position_embeddings=512)


def build_tiny_qwen2_audio(folder: Path) -> Path:
    """Random tiny Qwen2-Audio (~45k parameters) saved with its processor; fully offline."""
    import torch
    from transformers import (Qwen2AudioConfig, Qwen2AudioForConditionalGeneration,
                              Qwen2AudioProcessor, WhisperFeatureExtractor)

    tok = _byte_tokenizer(["<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>", "<|im_start|>", "<|im_end|>",
                           "<|endoftext|>"], eos="<|im_end|>", pad="<|endoftext|>")
    fe = WhisperFeatureExtractor(feature_size=16, chunk_length=2)
    proc = Qwen2AudioProcessor(feature_extractor=fe, tokenizer=tok)   # brings its chat template
    cfg = Qwen2AudioConfig(
        audio_config=dict(num_mel_bins=16, d_model=32, encoder_layers=1, encoder_attention_heads=2,
                          encoder_ffn_dim=64, max_source_positions=fe.nb_max_frames // 2, init_std=0.2),
        text_config=_text_config(len(tok)),
        audio_token_index=tok.convert_tokens_to_ids("<|AUDIO|>"), initializer_range=0.2)
    torch.manual_seed(0)
    model = Qwen2AudioForConditionalGeneration(cfg).eval()
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.save_pretrained(folder)
    proc.save_pretrained(folder)
    return Path(folder)


#: A chat template that puts each audio part where it stands in the turn (the Qwen2.5-Omni test
#: template is made from it; not Audio Flamingo 3's behaviour, see AF3_TEMPLATE).
IN_ORDER_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'audio' %}<sound>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: Audio Flamingo 3's chat template, behaviour for behaviour, written for the tests. It mirrors the
#: processor template that transformers' conversion script writes for nvidia/audio-flamingo-3-hf
#: (huggingface/transformers, src/transformers/models/audioflamingo3/convert_audioflamingo3_to_hf.py,
#: write_processor(), as of commit 1895c87f79a357686052c91d86b8a1b1785cb160): a default system turn
#: "You are a helpful assistant." when the first turn is not a system turn; turns whose content is
#: None are skipped; a turn with list content is ONE <sound> if it has any audio part, always
#: before the text, then all its text parts joined with nothing between them.
AF3_TEMPLATE = (
    "{% if messages[0]['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% endif %}"
    "{% for turn in messages if turn['content'] is not none %}<|im_start|>{{ turn['role'] }}\n"
    "{% if turn['content'] is string %}{{ turn['content'] }}{% else %}"
    "{% set heard = namespace(any=false, text='') %}"
    "{% for part in turn['content'] %}"
    "{% if part.get('type') == 'audio' or 'audio' in part %}{% set heard.any = true %}"
    "{% elif part.get('type') == 'text' or 'text' in part %}{% set heard.text = heard.text ~ part['text'] %}"
    "{% endif %}{% endfor %}"
    "{% if heard.any %}<sound>{% endif %}{{ heard.text }}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: Audio Flamingo 3's generation_config.json as the conversion script writes it (sampling with a
#: repetition penalty); token ids are filled in from the tiny tokenizer.
AF3_GENERATION = dict(do_sample=True, temperature=0.7, top_k=20, top_p=0.8, repetition_penalty=1.05)


def build_tiny_audio_flamingo3(folder: Path) -> Path:
    """Random tiny Audio Flamingo 3 saved with a processor built as the real one is: the tokenizer's
    special tokens and end/pad tokens (<|im_end|>, <|endoftext|>), a Whisper feature extractor that
    returns its attention mask, :data:`AF3_TEMPLATE`, and the real checkpoint's sampling
    generation_config (:data:`AF3_GENERATION`). Smaller than the real one: 16 mel bins, 2-s windows,
    clips cut at 4 s."""
    import torch
    from transformers import (AudioFlamingo3Config, AudioFlamingo3ForConditionalGeneration,
                              AudioFlamingo3Processor, GenerationConfig, WhisperFeatureExtractor)

    tok = _byte_tokenizer(["<sound>", "<|im_start|>", "<|im_end|>", "<|endoftext|>"],
                          eos="<|im_end|>", pad="<|endoftext|>")
    fe = WhisperFeatureExtractor(feature_size=16, chunk_length=2, return_attention_mask=True)
    proc = AudioFlamingo3Processor(feature_extractor=fe, tokenizer=tok, chat_template=AF3_TEMPLATE, max_audio_len=4)
    cfg = AudioFlamingo3Config(
        audio_config=dict(num_mel_bins=16, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=64, max_source_positions=fe.nb_max_frames // 2, initializer_range=0.2),
        text_config=_text_config(len(tok)),
        audio_token_id=tok.convert_tokens_to_ids("<sound>"))
    torch.manual_seed(0)
    model = AudioFlamingo3ForConditionalGeneration(cfg).eval()
    end, pad = tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>")
    model.generation_config = GenerationConfig(bos_token_id=pad, eos_token_id=[end, pad], pad_token_id=pad,
                                               **AF3_GENERATION)
    model.save_pretrained(folder)
    proc.save_pretrained(folder)
    return Path(folder)


def offline_lm_eval(monkeypatch) -> None:
    """Offline, and skip lm-eval's environment report (it shells out to pip)."""
    import lm_eval.evaluator

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(lm_eval.evaluator, "add_env_info", lambda results: None)


def run_lm_eval(model, tasks, metadata=None, **kw):
    """lm-eval's simple_evaluate on our task folder only (no built-in task index, no bootstrap)."""
    import lm_eval
    from lm_eval.tasks import TaskManager

    import harness_tasks

    tm = TaskManager(include_path=harness_tasks.TASK_DIR, include_defaults=False, metadata=metadata)
    return lm_eval.simple_evaluate(model=model, tasks=tasks, task_manager=tm, bootstrap_iters=0, **kw)


def default_signals() -> None:
    """``preexec_fn`` for a child process a test interrupts: SIGINT and SIGTERM at their defaults.

    A shell starts a background job (``cmd &`` in a script, ``nohup``) with SIGINT ignored, and an
    ignored signal stays ignored across ``exec``: Python then installs no KeyboardInterrupt handler and
    the test's SIGINT would do nothing. Resetting both here makes the child behave the same whether the
    suite runs in a terminal, as a background job or under nohup.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)   # Python installs its default_int_handler at start-up
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
