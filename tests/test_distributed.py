"""Two processes (accelerate launch, gloo on CPU) give the results of one, with a tiny model."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _read(out: Path):
    (res_file,) = out.rglob("results_*.json")
    res = json.loads(res_file.read_text())
    samples = {}
    for f in out.rglob("samples_*.jsonl"):
        for s in map(json.loads, f.read_text().splitlines()):
            samples[(s["doc"]["id"], f.name.split("_2")[0])] = (s["resps"], s["filtered_resps"], s["acc"])
    return res["results"], res["n-samples"], samples


@pytest.mark.slow
def test_two_processes_equal_one_with_a_tiny_model(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("accelerate")
    from _harness_helpers import build_tiny_qwen2_audio, make_hub_folder

    model = build_tiny_qwen2_audio(tmp_path / "tiny")
    hub = make_hub_folder(tmp_path / "hub", categories=("volume", "pitch"), sources=3)   # 12 clips
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VOCALGRAD_DATASET": str(hub), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    args = ["-m", "harness_tasks.cli", "--model", "vocalgrad-hf", "--model_args",
            f"pretrained={model},dtype=float32,retry_unparsed=false,answer_log=none",
            "--tasks", "vocalgrad_volume,vocalgrad_pitch", "--device", "cpu", "--log_samples",
            "--gen_kwargs", "max_gen_toks=6"]
    one = subprocess.run([sys.executable, *args, "--output_path", str(tmp_path / "one")], env=env,
                         capture_output=True, text=True, timeout=600)
    assert one.returncode == 0, one.stderr[-3000:]
    # accelerate's launcher through this interpreter: runs without the venv's bin/ on PATH
    launch = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
              "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(_free_port())]
    two = subprocess.run([*launch, *args, "--output_path", str(tmp_path / "two")], env=env,
                         capture_output=True, text=True, timeout=600)
    assert two.returncode == 0, two.stderr[-3000:]
    # lm-eval split the requests: each rank built half of each task
    assert "Building contexts for vocalgrad_volume on rank 1" in two.stderr
    r1, n1, s1 = _read(tmp_path / "one")
    r2, n2, s2 = _read(tmp_path / "two")
    assert n1 == n2 == {"vocalgrad_volume": {"original": 6, "effective": 6},
                        "vocalgrad_pitch": {"original": 6, "effective": 6}}
    assert s1 == s2 and len(s1) == 12
    assert r1 == r2
