"""Locked worker environments (harness_tasks/workers/envs/*.txt) and scripts/worker_env.sh.

The offline tests read the files and check the facts each route depends on (the upstream commit the
worker names, torch/torchaudio built for each other, Kimi's transformers < 5, Step's torchaudio < 2.9,
flash-attn after the lock). The registry tests run pip's resolver in dry-run on every lock for its
Python version and Linux x86-64 wheels (nothing is installed; no multi-GB download) and ask the
registry for flash-attn's pinned version; they skip, naming the reason, only when the registry
cannot be reached.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from packaging.version import Version

from harness_tasks.workers import envs, kimi_audio, mimo_audio, step_audio2
from harness_tasks.workers.protocol import ENV_MARKER, environment
from _timing import hang_guard

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "worker_env.sh"
UPSTREAM = {"kimi_audio": kimi_audio.UPSTREAM, "mimo_audio": mimo_audio.UPSTREAM, "step_audio2": step_audio2.UPSTREAM}


def test_every_route_has_a_lock_of_exact_pins_naming_its_upstream_commit():
    for route in envs.ROUTES:
        r = envs.read(route)
        assert r.route == route and Version(r.python).release[:1] == (3,)
        assert len(r.pins) > 20 and "torch" in r.pins and "transformers" in r.pins
        if route in UPSTREAM:
            assert r.upstream_commit and r.upstream_commit in UPSTREAM[route]
            assert r.upstream.split()[0].rstrip("/").endswith(UPSTREAM[route].split("@")[0])
        else:
            assert r.upstream == "this checkout" and r.upstream_commit is None
        if "torchaudio" in r.pins:          # torchaudio is built for one torch release
            assert Version(r.pins["torchaudio"]).release[:2] == Version(r.pins["torch"]).release[:2], route
        # every direct requirement is met by the lock
        from packaging.requirements import Requirement

        for line in r.direct:
            req = Requirement(line)
            key = req.name.lower().replace("_", "-")
            assert key in r.pins and r.pins[key] in req.specifier, (route, line)


def test_the_facts_each_route_depends_on():
    kimi, mimo, step, tfw = (envs.read(r) for r in envs.ROUTES)
    # Kimi: torch 2.4.1 as upstream pins it; transformers < 5 (its model code passes position_ids to
    # apply_rotary_pos_emb, gone in 5.0); its whisper tokenizer imports flash-attn unconditionally
    assert kimi.pins["torch"] == "2.4.1" and Version(kimi.pins["transformers"]) < Version("5")
    assert kimi.pins["transformers"] == "4.57.6" and any(a.startswith("flash-attn==") for a in kimi.after)
    from harness_tasks.models.families.kimi_audio import TRANSFORMERS_RANGE, check_transformers

    check_transformers(kimi.pins["transformers"])            # the in-process family accepts the lock's
    assert "<5" in TRANSFORMERS_RANGE
    # MiMo: upstream's torch 2.6.0 / transformers 4.49.0 and its flash-attn 2.7.4.post1
    assert (mimo.pins["torch"], mimo.pins["transformers"]) == ("2.6.0", "4.49.0")
    assert mimo.after == ("flash-attn==2.7.4.post1",) and mimo.python == "3.12"
    # Step-Audio 2: transformers 4.49.0; torchaudio < 2.9 (2.9's torchaudio.load needs torchcodec)
    assert step.pins["transformers"] == "4.49.0" and Version(step.pins["torchaudio"]) < Version("2.9")
    assert not step.after
    # transformers_worker: the toolkit's own pins, with the oldest transformers it supports
    from harness_tasks.workers.transformers_worker import MIN_TRANSFORMERS

    assert Version(tfw.pins["transformers"]) >= Version(MIN_TRANSFORMERS) and tfw.pins["lm-eval"] == "0.4.13"
    # flash-attn builds against the locked torch without build isolation: its build needs these
    for r in (kimi, mimo):
        assert {"setuptools", "wheel", "packaging", "ninja", "psutil"} <= set(r.pins), r.route


def test_a_bad_environment_file_is_a_one_line_error(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="no worker environment 'kimi'; routes: kimi_audio"):
        envs.read("kimi")
    bad = tmp_path / "step_audio2.txt"
    text = Path(envs.read("step_audio2").path).read_text()
    bad.write_text(text.replace("torch==2.6.0", "torch>=2.6"))
    monkeypatch.setattr(envs, "ENV_DIR", str(tmp_path))
    with pytest.raises(ValueError, match=r"step_audio2.txt:\d+: 'torch>=2.6' is not an exact pin"):
        envs.read("step_audio2")


def test_worker_env_script_prints_the_steps_and_refuses_what_it_did_not_make(tmp_path):
    def run(*args):
        return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=60)

    out = run("--print", "kimi_audio", str(tmp_path / "kimi"))
    assert out.returncode == 0, out.stderr
    lock = envs.read("kimi_audio")
    lines = out.stdout.splitlines()
    assert f"'python3.10' -m venv '{tmp_path}/kimi/venv'" in out.stdout
    assert any(f"pip' install --no-cache-dir -r '{lock.path}'" in ln for ln in lines)
    assert any("--no-build-isolation flash-attn==2.6.3" in ln for ln in lines)
    assert any(f"checkout --quiet '{lock.upstream_commit}'" in ln for ln in lines)
    assert lock.sha256 in out.stdout and f"{tmp_path}/kimi/venv/bin/python {ROOT}/harness_tasks/workers/kimi_audio.py" \
        f" repo={tmp_path}/kimi/src" in out.stdout
    assert not (tmp_path / "kimi").exists()                     # --print runs nothing
    tfw = run("--print", "transformers_worker", str(tmp_path / "t"))
    assert "git clone" not in tfw.stdout and f"PYTHONPATH={ROOT} " in tfw.stdout
    (tmp_path / "mine").mkdir()
    refused = run("kimi_audio", str(tmp_path / "mine"))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "exists; give a new folder" in refused.stderr
    unknown = run("--print", "kimi", str(tmp_path / "x"))
    assert unknown.returncode == 2 and "no environment file for route 'kimi'" in unknown.stderr
    assert run().returncode == 2


def test_a_worker_in_a_made_environment_says_which_in_its_handshake(tmp_path):
    lock = envs.read("mimo_audio")
    (tmp_path / "venv").mkdir()
    (tmp_path / ENV_MARKER).write_text(f"route: mimo_audio\nlock: {lock.path}\nsha256: {lock.sha256}\n")
    assert environment(str(tmp_path / "venv")) == {"route": "mimo_audio", "lock": lock.path, "sha256": lock.sha256}
    assert environment(str(tmp_path / "elsewhere" / "venv")) is None


# ----------------------------------------------------------------------------- the registry

def _pip_env() -> dict:
    """pip with the registry only: no machine-wide config (local wheel folders, constraints)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_FIND_LINKS", "PIP_CONSTRAINT", "PIP_EXTRA_INDEX_URL")}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


