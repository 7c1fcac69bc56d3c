"""``vocalgrad finetune`` on tiny offline models: LoRA scopes, learning, save/load, kill + resume."""

from __future__ import annotations

import json

import _finetune_helpers as fh
import _probe_helpers as ph
from _timing import hang_guard
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from analysis.finetune.config import FinetuneConfig  # noqa: E402
from analysis.finetune.targets import lora_targets  # noqa: E402
from analysis.finetune.train import PROVENANCE_FILE, _Killed, run_finetune  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("ft")
    return {"hub": fh.make_volume_hub(root / "hub"),
            "qwen2_audio": ph.build_tiny("qwen2_audio", root / "qwen2_audio"),
            "audioflamingo3": ph.build_tiny("audioflamingo3", root / "af3")}


def _cfg(tiny, **kw):
    base = dict(model=str(tiny["qwen2_audio"]), data=str(tiny["hub"]), category="volume", device="cpu",
                val_fraction=0.25, grad_accum=2, save_every=1)
    return FinetuneConfig(**{**base, **kw})


@pytest.mark.parametrize("arch", ph.ARCHS)
def test_scopes_select_lm_head_or_every_linear_layer_of_the_lm(tiny, arch):
    from peft import LoraConfig, get_peft_model

    from harness_tasks.models.families import load

    model = load(str(tiny[arch]), device="cpu").model
    linears = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    lm_linears = [n for n in linears if ".language_model." in n]
    assert len(lm_linears) == 7 * ph.TINY_LAYERS                    # q k v o gate up down per layer
    assert lora_targets(model, "lm_head_only") == ["lm_head"]
    assert lora_targets(model, "all_linear") == sorted(lm_linears + ["lm_head"])
    assert lora_targets(model, "all_linear", include_audio_encoder=True) == sorted(linears)
    assert any("audio_tower" in n for n in linears)
    with pytest.raises(ValueError, match="only applies"):
        lora_targets(model, "lm_head_only", include_audio_encoder=True)
    for scope, n_wrapped in (("lm_head_only", 1), ("all_linear", len(lm_linears) + 1)):
        m = load(str(tiny[arch]), device="cpu").model
        pm = get_peft_model(m, LoraConfig(r=8, lora_alpha=16, target_modules=lora_targets(m, scope)))
        trainable = [n for n, p in pm.named_parameters() if p.requires_grad]
        assert trainable and all(".lora_" in n for n in trainable)         # only LoRA weights train
        wrapped = {n.split(".lora_")[0] for n in trainable}
        assert len(wrapped) == n_wrapped
        if scope == "lm_head_only":
            assert all(w.endswith("lm_head") for w in wrapped)
            head = pm.get_base_model().lm_head
            assert sum(p.numel() for n, p in pm.named_parameters() if p.requires_grad) == \
                8 * (head.in_features + head.out_features)
        else:
            assert not any("audio_tower" in w or "projector" in w for w in wrapped)


def test_training_learns_the_direction_and_the_saved_adapter_reloads_exactly(tiny, tmp_path):
    from harness_tasks.models.families import Item, load

    # checkpoints at steps 50, 100 and 150 (each one every step doubled the test's CPU time); removed at the end
    cfg = _cfg(tiny, scope="all_linear", learning_rate=3e-3, grad_accum=1, epochs=6, lora_dropout=0.0, save_every=50)
    res = run_finetune(cfg, tmp_path / "run", progress=False)
    losses = [h["loss"] for h in res["history"]]
    assert res["data"]["n_train"] == 30 and res["data"]["n_val"] == 10 and len(losses) == 180
    assert np.mean(losses[-20:]) < 0.1 * np.mean(losses[:5])
    assert res["validation_before"]["accuracy"] == 0.5                    # chance: one answer for every clip
    assert res["validation_after"]["accuracy"] >= 0.7
    prov = json.loads((tmp_path / "run" / "adapter" / PROVENANCE_FILE).read_text())
    assert prov["base_model"]["model"] == cfg.model and prov["data"]["fingerprint"] == res["data"]["fingerprint"]
    assert prov["settings"]["lora_r"] == 8 and prov["settings"]["learning_rate"] == 3e-3
    assert prov["trainable_parameters"] > 0 and prov["toolkit"]["peft"]
    assert not (tmp_path / "run" / "checkpoint").exists()

    # save -> load: the reloaded adapter gives the in-memory model's validation log-probs
    lm = load(cfg.model, device="cpu", peft=str(tmp_path / "run" / "adapter"))
    from analysis.probe.data import load_clips

    clips = load_clips(cfg.data, "train", "volume")
    rows = [clips.ids.index(c) for c in res["validation_after"]["ids"]]
    batch = lm.batch([Item(clips.prompt, [clips.audio(r)]) for r in rows])
    lp = lm.answer_logprobs(batch, ["increase", "decrease"]).numpy()
    np.testing.assert_allclose(lp, res["validation_after"]["logprobs"], atol=1e-5)
    base = load(cfg.model, device="cpu").answer_logprobs(batch, ["increase", "decrease"]).numpy()
    assert np.abs(base - lp).max() > 0.1

    # the same folder: a finished run is returned, other settings are refused
    assert run_finetune(cfg, tmp_path / "run", progress=False)["created"] == res["created"]
    with pytest.raises(ValueError, match="other settings"):
        run_finetune(_cfg(tiny, scope="lm_head_only"), tmp_path / "run", progress=False)


