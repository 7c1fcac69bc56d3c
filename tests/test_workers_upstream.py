"""The Kimi-Audio, MiMo-Audio and Step-Audio 2 workers against REPLICAS of their upstream layouts.

Each test writes, in its tmp_path, a folder laid out like the authors' repository at the commit
the worker names (same directories and module names, ``__init__.py`` only where upstream has
one, upstream's relative and top-level imports) holding our own TEST DOUBLES with upstream's
signatures: pure Python, no model. A double "generates" a stream that never stops: the word its
clip says (louder second half: increase), then "more" at every further step, cut where upstream's
code cuts it, and it records how it was called in ``calls.jsonl``. The workers run as real
subprocesses (``python harness_tasks/workers/<name>.py repo=...``) behind ``vocalgrad-worker``.
Passing says the glue imports and calls that API as written, not that the real models work.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import vocalgrad
from harness_tasks.clip_audio import ClipAudio
from harness_tasks.models.worker import WorkerError, WorkerLM

ROOT = Path(__file__).resolve().parents[1]
WORKERS = ROOT / "harness_tasks" / "workers"
PROMPT = vocalgrad.default_prompt("volume")

# how a double hears its clip (a WAV path): louder second half -> "increase"
LISTEN = '''
import array, json, os, wave


def listen(path):
    with wave.open(path) as w:
        pcm = array.array("h", w.readframes(w.getnframes()))
    h = len(pcm) // 2
    power = lambda x: sum(v * v for v in x) / max(1, len(x))
    return "increase" if power(pcm[h:]) > power(pcm[:h]) else "decrease"


def record(folder, **call):
    with open(os.path.join(folder, "calls.jsonl"), "a") as fh:
        fh.write(json.dumps(call, default=repr) + "\\n")
'''

# ---------------------------------------------------------------- MiMo-Audio (XiaomiMiMo/MiMo-Audio@691ce54)
MIMO = {
    # no src/__init__.py and no src/mimo_audio/__init__.py, as upstream
    "src/mimo_audio/mimo_audio.py": '''
        """TEST DOUBLE of MiMo-Audio's src/mimo_audio/mimo_audio.py, not the authors' code."""
        from .process_speechdata import InputSegment
        from ..mimo_audio_tokenizer import MiMoAudioTokenizer
        from .modeling_mimo_audio import MiMoSampler, MiMoStopper
        from .listen import listen, record


        class Tok:
            eos_token_id = 151643


        class MimoAudio:
            def __init__(self, model_path, mimo_audio_tokenizer_path, device=None):
                self.path, self.device = model_path, device or "cpu"
                self.tokenizer = Tok()
                self.im_end_idx, self.group_size, self.audio_channels = 151645, 4, 8
                self.speech_zeroemb_idx, self.empty_token = [1024, 1024, 128], 151667
                self.mimo_audio_tokenizer = MiMoAudioTokenizer.from_pretrained(mimo_audio_tokenizer_path)
                self.task_sampler_configs = {"audio_understanding": {
                    "global": MiMoSampler(do_sample=True, temperature=0.3, top_p=0.95),
                    "local": MiMoSampler(do_sample=True, temperature=0.9, top_p=0.95)}}

            def preprocess_input(self, input=None):
                return {"clip_says": listen(input)}

            def get_input_ids(self, prompt):
                # upstream embeds a segment's empty positions with the ids it was built with; the defaults of
                # InputSegment are not this model's, so a segment built without them would be wrong
                for seg in prompt:
                    if (seg.speech_zeroemb_idx, seg.text_zeroemb_idx) != (self.speech_zeroemb_idx, self.empty_token):
                        raise ValueError(f"segment {seg.text!r} has zero-embedding ids {seg.speech_zeroemb_idx}, "
                                         f"{seg.text_zeroemb_idx}; this model's are {self.speech_zeroemb_idx}, "
                                         f"{self.empty_token}")
                return [[seg.text, seg.audio] for seg in prompt]

            def forward(self, input_ids, return_audio=False, output_audio_path=None, stopping_criteria=None,
                        min_new_tokens=0, max_new_tokens=8192, add_history=False, task_name=None):
                sampler = self.task_sampler_configs[task_name]
                record(self.path, task_name=task_name, max_new_tokens=max_new_tokens, prompt=input_ids,
                       samplers={k: vars(v) for k, v in sampler.items()},
                       stop_tokens=[sorted(s.stop_token_ids) for s in stopping_criteria or []])
                said = [seg[1]["clip_says"] for seg in input_ids if seg[1]]
                steps = [said[-1]] + ["more"] * (max_new_tokens - 1)   # never stops by itself
                return " ".join(steps[:-1])                              # upstream drops the last step
    ''',
    "src/mimo_audio/modeling_mimo_audio.py": '''
        """TEST DOUBLE of MiMo-Audio's modeling_mimo_audio.py (signatures only)."""
        from dataclasses import dataclass


        class MiMoStopper:
            def __init__(self, group_size, audio_channels, stop_tokens=None, max_length=None, min_length=None):
                self.group_size, self.audio_channels = group_size, audio_channels
                self.stop_token_ids = set(stop_tokens or [])


        @dataclass
        class MiMoSampler:
            do_sample: bool | None = None
            temperature: float | None = None
            top_k: int | None = None
            top_p: float | None = None
    ''',
    "src/mimo_audio/process_speechdata.py": '''
        """TEST DOUBLE of MiMo-Audio's process_speechdata.py (signature only)."""


        class InputSegment:
            def __init__(self, text="", audio=None, tokenized_text=None, speech_zeroemb_idx=1024,
                         text_zeroemb_idx=152067, add_sosp_eosp=True):
                self.text, self.audio = text, audio
                self.speech_zeroemb_idx, self.text_zeroemb_idx = speech_zeroemb_idx, text_zeroemb_idx
    ''',
    "src/mimo_audio/listen.py": LISTEN,
    "src/mimo_audio_tokenizer/__init__.py": '''
        from .modeling_audio_tokenizer import MiMoAudioTokenizer
    ''',
    "src/mimo_audio_tokenizer/modeling_audio_tokenizer.py": '''
        class MiMoAudioTokenizer:
            @classmethod
            def from_pretrained(cls, path):
                return cls()
    ''',
}

# ---------------------------------------------------------------- Kimi-Audio (MoonshotAI/Kimi-Audio@2607d51)
KIMI_GENERATE = ('def generate(self, chats, output_type="text", audio_temperature=0.0, audio_top_k=5, '
                 'text_temperature=0.0, text_top_k=5, audio_repetition_penalty=1.0, '
                 'audio_repetition_window_size=64, text_repetition_penalty=1.0, text_repetition_window_size=16, '
                 'max_new_tokens=-1):')
KIMI = {
    "kimia_infer/__init__.py": "",
    "kimia_infer/api/__init__.py": "",
    "kimia_infer/utils/__init__.py": "",
    "kimia_infer/utils/listen.py": LISTEN,
    "kimia_infer/api/kimia.py": '''
        """TEST DOUBLE of kimia_infer/api/kimia.py, not the authors' code."""
        from kimia_infer.utils.listen import listen, record


        class KimiAudio(object):
            def __init__(self, model_path: str, load_detokenizer: bool = True):
                self.path, self.detokenizer = model_path, None

            ''' + KIMI_GENERATE + '''
                assert output_type in ["text", "both"]
                assert all(m["role"] in ["user", "assistant"] for m in chats)
                record(self.path, chats=chats, output_type=output_type, text_temperature=text_temperature,
                       text_top_k=text_top_k, text_repetition_penalty=text_repetition_penalty,
                       max_new_tokens=max_new_tokens)
                said = [listen(m["content"]) for m in chats if m["message_type"] == "audio"]
                steps = [said[-1]] + ["more"] * (max_new_tokens - 1)   # one text token per step, no end token
                return None, " ".join(steps)
    ''',
}

# ---------------------------------------------------------------- Step-Audio 2 (stepfun-ai/Step-Audio2@c22bfade)
STEP = {
    "utils.py": LISTEN,
    "device_utils.py": '''
        def get_device():
            return "cpu"
    ''',
    "stepaudio2.py": '''
        """TEST DOUBLE of Step-Audio2's stepaudio2.py, not the authors' code."""
        from utils import listen, record
        from device_utils import get_device


        class StepAudio2Base:
            def __init__(self, model_path: str):
                self.path = model_path

            def __call__(self, messages: list, **kwargs):
                config = dict(max_new_tokens=2048, pad_token_id=0, eos_token_id=1)
                config.update(kwargs)
                record(self.path, messages=messages, config=config)
                said = [listen(i["audio"]) for m in messages if isinstance(m["content"], list)
                        for i in m["content"] if i["type"] == "audio"]
                steps = [said[-1]] + ["more"] * (config["max_new_tokens"] - 1)   # never says <|EOT|>
                out = steps[:-1]                                                  # upstream drops the last token
                return out, " ".join(out), []


        class StepAudio2(StepAudio2Base):
            pass
    ''',
}


def replica(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def clip(direction: str, name: str, sr: int = 16000) -> ClipAudio:
    g = np.linspace(0.1, 1.0, sr) if direction == "increase" else np.linspace(1.0, 0.1, sr)
    y = (0.3 * g * np.sin(2 * np.pi * 220 * np.arange(sr) / sr)).astype(np.float32)
    return ClipAudio(name, {"array": y, "sampling_rate": sr})


def ask(cmd: str, clips, *, toks: int, log: Path | None = None, **kw) -> tuple[list[str], WorkerLM]:
    lm = WorkerLM(cmd=cmd, answer_log=str(log) if log else "none", retry_unparsed=False, **kw)
    try:
        out = lm.generate_until([(PROMPT, {"until": [], "max_gen_toks": toks}, {"audio": [c]}) for c in clips],
                                disable_tqdm=True)
    finally:
        lm.close()
    return out, lm


def calls(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "calls.jsonl").read_text().splitlines()]


def test_mimo_worker_imports_like_upstream_and_decodes_greedily_with_the_budget(tmp_path):
    repo = replica(tmp_path / "MiMo-Audio", MIMO)
    # the replica is faithful: with src/ on the path, upstream's relative import cannot work
    bad = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(repo / 'src')!r}); "
                          "import mimo_audio.mimo_audio"], capture_output=True, text=True)
    assert bad.returncode != 0 and "relative import beyond top-level package" in bad.stderr
    model = tmp_path / "model"
    model.mkdir()
    cmd = f"{sys.executable} {WORKERS / 'mimo_audio.py'} repo={repo} model_path={model} tokenizer_path=tok"
    out, lm = ask(cmd, [clip("increase", "a"), clip("decrease", "b")], toks=5, log=tmp_path / "log",
                  audio_first=True)
    assert out == ["increase more more more more", "decrease more more more more"]   # 5 tokens: the budget
    (c, _) = calls(model)
    assert c["task_name"] == "vocalgrad_greedy" and c["max_new_tokens"] == 6
    greedy = {"do_sample": False, "temperature": None, "top_k": None, "top_p": None}
    assert c["samplers"] == {"global": greedy, "local": greedy}
    assert c["stop_tokens"] == [[151643, 151645]]                                       # <eos>, <|im_end|>
    # audio first, one clip: the prompt of upstream's get_audio_understanding_sft_prompt
    assert c["prompt"] == [["<|im_start|>user\n", None], ["", {"clip_says": "increase"}], [PROMPT, None],
                           ["<|im_end|>\n", None], ["<|im_start|>assistant\n", None], ["<think>\n\n</think>\n", None]]
    assert lm.hello["generation"]["decoding"] == "greedy"
    logged = [json.loads(line) for line in (tmp_path / "log" / "answers.jsonl").read_text().splitlines()]
    assert [r["worker"]["generation"]["global_sampler"] for r in logged] == ["MiMoSampler(do_sample=False)"] * 2
    assert all("691ce54144a6844cc641fd96046a6ba20776c8b0" in r["worker"]["generation"]["upstream"] for r in logged)
    # text first (the benchmark's default order): the request's order, as for every other route; a system turn
    ask(cmd, [clip("increase", "c")], toks=3, system_prompt="Be brief.")
    assert [seg[0] for seg in calls(model)[-1]["prompt"][:6]] == ["<|im_start|>system\n", "Be brief.", "<|im_end|>\n",
                                                                 "<|im_start|>user\n", PROMPT, ""]


def test_mimo_worker_with_a_repo_that_is_not_mimo_audio_says_so_in_one_line(tmp_path):
    cmd = f"{sys.executable} {WORKERS / 'mimo_audio.py'} repo={tmp_path}"
    with pytest.raises(WorkerError, match=r"mimo_audio worker: .* has no src/mimo_audio; pass repo=<a MiMo-Audio"):
        ask(cmd, [clip("increase", "a")], toks=5)


@pytest.mark.parametrize("word, opened", [("on", True), ("true", True), ("off", False), ("auto", False)])
def test_mimo_worker_reads_thinking_as_every_route_does(tmp_path, word, opened):
    repo, model = replica(tmp_path / "MiMo-Audio", MIMO), tmp_path / "model"
    model.mkdir()
    cmd = f"{sys.executable} {WORKERS / 'mimo_audio.py'} repo={repo} model_path={model} tokenizer_path=tok"
    ask(f"{cmd} thinking={word}", [clip("increase", "a")], toks=3)
    assert calls(model)[-1]["prompt"][-1] == ["<think>\n" if opened else "<think>\n\n</think>\n", None]


def test_mimo_worker_refuses_an_unknown_thinking_word_in_one_line(tmp_path):
    cmd = f"{sys.executable} {WORKERS / 'mimo_audio.py'} repo={tmp_path} thinking=maybe"
    with pytest.raises(WorkerError, match=r"mimo_audio worker: thinking must be on or off .*'maybe'"):
        ask(cmd, [clip("increase", "a")], toks=5)


def test_kimi_worker_calls_generate_greedily_with_the_budget(tmp_path):
    repo = replica(tmp_path / "Kimi-Audio", KIMI)
    model = tmp_path / "model"
    model.mkdir()
    cmd = f"{sys.executable} {WORKERS / 'kimi_audio.py'} repo={repo} model_path={model}"
    out, lm = ask(cmd, [clip("increase", "a"), clip("decrease", "b")], toks=4, system_prompt="Be brief.")
    assert out == ["increase more more more", "decrease more more more"]
    c = calls(model)[0]
    assert c["text_temperature"] == 0.0 and c["max_new_tokens"] == 4 and c["output_type"] == "text"
    assert c["text_repetition_penalty"] == 1.0
    assert [(m["role"], m["message_type"]) for m in c["chats"]] == [("user", "text"), ("user", "text"),
                                                                    ("user", "audio")]
    assert [m["content"] for m in c["chats"][:2]] == ["Be brief.", PROMPT]
    assert lm.hello["generation"]["decoding"] == "greedy"
    assert "2607d515f5b7dffa1dcc7526f9f26feb48e356c4" in lm.hello["generation"]["upstream"]


def test_kimi_worker_refuses_a_generate_without_text_temperature_in_one_line(tmp_path):
    files = dict(KIMI)
    files["kimia_infer/api/kimia.py"] = files["kimia_infer/api/kimia.py"].replace("text_temperature=0.0, ", "")
    repo = replica(tmp_path / "Kimi-Audio", files)
    cmd = f"{sys.executable} {WORKERS / 'kimi_audio.py'} repo={repo} model_path={tmp_path}"
    with pytest.raises(WorkerError, match=r"kimi_audio worker: KimiAudio.generate takes no text_temperature; .*"
                                          r"2607d515f5b7dffa1dcc7526f9f26feb48e356c4"):
        ask(cmd, [clip("increase", "a")], toks=5)


def test_step_audio2_worker_imports_its_neighbours_and_decodes_greedily_with_the_budget(tmp_path):
    repo = replica(tmp_path / "Step-Audio2", STEP)
    model = tmp_path / "model"
    model.mkdir()
    cmd = f"{sys.executable} {WORKERS / 'step_audio2.py'} repo={repo} model_path={model}"
    out, lm = ask(cmd, [clip("decrease", "a")], toks=5)
    assert out == ["decrease more more more more"]
    c = calls(model)[0]
    assert c["config"]["max_new_tokens"] == 6 and c["config"]["do_sample"] is False
    assert c["config"]["num_beams"] == 1 and c["config"]["repetition_penalty"] == 1.0
    assert [m["role"] for m in c["messages"]] == ["system", "human", "assistant"]
    assert c["messages"][0]["content"] == "You are a helpful assistant." and c["messages"][2]["content"] is None
    assert [i["type"] for i in c["messages"][1]["content"]] == ["text", "audio"]        # the request's order
    assert lm.hello["generation"]["decoding"] == "greedy"