@pytest.fixture(scope="module")
def registry():
    url = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/") + "/pip/"
    try:
        urllib.request.urlopen(url, timeout=hang_guard(15)).close()
    except Exception as exc:  # no network here: say so
        pytest.skip(f"the package registry ({url}) cannot be reached: {type(exc).__name__}: {exc}")
    return url


@pytest.mark.slow
@pytest.mark.registry
def test_every_lock_resolves_with_pips_resolver(registry, tmp_path):
    """pip install --dry-run --ignore-installed --report on each lock (all routes at once): the resolver
    accepts the pins together and chooses exactly them, nothing more."""

    def resolve(route):
        r = envs.read(route)
        if route == "transformers_worker" and not envs.same_python(r):
            return route, "skip", None
        report = tmp_path / f"{route}.json"
        args = envs.dry_run_args(r, report=str(report), target=str(tmp_path / f"target-{route}"))
        p = subprocess.run([sys.executable, "-m", "pip", *args], env=_pip_env(), capture_output=True, text=True,
                           timeout=560)
        errors = [ln for ln in p.stderr.splitlines() if ln.startswith("ERROR")]
        if p.returncode:
            return route, None, errors[-3:]
        got = {envs._norm(i["metadata"]["name"]): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
        return route, got, r.pins

    with ThreadPoolExecutor(len(envs.ROUTES)) as pool:
        results = list(pool.map(resolve, envs.ROUTES))
    skipped = [route for route, got, _ in results if got == "skip"]
    for route, got, want in results:
        if got == "skip":
            continue
        assert got is not None, f"{route}: pip's resolver refused the lock: {want}"
        assert got == want, (route, set(got.items()) ^ set(want.items()))
    if skipped:   # lm-eval needs sqlitedict, published only as source: resolvable for its own Python only
        pytest.skip(f"{', '.join(skipped)}: its lock holds a source-only package (sqlitedict); pip resolves it only "
                    f"under Python {envs.read('transformers_worker').python} (this is {sys.version.split()[0]})")


def test_the_flash_attn_versions_exist_on_the_registry(registry):
    wanted = {a.split("==")[1] for r in envs.ROUTES for a in envs.read(r).after if a.startswith("flash-attn==")}
    assert wanted == {"2.6.3", "2.7.4.post1"}
    p = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "flash-attn"], env=_pip_env(),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-500:]
    listed = p.stdout.split("Available versions:", 1)[1].split("\n", 1)[0]
    versions = {v.strip() for v in listed.split(",")}
    assert wanted <= versions, (wanted, listed)


