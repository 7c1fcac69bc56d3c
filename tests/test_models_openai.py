"""vocalgrad-openai against a real HTTP server on 127.0.0.1 started by the test."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import soundfile as sf

from _harness_helpers import default_signals
from _timing import hang_guard
from harness_tasks.clip_audio import ClipAudio
from harness_tasks.models.base import Answer
from harness_tasks.models.answer_log import AnswerLog
from harness_tasks.models.openai import OpenAIAudioLM
from harness_tasks.models.providers import Reply
from harness_tasks.parsing import classify_answer

PROMPT = 'Does the volume increase or decrease over time?\n\nAnswer with only one word: "increase" or "decrease".'


def ramp_clip(direction: str, name: str, sr: int = 8000) -> ClipAudio:
    t = np.arange(sr) / sr
    g = np.linspace(0.1, 1.0, sr) if direction == "increase" else np.linspace(1.0, 0.1, sr)
    f = 200 + sum(map(ord, name)) % 200                      # distinct audio per clip name
    return ClipAudio(name, {"array": (0.3 * g * np.sin(2 * np.pi * f * t)).astype(np.float32), "sampling_rate": sr})


class Server:
    """Scripted chat-completions server; answers by listening to the WAV it receives."""

    def __init__(self):
        self.script: list[str] = []   # actions consumed one per request: ok, 429, 500, 400, malformed, slow, nocontent
        self.default = "ok"
        self.slow_seconds = 1.0        # how long a "slow" reply takes
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                    action = outer.script.pop(0) if outer.script else outer.default
                if action == "slow":
                    time.sleep(outer.slow_seconds)
                    action = "ok"
                if action in ("429", "500", "400"):
                    self.send_response(int(action))
                    if action in ("429", "500"):         # the SDK honours it (short waits keep the test fast)
                        self.send_header("retry-after-ms", "5")
                    self.end_headers()
                    self.wfile.write(b'{"error": "scripted"}')
                    return
                if action == "malformed":
                    payload = b'{"choices": [ {"mess'
                elif action == "nocontent":
                    payload = json.dumps({"choices": []}).encode()
                elif action == "empty":
                    payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": ""}}]}).encode()
                else:
                    payload = json.dumps({"choices": [{"message": {"role": "assistant",
                                                                   "content": outer.listen(body)}}]}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def listen(body: dict) -> str:
        content = body["messages"][-1]["content"]
        audio = [p for p in content if p["type"] in ("input_audio", "audio_url")][0]
        if audio["type"] == "input_audio":
            assert audio["input_audio"]["format"] == "wav"
            b64 = audio["input_audio"]["data"]
        else:
            url = audio["audio_url"]["url"]
            assert url.startswith("data:audio/wav;base64,")
            b64 = url.split(",", 1)[1]
        y, sr = sf.read(io.BytesIO(base64.b64decode(b64)))
        h = len(y) // 2
        return "Increase." if np.sqrt(np.mean(y[h:] ** 2)) > np.sqrt(np.mean(y[:h] ** 2)) else "decrease"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


class Req:
    def __init__(self, prompt, audio, max_toks=128):
        self.args = (prompt, {"until": [], "max_gen_toks": max_toks, "do_sample": False}, {"audio": [audio]})


def make(server, tmp_path, **kw):
    args = dict(model="tiny-audio", base_url=server.url, cache=str(tmp_path / "cache"), backoff=0.01,
                max_retries=3, timeout=hang_guard(5), concurrency=4)
    args.update(kw)
    return OpenAIAudioLM(**args)


def test_answers_follow_the_audio_and_request_shape(server, tmp_path, monkeypatch):
    monkeypatch.setenv("VG_TEST_KEY", "sk-test")
    lm = make(server, tmp_path, api_key_env="VG_TEST_KEY")
    reqs = [Req(PROMPT, ramp_clip(d, f"c{i}")) for i, d in enumerate(["increase", "decrease"] * 3)]
    out = lm.generate_until(reqs, disable_tqdm=True)
    assert [classify_answer(a)[0] for a in out] == ["increase", "decrease"] * 3
    r = server.requests[0]
    assert r["path"] == "/v1/chat/completions" and r["auth"] == "Bearer sk-test"
    body = r["body"]
    assert body["model"] == "tiny-audio" and body["max_tokens"] == 128 and body["temperature"] == 0.0
    assert [p["type"] for p in body["messages"][0]["content"]] == ["text", "input_audio"]
    assert body["messages"][0]["content"][0]["text"] == PROMPT


def test_audio_url_and_audio_first(server, tmp_path):
    lm = make(server, tmp_path, audio_format="audio_url", audio_first="true", cache="none")
    out = lm.generate_until([Req(PROMPT, ramp_clip("increase", "a"))], disable_tqdm=True)
    assert classify_answer(out[0])[0] == "increase"
    assert [p["type"] for p in server.requests[0]["body"]["messages"][0]["content"]] == ["audio_url", "text"]


@pytest.mark.parametrize("failure", ["429", "500", "malformed", "nocontent", "slow"])
def test_transient_failures_are_retried(server, tmp_path, failure):
    server.script = [failure, failure]
    timeout = hang_guard(0.5)          # a reply that comes: in time, however busy the machine
    server.slow_seconds = 2 * timeout  # a slow reply: always past the client's limit
    lm = make(server, tmp_path, concurrency=1, timeout=timeout, cache="none")
    out = lm.generate_until([Req(PROMPT, ramp_clip("decrease", "x"))], disable_tqdm=True)
    assert classify_answer(out[0]) == ("decrease", "parsed")
    assert len(server.requests) == 3 and lm.n_errors == 0


def test_persistent_failure_becomes_error_answer_not_a_crash(server, tmp_path):
    server.default = "500"
    lm = make(server, tmp_path, max_retries=2, concurrency=2)
    reqs = [Req(PROMPT, ramp_clip("increase", f"e{i}")) for i in range(3)]
    out = lm.generate_until(reqs, disable_tqdm=True)
    assert all(classify_answer(a)[1] == "error" for a in out)
    assert "HTTP 500" in out[0] and "after 3 attempts" in out[0]
    assert len(server.requests) == 3 * 3 and lm.n_errors == 3
    assert len(AnswerLog(tmp_path / "cache")) == 0            # errors are not reused
    # an error is not "unparsed": no 256-token retry for it
    assert not any(getattr(a, "retried", False) for a in out)


def test_client_error_is_not_retried(server, tmp_path):
    server.script = ["400"]
    lm = make(server, tmp_path, cache="none")
    out = lm.generate_until([Req(PROMPT, ramp_clip("increase", "b"))], disable_tqdm=True)
    assert classify_answer(out[0])[1] == "error" and len(server.requests) == 1


def test_cache_resumes_and_survives_a_cut_off_line(server, tmp_path):
    reqs = [Req(PROMPT, ramp_clip(d, f"k{i}")) for i, d in enumerate(["increase", "decrease", "increase"])]
    first = make(server, tmp_path).generate_until(reqs, disable_tqdm=True)
    assert len(server.requests) == 3
    path = tmp_path / "cache" / "answers.jsonl"
    with open(path, "a") as fh:
        fh.write('{"key": "abc", "answ')                    # an interrupted write
    server.default = "500"                                    # the server is down now
    again = make(server, tmp_path).generate_until(reqs, disable_tqdm=True)
    assert list(again) == list(first) and len(server.requests) == 3
    # different audio or a different model is a different key
    other = make(server, tmp_path, model="other", max_retries=0).generate_until(reqs[:1], disable_tqdm=True)
    assert classify_answer(other[0])[1] == "error"
    lines = [json.loads(ln) for ln in path.read_text().splitlines() if ln.startswith('{"key"') and ln.endswith("}")]
    assert sum(not ln["error"] for ln in lines) == 3 and sum(ln["error"] for ln in lines) == 1


def test_unparsed_answer_is_retried_once_with_256_tokens(server, tmp_path, monkeypatch):
    lm = make(server, tmp_path, cache="none")
    calls = []

    def fake_send(body):
        calls.append(body["max_tokens"])
        return Reply("I think it goes up" if body["max_tokens"] == 128 else "increase")

    monkeypatch.setattr(lm.provider, "send", fake_send)
    out = lm.generate_until([Req(PROMPT, ramp_clip("increase", "u"))], disable_tqdm=True)
    assert calls == [128, 256] and out[0] == "increase"
    assert isinstance(out[0], Answer) and out[0].retried
    lm2 = make(server, tmp_path, cache="none", retry_unparsed="false")
    calls.clear()
    monkeypatch.setattr(lm2.provider, "send", fake_send)
    out2 = lm2.generate_until([Req(PROMPT, ramp_clip("increase", "u"))], disable_tqdm=True)
    assert calls == [128] and classify_answer(out2[0])[1] == "unparsed"


def test_bad_arguments():
    with pytest.raises(ValueError, match="model="):
        OpenAIAudioLM(cache="none")
    with pytest.raises(ValueError, match="audio_format"):
        OpenAIAudioLM(model="m", audio_format="mp3", cache="none")
    with pytest.raises(TypeError, match="unknown model argument"):
        OpenAIAudioLM(model="m", cache="none", tempature=0)


def test_body_fields_can_be_set_and_left_out(server, tmp_path):
    google = {"extra_body": {"google": {"thinking_config": {"thinking_budget": 0, "include_thoughts": False}}}}
    lm = make(server, tmp_path, max_tokens=None, temperature="none", max_completion_tokens=64, seed=7,
              reasoning_effort="low", extra_body=json.dumps(google), system_prompt="Be brief.")
    out = lm.generate_until([Req(PROMPT, ramp_clip("increase", "f"))], disable_tqdm=True)
    assert classify_answer(out[0])[0] == "increase"
    body = server.requests[0]["body"]
    assert "max_tokens" not in body and "temperature" not in body
    assert body["max_completion_tokens"] == 64 and body["seed"] == 7 and body["reasoning_effort"] == "low"
    assert body["extra_body"] == google["extra_body"]
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    # a dict works as well (JSON --model_args); the task budget follows the request
    lm2 = make(server, tmp_path, extra_body={"top_k": 1}, max_completion_tokens="task", cache="none")
    lm2.generate_until([Req(PROMPT, ramp_clip("increase", "g"), max_toks=32)], disable_tqdm=True)
    body2 = server.requests[-1]["body"]
    assert body2["top_k"] == 1 and body2["max_tokens"] == 32 and body2["max_completion_tokens"] == 32
    with pytest.raises(ValueError, match="extra_body must be a JSON object"):
        make(server, tmp_path, extra_body="{nope")
    with pytest.raises(ValueError, match="max_tokens must be"):
        make(server, tmp_path, max_tokens="lots")


def test_empty_reply_is_asked_again_with_a_larger_budget_and_never_logged(server, tmp_path):
    server.script = ["empty"]
    lm = make(server, tmp_path, concurrency=1)
    out = lm.generate_until([Req(PROMPT, ramp_clip("decrease", "m"))], disable_tqdm=True)
    assert classify_answer(out[0]) == ("decrease", "parsed")
    assert [r["body"]["max_tokens"] for r in server.requests] == [128, 512]
    # always empty: an error answer, not a cached success; a rerun asks again
    server.default = "empty"
    req = Req(PROMPT, ramp_clip("increase", "n"))
    out = make(server, tmp_path, concurrency=1).generate_until([req], disable_tqdm=True)
    assert classify_answer(out[0])[1] == "error" and "empty reply" in out[0]
    n = len(server.requests)
    make(server, tmp_path, concurrency=1).generate_until([req], disable_tqdm=True)
    assert len(server.requests) == n + 2
    logged = [json.loads(ln) for ln in (tmp_path / "cache" / "answers.jsonl").read_text().splitlines()]
    assert all(e["error"] for e in logged if e["clip_id"] == "n")


def test_cache_key_covers_base_url_and_every_generation_setting(server, tmp_path):
    req = [Req(PROMPT, ramp_clip("increase", "k"))]
    make(server, tmp_path).generate_until(req, disable_tqdm=True)
    make(server, tmp_path).generate_until(req, disable_tqdm=True)
    assert len(server.requests) == 1                               # same settings: from the log
    for change in ({"temperature": 0.5}, {"seed": 3}, {"extra_body": {"x": 1}}, {"max_tokens": 64},
                   {"system_prompt": "Hi"}, {"base_url": server.url + "/"}):
        n = len(server.requests)
        if "base_url" in change:                                   # same server under another URL
            change = {"base_url": server.url.replace("127.0.0.1", "localhost")}
        make(server, tmp_path, **change).generate_until(req, disable_tqdm=True)
        assert len(server.requests) == n + 1, change
    # settings that do not change an answer do not change the key
    make(server, tmp_path, concurrency=1, timeout=9, max_retries=1).generate_until(req, disable_tqdm=True)
    assert len(server.requests) == 7


_INTERRUPTED = textwrap.dedent("""
    import sys
    import numpy as np
    from harness_tasks.clip_audio import ClipAudio
    from harness_tasks.models.openai import OpenAIAudioLM
    url, folder = sys.argv[1], sys.argv[2]
    lm = OpenAIAudioLM(model="m", base_url=url, answer_log=folder, concurrency=2, timeout=30, max_retries=0)
    sr = 8000
    t = np.arange(sr) / sr
    clips = [ClipAudio(f"c{i}", {"array": (0.3 * np.linspace(0.1, 1, sr) * np.sin(2 * np.pi * (200 + i) * t))
                                 .astype(np.float32), "sampling_rate": sr}) for i in range(20)]
    prompt = sys.argv[3]
    reqs = [(prompt, {"until": [], "max_gen_toks": 128}, {"audio": [c]}) for c in clips]
    print("ready", flush=True)
    lm.generate_until(reqs, disable_tqdm=True)
    print("finished", flush=True)
""")


def test_ctrl_c_cancels_unsent_requests_and_keeps_the_log(server, tmp_path):
    server.default = "slow"                                        # 1 s per reply
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", _INTERRUPTED, server.url, str(tmp_path / "log"), PROMPT],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=default_signals)  # SIGINT works even when the suite runs in the background
    deadline = time.time() + 60
    while len(server.requests) < 3 and time.time() < deadline:    # 2 answered, the next 2 on the wire
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "finished" not in out and "KeyboardInterrupt" in err
    time.sleep(0.2)
    sent = len(server.requests)
    assert 3 <= sent <= 6                                          # the other 14+ were never sent
    logged = [json.loads(ln) for ln in (tmp_path / "log" / "answers.jsonl").read_text().splitlines()]
    assert len(logged) == sent and not any(e["error"] for e in logged)   # in-flight answers kept too
    assert all(classify_answer(e["answer"])[1] == "parsed" for e in logged)
