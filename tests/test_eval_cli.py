"""`vocalgrad-eval`: our usage block before lm-eval's help, fast failure for unknown models, quiet logs."""

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from harness_tasks import MODEL_ADAPTERS, TASK_DIR, cli

ROOT = Path(__file__).resolve().parents[1]


def test_help_prints_our_usage_then_lm_evals(capsys):
    pytest.importorskip("lm_eval")
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(cli.USAGE)
    assert "usage:" in out[len(cli.USAGE):]  # lm-eval's own help follows
    for name in MODEL_ADAPTERS:
        assert f"\n  {name} " in cli.USAGE
    assert "VOCALGRAD_DATASET" in cli.USAGE and "--output_path" in cli.USAGE


def test_usage_names_every_task_group():
    groups = [line.split(":", 1)[1].strip() for p in Path(TASK_DIR).glob("_*.yaml")
              for line in p.read_text().splitlines() if line.startswith("group:")]
    assert "vocalgrad" in groups and len(groups) >= 9
    for g in groups:
        assert g in cli.USAGE, f"task group {g} missing from vocalgrad-eval --help"


def test_unknown_vocalgrad_model_fails_in_one_line_before_lm_eval_loads():
    code = ("import sys\nfrom harness_tasks import cli\n"
            "print('exit', cli.main(['--model', 'vocalgrad-orcle', '--tasks', 'vocalgrad']))\n"
            "print('lm_eval loaded:', 'lm_eval' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.stderr.splitlines() == [
        "vocalgrad-eval: error: unknown model 'vocalgrad-orcle'; did you mean vocalgrad-oracle? VocalGrad models: "
        + ", ".join(MODEL_ADAPTERS)]
    assert r.stdout.splitlines() == ["exit 2", "lm_eval loaded: False"]


def test_other_models_are_left_to_lm_eval():
    cli._check_model("hf")               # lm-eval's own names pass through
    cli._check_model("vocalgrad-oracle")
    assert cli._requested_model(["--tasks", "x", "--model=vocalgrad-hf"]) == "vocalgrad-hf"


def test_only_our_custom_dataset_warning_is_dropped():
    from harness_tasks._quiet import quiet_known_warnings

    quiet_known_warnings()
    quiet_known_warnings()  # idempotent
    log = logging.getLogger("lm_eval.api.task")
    assert sum(type(f).__name__ == "OurWarningsFilter" for f in log.filters) == 1
    seen = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())
    log.addHandler(handler)
    try:
        log.warning("vocalgrad_pitch: Custom kwargs can be passed to `--metadata` in console (as json string)")
        log.warning("hellaswag: Custom kwargs can be passed to `--metadata` in console (as json string)")
        log.warning("vocalgrad_pitch: something else")
    finally:
        log.removeHandler(handler)
    assert [m[:20] for m in seen] == ["hellaswag: Custom kw", "vocalgrad_pitch: som"]


def test_run_name_is_the_model_and_its_arguments():
    assert cli.run_name("vocalgrad-oracle") == "vocalgrad-oracle"
    assert cli.run_name("vocalgrad-chance", "seed=1234") == "vocalgrad-chance_seed-1234"
    assert cli.run_name("vocalgrad-constant", "direction=increase,answer_log=/tmp/a b") == \
        "vocalgrad-constant_direction-increase_answer_log-tmp-a-b"
    assert cli.run_name("vocalgrad-chance", '{"seed": 7, "p_increase": 0.3}') == \
        "vocalgrad-chance_seed-7_p_increase-0.3"


def test_each_baseline_run_gets_a_folder_named_after_it(tmp_path):
    """lm-eval 0.4.13 named every run without a checkpoint the same seeded 'random' id (od6r49mr)."""
    pytest.importorskip("lm_eval")
    import json

    from _harness_helpers import make_hub_folder

    hub = make_hub_folder(tmp_path / "hub", categories=("pitch",))
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "VOCALGRAD_DATASET": str(hub), "VOCALGRAD_ANSWER_LOG": "none", "HOME": str(tmp_path)}
    runs = [("vocalgrad-chance", "seed=1"), ("vocalgrad-constant", "direction=increase"), ("vocalgrad-chance", "seed=1")]
    for model, margs in runs:
        proc = subprocess.run([sys.executable, "-m", "harness_tasks.cli", "--model", model, "--model_args", margs,
                               "--tasks", "vocalgrad_pitch", "--output_path", str(tmp_path / "results")],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
    folders = {p.name: sorted(p.glob("results_*.json")) for p in (tmp_path / "results").iterdir()}
    assert sorted(folders) == ["vocalgrad-chance_seed-1", "vocalgrad-constant_direction-increase"]
    assert len(folders["vocalgrad-chance_seed-1"]) == 2          # the rerun adds a file next to the first
    const = json.loads(folders["vocalgrad-constant_direction-increase"][0].read_text())
    assert const["config"]["model"] == "vocalgrad-constant" and const["model_name"] == \
        "vocalgrad-constant_direction-increase"
    # every results file carries the route's card (VocalGradLM.model_card, docs/models.md "Routes")
    card = const["config"]["vocalgrad_model"]
    assert card["route"] == "vocalgrad-constant" and card["parser"].startswith("harness_tasks.parsing")
    assert set(card) >= {"environment", "prompt_layout", "decoding", "stop_tokens"}
