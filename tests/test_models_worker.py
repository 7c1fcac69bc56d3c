"""vocalgrad-worker: a model in another process over the JSON-lines protocol (real subprocesses)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import vocalgrad
from harness_tasks.clip_audio import ClipAudio
from harness_tasks.models.worker import WorkerError, WorkerLM
from harness_tasks.parsing import classify_answer, is_error_answer

ROOT = Path(__file__).resolve().parents[1]
PROMPT = vocalgrad.default_prompt("volume")

# A stdlib worker that listens: louder second half -> "increase". It prints to stdout before and
# after the handshake (stray output must not break the protocol) and can be told to misbehave.
FAKE = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {workers!r})
    from protocol import serve, parse_args
    print("loading weights... (a stray print before the handshake)")
    args = parse_args(sys.argv[1:])
    calls = 0
    def answer(req):
        global calls
        calls += 1
        print("stray print while answering", flush=True)
        os.write(1, b"raw C-level write to fd 1\\n")
        if args.get("crash_at") and calls == int(args["crash_at"]):
            sys.stderr.write("Traceback: CUDA error: an illegal memory access was encountered\\n")
            sys.stderr.flush()
            os._exit(3)
        if args.get("fail") and args["fail"] in req.audios[0]["clip_id"]:
            raise RuntimeError("scripted failure")
        (y, sr), = req.audio_samples()
        h = len(y) // 2
        loud = lambda x: sum(v * v for v in x) / max(1, len(x))
        words = "increase" if loud(y[h:]) > loud(y[:h]) else "decrease"
        order = "".join(p["type"][0] for p in req.parts)
        return f"{{words}} [{{order}} {{req.max_new_tokens}}]"
    serve(answer, worker="fake", model="fake-model", version="1")
""").format(workers=str(ROOT / "harness_tasks" / "workers"))


def ramp(direction: str, name: str, sr: int = 8000) -> ClipAudio:
    g = np.linspace(0.1, 1.0, sr) if direction == "increase" else np.linspace(1.0, 0.1, sr)
    f = 200 + sum(map(ord, name)) % 100
    return ClipAudio(name, {"array": (0.3 * g * np.sin(2 * np.pi * f * np.arange(sr) / sr)).astype(np.float32),
                            "sampling_rate": sr})


def req(clip, toks=128):
    return (PROMPT, {"until": [], "max_gen_toks": toks}, {"audio": [clip]})


@pytest.fixture
def fake(tmp_path):
    path = tmp_path / "fake_worker.py"
    path.write_text(FAKE)
    return f"{sys.executable} {path}"


def test_worker_answers_follow_the_audio_despite_stray_prints(fake, tmp_path):
    lm = WorkerLM(cmd=fake, answer_log="none")
    clips = [ramp(d, f"c{i}") for i, d in enumerate(["increase", "decrease"] * 2)]
    out = lm.generate_until([req(c) for c in clips], disable_tqdm=True)
    assert [classify_answer(a)[0] for a in out] == ["increase", "decrease"] * 2
    assert out[0].endswith("[ta 128]")                       # text, then audio; the task's budget
    assert lm.hello["worker"] == "fake" and lm.hello["protocol"] == 1
    assert any("stray print" in ln for ln in lm._stderr)       # stray output went to the log tail
    first = WorkerLM(cmd=fake, audio_first=True, audio="path", answer_log="none")
    (a,) = first.generate_until([req(clips[0], toks=16)], disable_tqdm=True)
    assert a.startswith("increase") and a.endswith("[at 16]")
    lm.close()
    first.close()


def test_failed_request_is_an_error_answer_and_the_worker_goes_on(fake, tmp_path):
    lm = WorkerLM(cmd=f"{fake} fail=bad", answer_log=str(tmp_path / "log"))
    out = lm.generate_until([req(ramp("increase", "ok1")), req(ramp("increase", "bad")),
                             req(ramp("decrease", "ok2"))], disable_tqdm=True)
    assert classify_answer(out[0])[0] == "increase" and classify_answer(out[2])[0] == "decrease"
    assert is_error_answer(out[1]) and "scripted failure" in out[1]
    lm.close()


