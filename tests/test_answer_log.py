"""The per-clip answer log, per-clip failures and lm-eval's --use_cache, through real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from _harness_helpers import make_hub_folder
from _timing import hang_guard
from harness_tasks import utils
from harness_tasks.clip_audio import ClipAudio
from harness_tasks.models.answer_log import AnswerLog
from harness_tasks.models.base import Query, VocalGradLM
from harness_tasks.models.oracle import OracleLM
from harness_tasks.parsing import classify_answer, is_error_answer

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "_eval_with_test_models.py"
N_CLIPS = 5 * 2 * 2 * 2                       # sources x tiers x trajectories x directions


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    return make_hub_folder(tmp_path_factory.mktemp("hub"), categories=("volume",), sources=5,
                           tiers=("low", "medium"), trajectories=("linear", "jump"))


def _env(hub, tmp_path):
    return {**os.environ, "PYTHONPATH": str(ROOT), utils.DATASET_ENV: str(hub), "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1", "VOCALGRAD_CACHE": str(tmp_path / "cache")}


def _cmd(out: Path, counter: Path, *, log="none", delay=0.0, extra=(), fail_ids=""):
    args = f"counter={counter},delay={delay},answer_log={log}" + (f",fail_ids={fail_ids}" if fail_ids else "")
    return [sys.executable, str(SCRIPT), "--model", "vocalgrad-test-counting", "--model_args", args,
            "--tasks", "vocalgrad_volume", "--device", "cpu", "--output_path", str(out), "--log_samples",
            *extra]


def _calls(counter: Path) -> list[str]:
    return counter.read_text().split() if counter.exists() else []


def _results(out: Path) -> tuple[dict, list]:
    (res_file,) = out.rglob("results_*.json")
    res = json.loads(res_file.read_text())
    (samples_file,) = out.rglob("samples_vocalgrad_volume_*.jsonl")
    samples = sorted((s["doc_id"], s["doc"]["id"], s["resps"], s["filtered_resps"], s["acc"])
                     for s in map(json.loads, samples_file.read_text().splitlines()))
    return {"results": res["results"], "n-samples": res["n-samples"]}, samples


def test_sigkill_halfway_then_rerun_gives_the_same_results_and_asks_only_for_the_rest(hub, tmp_path):
    env = _env(hub, tmp_path)
    # reference: one uninterrupted run
    ref = subprocess.run(_cmd(tmp_path / "ref", tmp_path / "ref.calls", log=tmp_path / "ref_log"),
                         env=env, capture_output=True, text=True, timeout=600)
    assert ref.returncode == 0, ref.stderr[-3000:]
    assert len(_calls(tmp_path / "ref.calls")) == N_CLIPS

    counter, log_dir, out = tmp_path / "run.calls", tmp_path / "log", tmp_path / "out"
    proc = subprocess.Popen(_cmd(out, counter, log=log_dir, delay=0.15), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + hang_guard(300)
    while len(_calls(counter)) < N_CLIPS // 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    asked_first = len(_calls(counter))
    assert N_CLIPS // 3 <= asked_first < N_CLIPS and not list(out.rglob("results_*.json"))
    logged = len(AnswerLog(log_dir))
    assert asked_first - 1 <= logged <= asked_first             # at most the clip in flight is lost

    again = subprocess.run(_cmd(out, counter, log=log_dir), env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    asked_again = _calls(counter)[asked_first:]
    assert len(asked_again) == N_CLIPS - logged                 # only the missing clips
    assert f"{logged} of {N_CLIPS} answers found in the answer log" in again.stderr
    assert _results(out) == _results(tmp_path / "ref")           # same results file, same samples
    # a third run asks for nothing at all
    third = subprocess.run(_cmd(tmp_path / "out3", counter, log=log_dir), env=env, capture_output=True,
                           text=True, timeout=600)
    assert third.returncode == 0 and len(_calls(counter)) == asked_first + len(asked_again)


def test_lm_eval_use_cache_works_with_our_audio(hub, tmp_path):
    """lm-eval's own CachingLM (hash_args -> json.dumps of the requests, audio included)."""
    env = _env(hub, tmp_path)
    counter = tmp_path / "calls"
    db = tmp_path / "lmcache" / "vg"
    first = subprocess.run(_cmd(tmp_path / "a", counter, extra=("--use_cache", str(db))), env=env,
                           capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    assert len(_calls(counter)) == N_CLIPS and list(db.parent.glob("vg_rank0.db"))
    second = subprocess.run(_cmd(tmp_path / "b", counter, extra=("--use_cache", str(db))), env=env,
                            capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    assert len(_calls(counter)) == N_CLIPS                      # all from lm-eval's cache
    assert f"Cached requests: {N_CLIPS}, Requests remaining: 0" in second.stderr
    assert _results(tmp_path / "a") == _results(tmp_path / "b")


def test_lm_eval_request_hash_is_content_sensitive():
    from lm_eval.api.model import hash_args

    y = np.sin(np.arange(800) / 5).astype(np.float32)
    a = ClipAudio("c", {"array": y, "sampling_rate": 8000})
    same = ClipAudio("c", {"array": y.copy(), "sampling_rate": 8000})
    other = ClipAudio("c", {"array": y * 0.5, "sampling_rate": 8000})
    args = lambda clip: ("prompt", {"until": []}, {"audio": [clip]})  # noqa: E731
    assert hash_args("generate_until", args(a)) == hash_args("generate_until", args(same))
    assert hash_args("generate_until", args(a)) != hash_args("generate_until", args(other))


def test_a_failing_clip_becomes_an_error_answer_listed_in_the_results(hub, tmp_path):
    env = _env(hub, tmp_path)
    bad = "tone02__volume__jump__medium__increase"
    run = subprocess.run(_cmd(tmp_path / "o", tmp_path / "calls", log=tmp_path / "log", fail_ids=bad,
                              extra=("--batch_size", "4")), env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    res, samples = _results(tmp_path / "o")
    r = res["results"]["vocalgrad_volume"]
    assert r["error_rate,none"] == pytest.approx(1 / N_CLIPS)
    (row,) = [s for s in samples if s[1] == bad]
    assert is_error_answer(row[2][0][0]) and "scripted failure" in row[2][0][0] and row[4] == 0.0
    assert f"1 of {N_CLIPS} clip(s) got error answers" in run.stderr and bad in run.stderr
    # the others of its batch of 4 were answered (the batch was halved down to the bad clip)
    assert sum(is_error_answer(s[2][0][0]) for s in samples) == 1
    # error answers are logged but asked again by a rerun
    entries = [json.loads(ln) for ln in (tmp_path / "log" / "answers.jsonl").read_text().splitlines()]
    assert [e["clip_id"] for e in entries if e["error"]] == [bad]
    n = len(_calls(tmp_path / "calls"))
    again = subprocess.run(_cmd(tmp_path / "o2", tmp_path / "calls", log=tmp_path / "log"), env=env,
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and _calls(tmp_path / "calls")[n:] == [bad]


def test_undecodable_clip_is_an_error_answer_not_a_crash(tmp_path):
    good = ClipAudio("good", {"array": np.sin(np.arange(16000) / 3).astype(np.float32), "sampling_rate": 16000})
    broken = ClipAudio("broken", {"bytes": b"not audio at all", "path": None})
    reqs = [(utils_prompt(), {"until": [], "max_gen_toks": 8}, {"audio": [c]}) for c in (good, broken, good)]
    lm = OracleLM(answer_log=str(tmp_path / "log"), batch_size=3)
    out = lm.generate_until(reqs, disable_tqdm=True)
    assert classify_answer(out[0])[1] == "parsed" and out[0] == out[2]
    assert is_error_answer(out[1]) and "broken" in out[1] and "cannot decode" in out[1]
    assert lm.failed and lm.failed[0][0] == "broken"


def utils_prompt() -> str:
    import vocalgrad

    return vocalgrad.default_prompt("volume")


class _Echo(VocalGradLM):
    def __init__(self, *, model="m", revision="r1", **kw):
        super().__init__(**kw)
        self.calls = 0

    def answer(self, queries):
        self.calls += len(queries)
        return [f"increase {q.max_new_tokens}" for q in queries]


def test_log_key_covers_identity_prompt_and_settings_and_default_location(tmp_path, monkeypatch):
    monkeypatch.setenv("VOCALGRAD_CACHE", str(tmp_path / "vc"))
    monkeypatch.delenv("VOCALGRAD_ANSWER_LOG")                   # the default: on, under $VOCALGRAD_CACHE
    clip = ClipAudio("c", {"array": np.zeros(100, np.float32), "sampling_rate": 8000})

    def ask(lm, prompt="p", toks=8, audio=clip):
        return lm.generate_until([(prompt, {"until": [], "max_gen_toks": toks}, {"audio": [audio]})],
                                 disable_tqdm=True)

    E = lambda **kw: _Echo(model="org/m", **kw)  # noqa: E731
    a = E()
    ask(a)
    ask(a)
    assert a.calls == 1
    folder = a.answer_log.folder
    assert folder.parent == tmp_path / "vc" / "answers" and folder.name.startswith("m-")
    b = E(batch_size=4)                      # batch size does not change the key
    ask(b)
    assert b.calls == 0
    for lm, kw in ((E(revision="r2"), {}), (E(), {"prompt": "q"}), (E(), {"toks": 9}),
                   (E(), {"audio": ClipAudio("c", {"array": np.ones(100, np.float32), "sampling_rate": 8000})})):
        ask(lm, **kw)
        assert lm.calls == 1, kw
    off = _Echo(answer_log="none")
    ask(off)
    ask(off)
    assert off.calls == 2 and off.answer_log is None
    monkeypatch.setenv("VOCALGRAD_ANSWER_LOG", "none")           # the environment sets the default ...
    assert _Echo(model="org/m").answer_log is None
    monkeypatch.setenv("VOCALGRAD_ANSWER_LOG", str(tmp_path / "env_log"))
    assert _Echo(model="org/m").answer_log.folder == tmp_path / "env_log"
    assert _Echo(model="org/m", answer_log="auto").answer_log.folder == folder   # ... an argument wins


def test_log_survives_a_cut_off_line(tmp_path):
    log = AnswerLog(tmp_path)
    log.put("k1", "increase")
    log.close()
    with open(tmp_path / "answers.jsonl", "a") as fh:
        fh.write('{"key": "k2", "answ')
    again = AnswerLog(tmp_path)
    assert again.get("k1") == "increase" and again.get("k2") is None
    again.put("k3", "decrease")
    again.close()
    assert AnswerLog(tmp_path).get("k3") == "decrease"
    assert AnswerLog(tmp_path, rank=1).path.name == "answers.rank1.jsonl"


def test_query_key_needs_readable_audio():
    q = Query(prompt="p", audios=[ClipAudio("x", {"bytes": None, "path": None})])
    assert _Echo(answer_log="none").query_key(q) is None


def test_hf_adapter_identity_names_the_checkpoint_and_dtype(tmp_path):
    pytest.importorskip("torch")
    from _harness_helpers import build_tiny_qwen2_audio
    from harness_tasks.models.hf import HFAudioLM

    d = str(build_tiny_qwen2_audio(tmp_path / "m"))
    a = HFAudioLM(pretrained=d, dtype="float32", device="cpu", batch_size=4)
    b = HFAudioLM(pretrained=d, dtype="bfloat16", device="cpu")
    ia = a.identity()
    assert ia["args"] == {"dtype": "float32", "pretrained": d}          # batch size and device left out
    assert ia.get("loaded", {"dtype": "torch.float32"})["dtype"] == "torch.float32"
    q = Query(prompt="p", audios=[ClipAudio("c", {"array": np.zeros(800, np.float32), "sampling_rate": 8000})])
    assert a.query_key(q) != b.query_key(q)
    assert a.query_key(q) == HFAudioLM(pretrained=d, dtype="float32", device="cpu").query_key(q)


# ----------------------------------------------------------------------------- one log, two processes
def _claim_files(log_dir: Path) -> list[Path]:
    """Claim files of live or dead processes that hold at least one claim line."""
    return [p for p in (log_dir / "claims").glob("*.claims") if p.stat().st_size] if (log_dir / "claims").is_dir() \
        else []


def _wait_for(cond, what: str, procs=(), timeout: float = 300.0) -> None:
    deadline = time.time() + hang_guard(timeout)
    while not cond():
        dead = [p for p in procs if p.poll() is not None]
        assert not dead, f"a process ended while waiting for {what}: " + dead[0].communicate()[1][-3000:]
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_two_evaluations_sharing_one_log_ask_for_each_clip_once(hub, tmp_path):
    # both start, claim their share and are held at their first answer until both have claimed
    assert N_CLIPS > VocalGradLM.CLAIM_CHUNK   # so that the second process gets a share of its own
    env, log_dir, go = _env(hub, tmp_path), tmp_path / "shared_log", tmp_path / "go"
    procs = [subprocess.Popen(_cmd(tmp_path / f"out{i}", tmp_path / f"calls{i}", log=log_dir,
                                   extra=("--model_args", f"counter={tmp_path / f'calls{i}'},answer_log={log_dir},"
                                          f"hold={go}")),
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for i in (0, 1)]
    try:
        _wait_for(lambda: len(_claim_files(log_dir)) == 2, "both processes to claim clips", procs)
        go.touch()
        errs = [p.communicate(timeout=600)[1] for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert [p.returncode for p in procs] == [0, 0], errs[0][-3000:] + errs[1][-3000:]
    asked = [_calls(tmp_path / "calls0"), _calls(tmp_path / "calls1")]
    assert all(asked) and len(asked[0] + asked[1]) == N_CLIPS          # each clip asked once, by one of them
    assert set(asked[0]).isdisjoint(asked[1])
    assert any("came from another process sharing the answer log" in e for e in errs)
    assert _results(tmp_path / "out0") == _results(tmp_path / "out1")   # same results, same samples
    lines = [json.loads(ln) for ln in (log_dir / "answers.jsonl").read_text().splitlines()]
    assert len(lines) == N_CLIPS == len({e["key"] for e in lines}) and not any(e["error"] for e in lines)


def test_a_killed_claimant_does_not_block_the_other_process(hub, tmp_path):
    # A claims its share and never answers (held); B answers the rest and waits for A's clips, without
    # asking for them, while A lives; once A is killed, B takes A's claims over and finishes
    env, log_dir = _env(hub, tmp_path), tmp_path / "shared_log"
    a = subprocess.Popen(_cmd(tmp_path / "outA", tmp_path / "callsA", log=log_dir,
                              extra=("--model_args", f"counter={tmp_path / 'callsA'},answer_log={log_dir},"
                                     f"hold={tmp_path / 'never'}")),
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    b = None
    try:
        _wait_for(lambda: len(_claim_files(log_dir)) == 1, "A to claim clips", [a])
        b = subprocess.Popen(_cmd(tmp_path / "outB", tmp_path / "callsB", log=log_dir), env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        share_b = N_CLIPS - VocalGradLM.CLAIM_CHUNK
        _wait_for(lambda: len(_calls(tmp_path / "callsB")) >= share_b, "B to answer its share", [a, b])
        time.sleep(3)
        assert b.poll() is None and len(_calls(tmp_path / "callsB")) == share_b   # waiting, not asking
        a.kill()
        a.communicate(timeout=60)
        _, err = b.communicate(timeout=120)                                        # not blocked forever
    finally:
        for p in (a, b):
            if p is not None:
                p.kill()
    assert b.returncode == 0, err[-3000:]
    assert "being asked by another process sharing the answer log" in err
    asked = _calls(tmp_path / "callsB")
    assert sorted(asked) == sorted(set(asked)) and len(asked) == N_CLIPS and not _calls(tmp_path / "callsA")
    assert len(_results(tmp_path / "outB")[1]) == N_CLIPS
    assert not _claim_files(log_dir)                     # A's claims were dropped, B released its own


def test_claims_in_one_folder(tmp_path, monkeypatch):
    # two logs on one folder behave like two processes: each holds a lock on its own claims file
    a, b = AnswerLog(tmp_path), AnswerLog(tmp_path)
    assert a.claim(["k1", "k2", "k3"], limit=2) == ({}, ["k1", "k2"], [])
    found, mine, held = b.claim(["k1", "k2", "k3"])
    assert (found, mine, sorted(held)) == ({}, ["k3"], ["k1", "k2"])
    a.put("k1", "increase")                        # answered: found by the other, the claim released
    a.release(["k2"])                              # given up without an answer: free again
    assert b.claim(["k1", "k2"]) == ({"k1": "increase"}, ["k2"], [])
    # a claimant that ends without cleaning up (its lock goes with its file handle, as on SIGKILL)
    c = AnswerLog(tmp_path)
    assert c.claim(["k9"]) == ({}, ["k9"], [])
    assert b.claim(["k9"]) == ({}, [], ["k9"])
    stale = c.claims._own_path
    c.claims._own.close()                           # the kernel drops the flock; the file stays behind
    assert stale.exists() and b.claim(["k9"]) == ({}, ["k9"], []) and not stale.exists()
    for log in (a, b):
        log.close()
    assert not list((tmp_path / "claims").glob("*.claims"))
    # without file locks (Windows, some network file systems) nothing is held: the old behaviour
    monkeypatch.setattr("harness_tasks.models.claims.fcntl", None)
    d = AnswerLog(tmp_path / "nolocks")
    assert not d.claims.available and d.claim(["k1"]) == ({}, ["k1"], [])
    d.put("k1", "decrease")
    assert AnswerLog(tmp_path / "nolocks").get("k1") == "decrease"


def _claim_and_answer(folder: str, keys: list[str], start, counts) -> None:
    """One real process: claim keys of a shared log and answer the claimed ones, as an evaluation does."""
    from harness_tasks.models.answer_log import ask_claimed

    logbook = AnswerLog(folder)
    start.wait()
    got = {}

    def ask(indices):
        for i in indices:
            logbook.put(keys[i], "increase")
            got[i] = "increase"

    ask_claimed(logbook, keys, list(range(len(keys))), ask, got.__setitem__, chunk=3)
    counts.put(len(got))
    logbook.close()


def test_claims_of_several_processes_ask_each_key_once(tmp_path):
    """Four real processes claim disjoint and overlapping keys of one log at once: one log line per key.

    The folder's lock (claims/.lock) is what keeps two processes from claiming the same free key:
    without it this test logs some keys twice."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    shared = [f"shared{i:03d}" for i in range(600)]
    start, counts = ctx.Event(), ctx.Queue()
    procs = []
    for p in range(4):
        own = [f"own{p}_{i:03d}" for i in range(75)]             # disjoint claims
        order = shared                                            # overlapping claims, all at once
        keys = [k for i, k in enumerate(order) for k in ([k, own[i // 8]] if i % 8 == 0 else [k])]
        procs.append(ctx.Process(target=_claim_and_answer, args=(str(tmp_path), keys, start, counts)))
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert sorted(counts.get(timeout=hang_guard(5)) for _ in procs) == [675] * 4  # every process has every answer
    lines = [json.loads(line)["key"] for f in tmp_path.glob("*.jsonl") for line in f.read_text().splitlines()]
    twice = sorted({k for k in lines if lines.count(k) > 1})
    assert not twice, f"{len(twice)} keys asked twice, e.g. {twice[:3]}"
    assert len(lines) == 600 + 4 * 75
