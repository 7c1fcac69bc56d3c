"""Decoding parity: the same tiny checkpoint through ``vocalgrad-hf`` and through an OpenAI-compatible
server gives the same answers; and greedy decoding stops at the chat template's end of turn.

The server here is an in-process HTTP server on 127.0.0.1 answering ``/chat/completions`` with
transformers' ``generate`` on the tiny Audio Flamingo 3 (tests/_harness_helpers.py). It decodes as
vLLM's OpenAI server does with ``--generation-config auto`` (its default), which is a **double** of
vLLM's behaviour written from its ``to_sampling_params`` (vllm-project/vllm,
``entrypoints/openai/protocol.py``): every sampling field the request leaves out (temperature,
top-p, top-k, min-p, repetition penalty) comes from the checkpoint's generation_config.json, and
``stop_token_ids`` are added to the end tokens. The checkpoint's generation config is the newer
AF3 conversion's: sampling, repetition penalty 1.05 and one end token, the tokenizer's
``<|endoftext|>``.
"""

from __future__ import annotations

import base64
import copy
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
sf = pytest.importorskip("soundfile")

from _harness_helpers import build_tiny_audio_flamingo3  # noqa: E402

from harness_tasks.clip_audio import ClipAudio  # noqa: E402
from harness_tasks.models.families import Item, load  # noqa: E402
from harness_tasks.models.hf import HFAudioLM  # noqa: E402
from harness_tasks.models.openai import GREEDY, OpenAIAudioLM  # noqa: E402

PROMPT = "Does the pitch increase or decrease?"
SR = 16000


@pytest.fixture(scope="module")
def af3_dir(tmp_path_factory):
    """Tiny AF3 whose generation config has a single end token, <|endoftext|> (the newer conversion)."""
    folder = build_tiny_audio_flamingo3(tmp_path_factory.mktemp("af3-lone-eos"))
    path = folder / "generation_config.json"
    cfg = json.loads(path.read_text())
    tok = json.loads((folder / "tokenizer_config.json").read_text())
    pad = cfg["pad_token_id"]
    assert cfg["eos_token_id"] != pad and tok.get("pad_token") == "<|endoftext|>"
    cfg["eos_token_id"] = pad                     # <|endoftext|> only
    path.write_text(json.dumps(cfg))
    return folder


@pytest.fixture(scope="module")
def af3(af3_dir):
    return load(str(af3_dir), dtype="float32", device="cpu")


def clip(name: str, seed: int) -> ClipAudio:
    """A 1-s clip whose samples are 16-bit values (k / 32768, |y| < 0.5), so that the server's WAV
    carries exactly the samples the hf route reads."""
    rng = np.random.default_rng(seed)
    t = np.arange(SR) / SR
    y = 0.3 * np.linspace(0.2, 1, SR) * np.sin(2 * np.pi * (180 + 40 * seed) * t) + 0.01 * rng.standard_normal(SR)
    y = (np.round(y * 32768) / 32768).astype(np.float32)
    return ClipAudio(name, {"array": y, "sampling_rate": SR})


class VllmLikeServer:
    """OpenAI-compatible chat completions over a :class:`LoadedModel` (see the module docstring)."""

    def __init__(self, lm):
        self.lm = lm
        self.seen: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:                    # one generate at a time
                    text = outer.answer(body)
                payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def settings(self, body: dict):
        """The generation config vLLM's ``--generation-config auto`` would decode this request with."""
        own = self.lm.model.generation_config
        cfg = copy.deepcopy(own)
        temperature = body.get("temperature", own.temperature)
        cfg.do_sample = bool(temperature and temperature > 0)
        for field in ("top_p", "top_k", "repetition_penalty"):
            if body.get(field) is not None:
                setattr(cfg, field, body[field])
        eos = own.eos_token_id
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        cfg.eos_token_id = eos + [i for i in body.get("stop_token_ids") or [] if i not in eos]
        cfg.max_new_tokens = body["max_tokens"]
        return cfg

    def answer(self, body: dict) -> str:
        msgs = body["messages"]
        system = next((m["content"] for m in msgs if m["role"] == "system"), None)
        parts = msgs[-1]["content"]
        texts = [p["text"] for p in parts if p["type"] == "text"]
        audios = []
        for p in parts:
            if p["type"] == "input_audio":
                y, sr = sf.read(io.BytesIO(base64.b64decode(p["input_audio"]["data"])), dtype="float32")
                audios.append((y, sr))
        item = Item("".join(texts), audios, audio_first=parts[0]["type"] != "text", system=system)
        cfg = self.settings(body)
        self.seen.append({"repetition_penalty": cfg.repetition_penalty, "do_sample": cfg.do_sample,
                          "eos_token_id": list(cfg.eos_token_id)})
        batch = self.lm.batch([item])
        import torch

        with torch.inference_mode():
            out = self.lm.model.generate(**batch, generation_config=cfg)
        return self.lm.tokenizer.decode(out[0, batch["input_ids"].shape[1]:], skip_special_tokens=True)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def requests(n: int = 3):
    return [(PROMPT, {"until": [], "max_gen_toks": 8, "do_sample": False}, {"audio": [clip(f"c{i}", i)]})
            for i in range(n)]


