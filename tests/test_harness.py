"""The lm-eval tasks end to end: YAMLs, dataset loading, docs, audio, scoring, groups, CLI."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vocalgrad
from _harness_helpers import CHANGING, make_hub_folder, offline_lm_eval, run_lm_eval

import harness_tasks
from harness_tasks import prompts, task_configs, utils
from harness_tasks.clip_audio import ClipAudio

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    return make_hub_folder(tmp_path_factory.mktemp("hub"), beep=True)


@pytest.fixture
def env_hub(hub, monkeypatch):
    monkeypatch.setenv(utils.DATASET_ENV, str(hub))
    return hub


@pytest.fixture(autouse=True)
def _fast_lm_eval(monkeypatch):
    offline_lm_eval(monkeypatch)


evaluate = run_lm_eval


def test_committed_yamls_equal_the_generated_ones():
    expected = task_configs.expected_files()
    on_disk = {p.name for p in Path(harness_tasks.TASK_DIR).iterdir() if p.suffix == ".yaml" or p.name.endswith("_yaml")}
    assert on_disk == set(expected), "run `python -m harness_tasks.task_configs`"
    for name, text in expected.items():
        assert (Path(harness_tasks.TASK_DIR) / name).read_text() == text, name
    assert "max_gen_toks: 128" in expected["_template_yaml"] and "num_fewshot: 0" in expected["_template_yaml"]


def test_lm_eval_indexes_groups_and_subtasks():
    from lm_eval.tasks import TaskManager

    tm = TaskManager(include_path=harness_tasks.TASK_DIR, include_defaults=False)
    assert {"vocalgrad", "vocalgrad_swap", "vocalgrad_audioref", "vocalgrad_beep"} <= set(tm.all_groups)
    for c in vocalgrad.CATEGORY_NAMES:
        assert f"vocalgrad_{c}" in tm.all_subtasks


def test_docs_prompt_audio_and_small_logs(env_hub):
    ds = utils.load_split("pitch")
    assert len(ds) == 2 and ds.features["audio"].decode is False
    docs = utils.process_docs(ds)
    assert "audio" not in docs.column_names and utils.process_docs(ds) is docs
    doc = docs[0]
    assert utils.doc_to_text(doc) == vocalgrad.default_prompt("pitch")
    assert utils.doc_to_text_swap(doc) == prompts.build_prompt("pitch", "swap")
    assert utils.doc_to_target(doc) == doc["direction"]
    (clip,) = utils.doc_to_audio(doc)
    y, sr = clip["array"], clip["sampling_rate"]
    assert y.dtype == np.float32 and y.ndim == 1 and sr == 16000 and np.abs(y).max() > 0.05
    # JSON-safe and small (lm-eval's plain json.dumps: request hashing, sample logs): its stored
    # items are the clip's identity; self-contained when pickled
    assert json.loads(json.dumps({"audio": [clip]})) == {"audio": [{"clip_id": doc["id"], "sha256": clip.sha256}]}
    assert len(clip.sha256) == 64 and "array" in clip and clip.get("sampling_rate") == 16000
    again = pickle.loads(pickle.dumps(clip))
    np.testing.assert_array_equal(again["array"], y)
    # same clip ids from another folder with different audio do not get mixed up
    other = utils.process_docs(utils.load_split("pitch", source=str(_quieter_copy(env_hub))))
    y2 = utils.doc_to_audio(other[0])[0]["array"]
    assert other[0]["id"] == doc["id"] and np.abs(y2).max() < 0.5 * np.abs(y).max()
    np.testing.assert_array_equal(utils.doc_to_audio(doc)[0]["array"], y)


def _quieter_copy(hub):
    """A Hub folder with the same ids as `hub` and quieter audio."""
    import io

    import datasets
    import soundfile as sf

    dst = hub.parent / (hub.name + "_quiet")
    if not dst.exists():
        ds = datasets.load_dataset("parquet", data_files=str(hub / "pitch" / "*.parquet"), split="train")
        ds = ds.cast_column("audio", datasets.Audio(decode=False))

        def quieter(row):
            y, sr = sf.read(io.BytesIO(row["audio"]["bytes"]))
            buf = io.BytesIO()
            sf.write(buf, y * 0.25, sr, format="FLAC")
            row["audio"] = {"bytes": buf.getvalue(), "path": row["audio"]["path"]}
            return row

        (dst / "pitch").mkdir(parents=True)
        ds.map(quieter).to_parquet(str(dst / "pitch" / "test-00000-of-00001.parquet"))
    return dst


def test_clear_errors_for_bad_sources(tmp_path, hub):
    with pytest.raises(FileNotFoundError, match="not a Hub folder"):
        utils.load_split("echo", source=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="train"):
        utils.load_split("pitch", split="train", source=str(hub))
    with pytest.raises(KeyError, match="no audio_ref from process_docs"):
        utils.doc_to_audio({"id": "nope__pitch__linear__low__increase"})
    with pytest.raises(KeyError, match="no audio_ref"):
        utils.doc_to_audio({"id": "x", "audio_ref": "unknown#3"})
    with pytest.raises(ValueError, match="neither 'bytes' nor 'path'"):
        ClipAudio("x", {"bytes": None, "path": None})["array"]


def test_constant_model_through_the_python_api(env_hub):
    from harness_tasks.models.baselines import ConstantLM

    res = evaluate(ConstantLM(direction="increase"), ["vocalgrad"], log_samples=True)
    r = res["results"]
    for c in vocalgrad.CATEGORY_NAMES:
        t = r[f"vocalgrad_{c}"]
        assert t["acc,none"] == 0.5 and t["balanced_acc,none"] == 0.5
        assert t["increase_ratio,none"] == 1.0 and t["exact_match_rate,none"] == 1.0
        assert t["unparsed_rate,none"] == 0.0
    g = r["vocalgrad"]
    assert g["acc,none"] == pytest.approx(0.5) and g["increase_ratio,none"] == pytest.approx(1.0)
    s = res["samples"]["vocalgrad_volume"][0]
    assert "audio" not in s["doc"] and {"tier", "trajectory", "direction", "id"} <= set(s["doc"])
    assert s["resps"] == [["increase"]]
    assert s["acc_parsed"] == s["unparsed_rate"] == f"{s['doc']['direction']}:increase:parsed:exact"
    assert len(json.dumps(s, default=str)) < 3000


def test_oracle_scores_the_changing_fixture_categories(env_hub):
    from harness_tasks.models.oracle import OracleLM

    res = evaluate(OracleLM(), [f"vocalgrad_{c}" for c in CHANGING] + ["vocalgrad_beep_volume"])
    for c in CHANGING:
        assert res["results"][f"vocalgrad_{c}"]["acc,none"] == 1.0, c
    assert res["results"]["vocalgrad_beep_volume"]["acc,none"] == 1.0


def test_dataset_from_metadata_and_chance_is_seeded(hub, monkeypatch):
    from harness_tasks.models.baselines import ChanceLM

    monkeypatch.delenv(utils.DATASET_ENV, raising=False)
    meta = {"vocalgrad_dataset": str(hub)}
    a = evaluate(ChanceLM(seed=3), ["vocalgrad_swap"], metadata=meta, log_samples=True)
    b = evaluate(ChanceLM(seed=3, batch_size=4), ["vocalgrad_swap"], metadata=meta, log_samples=True)
    ans = lambda res: [s["resps"] for t in sorted(res["samples"]) for s in res["samples"][t]]  # noqa: E731
    assert ans(a) == ans(b)
    assert {x[0][0] for x in ans(a)} == {"increase", "decrease"}
    prompt = a["samples"]["vocalgrad_swap_pitch"][0]["arguments"][0][0]
    assert prompt == prompts.build_prompt("pitch", "swap")


def test_vocalgrad_eval_cli_in_process(env_hub, tmp_path, capsys):
    from harness_tasks.cli import main

    out = tmp_path / "out"
    other = tmp_path / "mytasks"
    other.mkdir()
    code = main(["--model", "vocalgrad-constant", "--model_args", "direction=decrease",
                 "--tasks", "vocalgrad_volume,vocalgrad_pitch", "--device", "cpu",
                 "--include_path", str(other), "--output_path", str(out), "--log_samples"])
    assert code == 0
    (res_file,) = out.rglob("results_*.json")
    res = json.loads(res_file.read_text())
    assert res["results"]["vocalgrad_volume"]["acc,none"] == 0.5
    assert res["results"]["vocalgrad_pitch"]["increase_ratio,none"] == 0.0
    assert len(list(out.rglob("samples_vocalgrad_*.jsonl"))) == 2
    printed = capsys.readouterr().out
    assert "volume" in printed and "acc" in printed


def test_cli_task_list_parsing():
    from harness_tasks.cli import _requested_tasks

    assert _requested_tasks(["--model", "m", "--tasks", "vocalgrad,vocalgrad_swap", "--limit", "2"]) == [
        "vocalgrad", "vocalgrad_swap"]
    assert _requested_tasks(["-t", "a", "b", "--x"]) == ["a", "b"]
    assert _requested_tasks(["--tasks=vocalgrad_pitch"]) == ["vocalgrad_pitch"]


def test_plain_lm_eval_loads_tasks_from_a_checkout(hub, tmp_path):
    """lm-eval alone (no vocalgrad-eval, any working directory) builds our tasks via the shim."""
    code = (
        "import sys\n"
        "from lm_eval.tasks import TaskManager, get_task_dict\n"
        f"d = get_task_dict(['vocalgrad_volume'], TaskManager(include_path={harness_tasks.TASK_DIR!r}, include_defaults=False))\n"
        "t = d['vocalgrad_volume']\n"
        "docs = list(t.eval_docs)\n"
        "import harness_tasks\n"
        "print(harness_tasks.__file__, len(docs), t.doc_to_audio(docs[0])[0]['array'].shape[0])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env[utils.DATASET_ENV] = str(hub)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    path, n, samples = proc.stdout.split()[-3:]
    assert Path(path).resolve().is_relative_to(ROOT) and int(n) == 2 and int(samples) > 1000