def test_transformers_worker_states_its_transformers_range_and_stops_below_it():
    from harness_tasks.workers.transformers_worker import check_transformers

    for ok in ("4.57.0", "4.57.6", "5.0.0", "5.24.0", "5.25.0.dev0"):
        check_transformers(ok)
    for old in ("4.45.0", "4.56.2"):
        with pytest.raises(SystemExit) as err:
            check_transformers(old)
        msg = str(err.value)
        assert "\n" not in msg and f"transformers {old} is installed" in msg and ">= 4.57" in msg
    # the toolkit's hf extra states the same floor
    assert '"transformers>=4.57"' in (ROOT / "pyproject.toml").read_text()


def test_device_check_says_plainly_that_there_is_no_gpu():
    """benchmarks/device_check.sh on a machine without CUDA: one line saying so, exit 2, nothing run."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHON=sys.executable)
    p = subprocess.run(["bash", str(ROOT / "benchmarks" / "device_check.sh"), str(ROOT / "nowhere")], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "no CUDA GPU here" in p.stderr and "nothing was run" in p.stderr
    assert not (ROOT / "nowhere").exists()


@pytest.mark.slow
@pytest.mark.registry
def test_transformers_worker_under_the_locked_transformers_answers_like_vocalgrad_hf(registry, tmp_path):
    """The worker in the lock's transformers 4.57.6 (with its huggingface_hub and tokenizers, installed
    into a folder put first on the worker's PYTHONPATH; the rest from this environment) answers a tiny
    Qwen2-Audio exactly as vocalgrad-hf does under this environment's transformers 5.x."""
    import numpy as np

    import _harness_helpers as hh
    from harness_tasks.clip_audio import ClipAudio
    from harness_tasks.models.hf import HFAudioLM
    from harness_tasks.models.worker import WorkerLM

    lock = envs.read("transformers_worker")
    pins = [f"{n}=={lock.pins[n]}" for n in ("transformers", "huggingface-hub", "tokenizers")]
    site = tmp_path / "tf4"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), *pins],
                       env=_pip_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-800:]
    folder = hh.build_tiny_qwen2_audio(tmp_path / "tiny")
    # transformers 5 saves extra_special_tokens as a list, which 4.x reads as a dict: drop it (the
    # special tokens are in tokenizer.json); checkpoints on the Hub were saved by 4.x
    cfg_path = folder / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg.pop("extra_special_tokens", None)
    cfg_path.write_text(json.dumps(cfg))
    sr = 16000
    t = np.arange(sr) / sr
    reqs = [("Does the loudness increase or decrease?", {"until": [], "max_gen_toks": 6, "do_sample": False},
             {"audio": [ClipAudio(f"c{i}", {"array": (0.3 * np.linspace(0.2, 1, sr)[::1 - 2 * (i % 2)]
                                                      * np.sin(2 * np.pi * (200 + 30 * i) * t)).astype(np.float32),
                                            "sampling_rate": sr})]}) for i in range(3)]
    want = HFAudioLM(pretrained=str(folder), dtype="float32", device="cpu", answer_log="none",
                     retry_unparsed=False).generate_until(reqs, disable_tqdm=True)
    cmd = (f"env PYTHONPATH={site}:{ROOT} {sys.executable} -m harness_tasks.workers.transformers_worker "
           f"pretrained={folder} dtype=float32 device=cpu retry_unparsed=false")
    worker = WorkerLM(cmd=cmd, answer_log="none", retry_unparsed=False)
    got = worker.generate_until(reqs, disable_tqdm=True)
    assert worker.hello["version"] == f"transformers {lock.pins['transformers']}"
    assert got == want
