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