def test_worker_crash_is_a_clear_error_with_its_stderr_tail_and_the_log_resumes(fake, tmp_path):
    clips = [ramp("increase", f"k{i}") for i in range(4)]
    lm = WorkerLM(cmd=f"{fake} crash_at=3", answer_log=str(tmp_path / "log"))
    with pytest.raises(WorkerError, match=r"exited \(code 3\)[\s\S]*illegal memory access"):
        lm.generate_until([req(c) for c in clips], disable_tqdm=True)
    again = WorkerLM(cmd=f"{fake} crash_at=3", answer_log=str(tmp_path / "log"))
    out = again.generate_until([req(c) for c in clips], disable_tqdm=True)  # 2 from the log, 2 asked
    assert again.n_reused == 2 and again.n_asked == 2
    assert all(classify_answer(a)[0] == "increase" for a in out)
    again.close()


def test_bad_worker_commands(tmp_path):
    with pytest.raises(WorkerError, match="cannot start"):
        WorkerLM(cmd="/nonexistent/worker", answer_log="none").generate_until([req(ramp("increase", "a"))])
    wrong = tmp_path / "wrong.py"
    wrong.write_text('print(\'@@vocalgrad@@ {"type": "hello", "protocol": 99}\', flush=True)\n'
                     'import sys\nsys.stdin.read()\n')
    with pytest.raises(WorkerError, match="protocol 99"):
        WorkerLM(cmd=f"{sys.executable} {wrong}", answer_log="none").generate_until([req(ramp("increase", "a"))])
    dies = tmp_path / "dies.py"
    dies.write_text("import sys\nsys.stderr.write('ImportError: No module named kimia_infer\\n')\nsys.exit(1)\n")
    with pytest.raises(WorkerError, match="kimia_infer"):
        WorkerLM(cmd=f"{sys.executable} {dies}", answer_log="none").generate_until([req(ramp("increase", "a"))])
    with pytest.raises(ValueError, match="cmd="):
        WorkerLM(answer_log="none")


def test_model_worker_modules_build_the_documented_messages():
    """The Kimi-Audio / Step-Audio 2 message builders (the models themselves are not run here)."""
    from harness_tasks.workers import kimi_audio, step_audio2
    from harness_tasks.workers.protocol import Request

    r = Request({"id": 1, "prompt": "p", "parts": [{"type": "text", "text": "Q?"}, {"type": "audio", "index": 0}],
                 "audios": [{"clip_id": "c", "format": "wav", "path": "/x.wav"}], "max_new_tokens": 8})
    assert kimi_audio.messages(r, ["/x.wav"]) == [
        {"role": "user", "message_type": "text", "content": "Q?"},
        {"role": "user", "message_type": "audio", "content": "/x.wav"}]
    m = step_audio2.messages(r, ["/x.wav"], "sys")
    assert m[0] == {"role": "system", "content": "sys"} and m[2] == {"role": "assistant", "content": None}
    assert m[1]["content"] == [{"type": "text", "text": "Q?"}, {"type": "audio", "audio": "/x.wav"}]


@pytest.mark.slow
def test_transformers_worker_end_to_end_through_vocalgrad_eval(tmp_path):
    """A tiny Qwen2-Audio in a worker subprocess, driven by vocalgrad-eval in another subprocess;
    the answers equal vocalgrad-hf's in-process answers."""
    import subprocess

    pytest.importorskip("torch")
    from _harness_helpers import build_tiny_qwen2_audio, make_hub_folder

    model = build_tiny_qwen2_audio(tmp_path / "tiny")
    hub = make_hub_folder(tmp_path / "hub", categories=("volume",), sources=2)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VOCALGRAD_DATASET": str(hub), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VOCALGRAD_CACHE": str(tmp_path / "cache")}
    worker_cmd = f"{sys.executable} -m harness_tasks.workers.transformers_worker pretrained={model} dtype=float32"
    common = ["--tasks", "vocalgrad_volume", "--device", "cpu", "--log_samples", "--gen_kwargs", "max_gen_toks=6"]
    runs = {}
    for name, margs in (("worker", json.dumps({"cmd": worker_cmd, "retry_unparsed": False})),
                        ("hf", f"pretrained={model},dtype=float32,retry_unparsed=false")):
        model_name = "vocalgrad-worker" if name == "worker" else "vocalgrad-hf"
        p = subprocess.run([sys.executable, "-m", "harness_tasks.cli", "--model", model_name, "--model_args", margs,
                            "--output_path", str(tmp_path / name), *common], env=env, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        (samples,) = (tmp_path / name).rglob("samples_vocalgrad_volume_*.jsonl")
        runs[name] = sorted((s["doc"]["id"], s["resps"][0][0]) for s in map(json.loads, samples.read_text().splitlines()))
    assert len(runs["worker"]) == 4 and runs["worker"] == runs["hf"]
    assert all(isinstance(a, str) and not is_error_answer(a) for _, a in runs["worker"])