def test_vocalgrad_hf_and_a_vllm_like_server_give_identical_answers(af3_dir, af3):
    end = af3.tokenizer.convert_tokens_to_ids("<|im_end|>")
    hf = HFAudioLM(pretrained=str(af3_dir), dtype="float32", device="cpu", answer_log="none", retry_unparsed=False)
    assert hf.lm.stop_token_ids == [end]
    reqs = requests()
    want = hf.generate_until(reqs, disable_tqdm=True)
    server = VllmLikeServer(af3)
    try:
        api = OpenAIAudioLM(model="tiny-af3", base_url=server.url, answer_log="none", retry_unparsed=False,
                            concurrency=1, stop_token_ids=str(end))
        got = api.generate_until(reqs, disable_tqdm=True)
        assert got == want and any(a.strip() for a in got)
        # what the server decoded with: greedy, no repetition penalty, stopping at <|im_end|> too,
        # although the checkpoint samples with a 1.05 penalty and names <|endoftext|> only
        pad = af3.tokenizer.pad_token_id
        assert af3.model.generation_config.repetition_penalty == 1.05 and af3.model.generation_config.do_sample
        assert server.seen == [{"repetition_penalty": 1.0, "do_sample": False, "eos_token_id": [pad, end]}] * 3
        # the OpenAI fields alone leave vLLM's defaults in: the checkpoint's penalty and end token
        server.seen.clear()
        OpenAIAudioLM(model="tiny-af3", base_url=server.url, answer_log="none", retry_unparsed=False,
                      concurrency=1, greedy="standard").generate_until(reqs[:1], disable_tqdm=True)
        assert server.seen == [{"repetition_penalty": 1.05, "do_sample": False, "eos_token_id": [pad]}]
    finally:
        server.close()
    card = api.model_card()
    assert card["route"] == "vocalgrad-openai" and card["stop_tokens"] == [end]
    assert card["decoding"]["body"] == {"temperature": 0.0, **GREEDY["full"], "stop_token_ids": [end],
                                        "max_tokens": "task"}
    hcard = hf.model_card()
    assert hcard["route"] == "vocalgrad-hf" and "<|im_end|>" in hcard["stop_tokens"]
    assert hcard["decoding"]["do_sample"] is False and hcard["decoding"]["eos_token_id"] == [pad, end]
    assert hf.get_model_info()["vocalgrad_model"] == hcard


def test_af3_greedy_stops_at_im_end_when_the_generation_config_names_only_endoftext(af3):
    """The model is made to say <|im_end|> at its third step (a forward hook on the LM head adds
    1e4 to that logit): greedy stops there; with the checkpoint's lone <|endoftext|> it would run on
    to the budget."""
    end = af3.tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert af3.model.generation_config.eos_token_id == af3.tokenizer.pad_token_id
    assert af3.stop_token_ids == [end] and af3.generation_settings()["eos_token_id"] == [af3.tokenizer.pad_token_id, end]
    calls = {"n": 0}

    def hook(module, args, out):
        calls["n"] += 1
        if calls["n"] == 3:
            out = out.clone()
            out[..., end] += 1e4
        return out

    head = af3.model.get_output_embeddings()
    handle = head.register_forward_hook(hook)
    try:
        c = clip("s", 7)
        batch = af3.batch([Item(PROMPT, [(c["array"], c["sampling_rate"])])])
        stopped = af3.generate(batch, max_new_tokens=8)[0]
        steps_stopped, calls["n"] = calls["n"], 0
        own, af3.stop_token_ids = af3.stop_token_ids, []
        try:
            ran_on = af3.generate(batch, max_new_tokens=8)[0]
            steps_ran_on = calls["n"]
        finally:
            af3.stop_token_ids = own
    finally:
        handle.remove()
    # one LM-head call per generated token: 3 (two, then <|im_end|>) against the whole budget of 8
    assert (steps_stopped, steps_ran_on) == (3, 8) and ran_on.startswith(stopped) and len(ran_on) > len(stopped)