def _adapter_tensors(folder):
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter" / "adapter_model.safetensors"))


def test_kill_and_resume_gives_the_uninterrupted_adapter(tiny, tmp_path):
    cfg = _cfg(tiny, scope="all_linear", lora_dropout=0.05, learning_rate=1e-3, save_every=2)
    full = run_finetune(cfg, tmp_path / "full", progress=False)
    with pytest.raises(_Killed):
        run_finetune(cfg, tmp_path / "killed", progress=False, _kill_at=11)   # mid-accumulation, after step 5
    state = json.loads((tmp_path / "killed" / "checkpoint" / "state.json").read_text())
    assert state["step"] == 4 and state["position"] == 8
    resumed = run_finetune(cfg, tmp_path / "killed", progress=False)
    assert [h["loss"] for h in resumed["history"]] == [h["loss"] for h in full["history"]]
    a, b = _adapter_tensors(tmp_path / "full"), _adapter_tensors(tmp_path / "killed")
    assert a.keys() == b.keys() and len(a) == 2 * 15
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_cli_lm_head_only_trains_only_the_head(tiny, tmp_path, capsys):
    from vocalgrad_commands.cli import main

    out = tmp_path / "head"
    rc = main(["finetune", "--model", str(tiny["audioflamingo3"]), "--data", str(tiny["hub"]), "--category",
               "volume", "--scope", "lm_head_only", "--out", str(out), "--device", "cpu", "--grad-accum", "4",
               "--val-fraction", "0.25", "--lr", "1e-3", "--quiet"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "validation accuracy" in text and "1 LoRA modules" in text
    tensors = _adapter_tensors(out)
    assert sorted(tensors) == ["base_model.model.lm_head.lora_A.weight", "base_model.model.lm_head.lora_B.weight"]
    assert torch.any(tensors["base_model.model.lm_head.lora_B.weight"] != 0)        # it did train
    res = json.loads((out / "finetune.json").read_text())
    assert res["steps"] == 8 and res["lora"]["target_modules"] == ["lm_head"]
    assert main(["finetune", "--model", "x", "--data", str(tmp_path / "nope"), "--category", "volume",
                 "--out", str(tmp_path / "o")]) == 2


def test_two_cpu_processes_average_gradients_like_one_process(tiny, tmp_path):
    """torchrun, 2 processes (gloo): each takes every 2nd clip; with gradient averaging, 2 processes x
    grad-accum 2 equal 1 process x grad-accum 4 on the same clips (dropout off)."""
    import os
    import subprocess
    import sys

    common = ["--model", str(tiny["qwen2_audio"]), "--data", str(tiny["hub"]), "--category", "volume",
              "--scope", "all_linear", "--device", "cpu", "--max-train", "8", "--max-val", "2", "--lora-dropout", "0",
              "--lr", "1e-2", "--quiet"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    # torchrun through this interpreter: runs without the venv's bin/ on PATH
    ddp = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "vocalgrad_commands.cli", "finetune",
                          *common, "--grad-accum", "2", "--out", str(tmp_path / "ddp")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert ddp.returncode == 0, ddp.stderr[-2000:]
    one = subprocess.run([sys.executable, "-m", "vocalgrad_commands.cli", "finetune", *common, "--grad-accum", "4",
                          "--out", str(tmp_path / "one")], env=env, capture_output=True, text=True, timeout=300)
    assert one.returncode == 0, one.stderr[-2000:]
    r2 = json.loads((tmp_path / "ddp" / "finetune.json").read_text())
    r1 = json.loads((tmp_path / "one" / "finetune.json").read_text())
    assert (r2["processes"], r2["steps"], r1["processes"], r1["steps"]) == (2, 2, 1, 2)
    a, b = _adapter_tensors(tmp_path / "ddp"), _adapter_tensors(tmp_path / "one")
    assert a.keys() == b.keys()
    assert max(float((a[k] - b[k]).abs().max()) for k in a) < 1e-5
    assert max(float(b[k].abs().max()) for k in b if "lora_B" in k) > 1e-3          # it did train


def test_probe_with_adapter_uses_the_adapted_model(tiny, tmp_path):
    from vocalgrad_commands.cli import main

    run = tmp_path / "run"
    res = run_finetune(_cfg(tiny, scope="all_linear", learning_rate=1e-2, grad_accum=1, max_train=6, max_val=2),
                       run, progress=False)
    assert res["steps"] == 6
    common = ["probe", "--model", str(tiny["qwen2_audio"]), "--data", str(tiny["hub"]), "--categories", "volume",
              "--stages", "lm_text", "--layers", "2", "--epochs", "3", "--device", "cpu", "--no-plots", "--quiet",
              "--cache", str(tmp_path / "cache")]
    assert main(common + ["--out", str(tmp_path / "pb")]) == 0
    assert main(common + ["--adapter", str(run / "adapter"), "--out", str(tmp_path / "pa")]) == 0
    caches = sorted(p for p in (tmp_path / "cache").iterdir() if p.name.startswith("model-"))
    assert len(caches) == 2                                     # the adapter is part of the cache key
    feats = []
    for c in caches:
        files = sorted(f for f in c.rglob("*.npy") if "lm_text" in f.name or "lm_text" in str(f.parent))
        assert files, list(c.rglob("*"))
        feats.append(np.load(files[0]))
    assert feats[0].shape == feats[1].shape and np.abs(feats[0] - feats[1]).max() > 1e-4
    assert main(common + ["--adapter", str(tmp_path), "--out", str(tmp_path / "px")]) == 2


def test_adapter_through_vocalgrad_eval_matches_the_finetune_scorer(tiny, tmp_path, monkeypatch):
    """The adapter plugs into vocalgrad-hf (peft=); lm-eval's acc_logit equals the accuracy of the
    fine-tuning scorer (answer log-probs) on the same test clips."""
    import lm_eval
    import lm_eval.evaluator
    from lm_eval.tasks import TaskManager

    import harness_tasks
    from analysis.finetune.train import validation_scores
    from analysis.probe.data import load_clips
    from harness_tasks.models.families import load
    from harness_tasks.models.hf import HFAudioLM

    cfg = _cfg(tiny, scope="all_linear", learning_rate=1e-2, grad_accum=1, max_train=8, max_val=2)
    run_finetune(cfg, tmp_path / "run", progress=False)
    adapter = str(tmp_path / "run" / "adapter")
    monkeypatch.setenv("VOCALGRAD_DATASET", str(tiny["hub"]))
    monkeypatch.setattr(lm_eval.evaluator, "add_env_info", lambda results: None)
    lm = HFAudioLM(pretrained=cfg.model, peft=adapter, device="cpu", scoring="logits")
    res = lm_eval.simple_evaluate(model=lm, tasks=["vocalgrad_volume"], bootstrap_iters=0, log_samples=True,
                                  task_manager=TaskManager(include_path=harness_tasks.TASK_DIR, include_defaults=False))
    acc_logit = res["results"]["vocalgrad_volume"]["acc_logit,none"]

    class _Data:                                     # the test clips in the trainer's scoring helper
        clips = load_clips(cfg.data, "test", "volume")

        def label(self, row):
            return "increase" if self.clips.labels[row] == 1 else "decrease"

    data = _Data()
    mine = validation_scores(load(cfg.model, device="cpu", peft=adapter), data, list(range(len(data.clips))), cfg)
    assert mine["n"] == 4 and acc_logit == pytest.approx(mine["accuracy"])
    from harness_tasks.logit_answers import split_logit_answer

    theirs = {}
    for smp in res["samples"]["vocalgrad_volume"]:
        _, _, lp = split_logit_answer(smp["resps"][0][0])
        theirs[smp["doc"]["id"]] = [lp["increase"], lp["decrease"]]
    assert sorted(theirs) == sorted(mine["ids"])
    for cid, lp in zip(mine["ids"], mine["logprobs"]):       # same log-probs, clip by clip (tag has 4 decimals)
        np.testing.assert_allclose(theirs[cid], lp, atol=1e-3)
    base = validation_scores(load(cfg.model, device="cpu"), data, list(range(len(data.clips))), cfg)
    assert np.abs(np.array(base["logprobs"]) - np.array(mine["logprobs"])).max() > 1e-2    # the adapter is on


def test_sigkill_and_rerun_gives_the_uninterrupted_adapter(tiny, tmp_path):
    """A real kill (SIGKILL of the `vocalgrad finetune` process) after a few checkpoints, then the same
    command again: the adapter equals the one of an uninterrupted run."""
    import os
    import signal
    import subprocess
    import sys
    import time

    args = [sys.executable, "-m", "vocalgrad_commands.cli", "finetune", "--model", str(tiny["qwen2_audio"]),
            "--data", str(tiny["hub"]), "--category", "volume", "--scope", "all_linear", "--device", "cpu",
            "--grad-accum", "1", "--epochs", "4", "--save-every", "1", "--val-fraction", "0.25", "--quiet"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = tmp_path / "killed"
    proc = subprocess.Popen(args + ["--out", str(out)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    state = out / "checkpoint" / "state.json"
    deadline = time.time() + hang_guard(240)
    while time.time() < deadline and proc.poll() is None:
        if state.is_file():
            try:
                if json.loads(state.read_text())["step"] >= 5:
                    break
            except (ValueError, KeyError):
                pass
        time.sleep(0.02)
    assert proc.poll() is None, "finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / "finetune.json").exists()
    step_at_kill = json.loads(state.read_text())["step"]
    assert 5 <= step_at_kill < 120
    for folder in (out, tmp_path / "full"):
        r = subprocess.run(args + ["--out", str(folder)], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
    a, b = _adapter_tensors(out), _adapter_tensors(tmp_path / "full")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert json.loads((out / "finetune.json").read_text())["steps"] == 120
