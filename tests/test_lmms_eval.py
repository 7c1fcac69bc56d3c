"""VocalGrad inside lmms-eval 0.7 (harness_tasks/lmms, docs/lmms-eval.md): the generated task set, the
same answers as vocalgrad-eval with one tiny Qwen2-Audio through lmms-eval's own ``qwen2_audio`` class,
and `vocalgrad report` reading lmms-eval's output folder."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("lmms_eval")
pytest.importorskip("torch")
pytest.importorskip("transformers")

from _harness_helpers import build_tiny_qwen2_audio, make_hub_folder, run_lm_eval  # noqa: E402

from harness_tasks import lmms_configs  # noqa: E402

CATEGORIES = ("pitch", "volume")
MAX_NEW = 6
#: Qwen2-Audio-7B-Instruct's generation_config.json (sampling with a repetition penalty of 1.1); the token
#: ids come from the tiny tokenizer. lmms-eval passes only do_sample / temperature / top_p / num_beams, so
#: transformers keeps the penalty.
QWEN2_AUDIO_GENERATION = dict(do_sample=True, temperature=0.7, top_k=20, top_p=0.5, repetition_penalty=1.1)


def _with_checkpoint_generation(model_dir):
    """The tiny checkpoint with Qwen2-Audio-7B-Instruct's sampling and penalty in its generation config."""
    from transformers import GenerationConfig

    own = GenerationConfig.from_pretrained(model_dir)
    GenerationConfig(bos_token_id=own.bos_token_id, eos_token_id=own.eos_token_id, pad_token_id=own.pad_token_id,
                     **QWEN2_AUDIO_GENERATION).save_pretrained(model_dir)
    return model_dir


def test_committed_lmms_task_files_equal_generated():
    expected = lmms_configs.expected_files()
    on_disk = {p.name: p.read_text() for p in lmms_configs.TASK_DIR.iterdir()
               if p.is_file() and p.name != "vocalgrad_lmms_utils.py"}
    assert on_disk == expected, "run `python -m harness_tasks.lmms_configs`"
    # the layout variants are lm-eval only; the rest are the lm-eval tasks under the same names
    assert "_vocalgrad.yaml" in expected and "vocalgrad_swap_pitch.yaml" in expected
    assert not any(n.startswith(("vocalgrad_audiofirst", "vocalgrad_fewshot")) for n in expected)
    from harness_tasks.models.base import TASK_KWARGS

    assert set(lmms_configs.ADAPTER_KWARGS) == set(TASK_KWARGS)
    assert all(k not in text for text in expected.values() for k in (*TASK_KWARGS, "max_gen_toks", "custom_dataset"))


class _Recorder:
    """Wraps Qwen2AudioForConditionalGeneration.generate: records what each call got, and counts the
    steps transformers' repetition penalty was applied."""

    def __init__(self):
        from transformers import Qwen2AudioForConditionalGeneration, RepetitionPenaltyLogitsProcessor

        self.cls, self.penalty = Qwen2AudioForConditionalGeneration, RepetitionPenaltyLogitsProcessor
        self.original, self.original_penalty = self.cls.generate, self.penalty.__call__
        self.calls: list[dict] = []
        self.penalties: list[float] = []

    def __enter__(self):
        recorder = self

        def generate(model, *args, **kwargs):
            recorder.calls.append({k: (v.detach().clone() if hasattr(v, "detach") else v) for k, v in kwargs.items()})
            return recorder.original(model, *args, **kwargs)

        def penalty(proc, *args, **kwargs):
            recorder.penalties.append(proc.penalty)
            return recorder.original_penalty(proc, *args, **kwargs)

        self.cls.generate, self.penalty.__call__ = generate, penalty
        return self

    def __exit__(self, *exc):
        self.cls.generate, self.penalty.__call__ = self.original, self.original_penalty


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same tiny checkpoint on the same 48 kHz Hub folder through lmms-eval and vocalgrad-eval."""
    import lm_eval.evaluator
    import lmms_eval.evaluator
    from lmms_eval.loggers import EvaluationTracker
    from lmms_eval.models.simple.qwen2_audio import Qwen2_Audio
    from lmms_eval.tasks import TaskManager

    from harness_tasks.models.hf import HFAudioLM

    tmp = tmp_path_factory.mktemp("lmms")
    hub = make_hub_folder(tmp / "hub", categories=CATEGORIES, sr=48000)
    model_dir = _with_checkpoint_generation(build_tiny_qwen2_audio(tmp / "model"))
    out = tmp / "lmms_results"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VOCALGRAD_DATASET", str(hub))
        # lmms-eval 0.7.3 patches filelock's private filelock._api, gone in filelock 4 (docs/lmms-eval.md)
        mp.setattr(lmms_eval.evaluator._enable_reentrant_filelocks, "_patched", True, raising=False)
        mp.setattr(lm_eval.evaluator, "add_env_info", lambda results: None)
        # lmms-eval's adapter sends inputs to CUDA unless device_map is a device: load on the CPU, then say so
        lmms_lm = Qwen2_Audio(pretrained=str(model_dir), device="cpu", device_map="auto")
        lmms_lm.device_map = "cpu"
        tracker = EvaluationTracker(output_path=str(out))
        tasks = [f"vocalgrad_{c}" for c in CATEGORIES]
        with _Recorder() as rec_lmms:
            lmms_res = lmms_eval.evaluator.simple_evaluate(
                model=lmms_lm, model_args=f"pretrained={model_dir}", tasks=tasks, bootstrap_iters=0,
                log_samples=True, gen_kwargs=f"max_new_tokens={MAX_NEW}", evaluation_tracker=tracker,
                task_manager=TaskManager(include_path=str(lmms_configs.TASK_DIR), include_defaults=False))
        samples = lmms_res.pop("samples")
        tracker.save_results_aggregated(results=lmms_res, samples=samples, datetime_str="20261202_000000")
        for task in lmms_res["configs"]:
            tracker.save_results_samples(task_name=task, samples=samples[task])
        hf = HFAudioLM(pretrained=str(model_dir), device="cpu", batch_size=1, retry_unparsed=False,
                       generation="checkpoint_greedy")
        lm_tasks = [f"vocalgrad_audiofirst_{c}" for c in CATEGORIES] + ["vocalgrad_pitch"]
        with _Recorder() as rec_lm:
            lm_res = run_lm_eval(hf, lm_tasks, log_samples=True, gen_kwargs=f"max_gen_toks={MAX_NEW}")
        plain = HFAudioLM(pretrained=str(model_dir), device="cpu", batch_size=1, retry_unparsed=False)
        with _Recorder() as rec_plain:                      # the default: greedy without the checkpoint's penalty
            plain_res = run_lm_eval(plain, lm_tasks[:len(CATEGORIES)], log_samples=True,
                                    gen_kwargs=f"max_gen_toks={MAX_NEW}")
    return {"lmms": lmms_res, "lmms_samples": samples, "lmms_calls": rec_lmms.calls, "lm": lm_res,
            "lm_calls": rec_lm.calls, "out": out, "hub": hub, "plain": plain_res,
            "penalties": {"lmms": rec_lmms.penalties, "lm": rec_lm.penalties, "plain": rec_plain.penalties}}


def _answers(samples: list[dict]) -> dict[str, tuple[str, float]]:
    out = {}
    for s in samples:
        doc = s.get("doc") or s["clip"]
        resp = s.get("filtered_resps", s.get("resps"))
        while isinstance(resp, list):
            resp = resp[0]
        out[doc["id"]] = (resp.strip(), s["acc"])
    return out


def test_lmms_eval_answers_equal_vocalgrad_eval_audio_first(runs):
    import torch

    lmms, lm = runs["lmms"], runs["lm"]
    for cat in CATEGORIES:
        mine = _answers(runs["lmms_samples"][f"vocalgrad_{cat}"])
        theirs = _answers(lm["samples"][f"vocalgrad_audiofirst_{cat}"])
        assert set(mine) == set(theirs) and len(mine) == 2        # the same clips ...
        assert mine == theirs                                     # ... the same answer and score per clip
        for metric in ("acc", "unparsed_rate", "increase_ratio_all", "exact_match_rate"):
            a, b = lmms["results"][f"vocalgrad_{cat}"][f"{metric},none"], lm["results"][f"vocalgrad_audiofirst_{cat}"][f"{metric},none"]
            assert a == b or (a != a and b != b), metric
    # what reached the model: the same tokens (chat template with its system turn, audio then text, the
    # generation prompt) and bit-identical log-mel features (48 kHz -> 16 kHz by soxr HQ in both)
    lmms_calls, lm_calls = runs["lmms_calls"], runs["lm_calls"][:2 * len(CATEGORIES)]  # audiofirst tasks first
    assert len(lmms_calls) == len(lm_calls) == 2 * len(CATEGORIES)
    assert len({c["input_features"].numpy().tobytes() for c in lmms_calls}) == len(lmms_calls)  # 4 different clips
    for c in lmms_calls:
        same = [m for m in lm_calls if torch.equal(m["input_ids"], c["input_ids"])
                and torch.equal(m["input_features"], c["input_features"])]
        assert len(same) == 1
    # decoding: both greedy with the task's token budget; lmms-eval adds min_new_tokens=1
    c = runs["lmms_calls"][0]
    assert (c["do_sample"], c["max_new_tokens"], c["num_beams"], c["min_new_tokens"]) == (False, MAX_NEW, 1, 1)


def test_checkpoint_penalty_is_what_separates_default_greedy_from_lmms_eval(runs):
    """lmms-eval keeps the checkpoint's repetition penalty (1.1); vocalgrad-hf's default greedy drops it and
    answers differently; generation=checkpoint_greedy keeps it and answers as lmms-eval (test above)."""
    pen = runs["penalties"]
    assert pen["lmms"] and set(pen["lmms"]) == {1.1}               # applied at every step in lmms-eval ...
    assert len(pen["lm"]) >= len(pen["lmms"]) and set(pen["lm"]) == {1.1}   # ... and with checkpoint_greedy
    assert pen["plain"] == []                                      # never in the default
    differ = 0
    for cat in CATEGORIES:
        lmms = _answers(runs["lmms_samples"][f"vocalgrad_{cat}"])
        plain = _answers(runs["plain"]["samples"][f"vocalgrad_audiofirst_{cat}"])
        assert set(lmms) == set(plain)
        differ += sum(lmms[k][0] != plain[k][0] for k in lmms)
    assert differ >= 1, "the penalty changed no answer: the parity test could not see it"


def test_text_first_default_prompt_is_not_what_lmms_eval_sends(runs):
    """vocalgrad-eval's default task puts the text before the clip; lmms-eval's adapter always puts the clip first."""
    lmms_ids = {tuple(c["input_ids"][0].tolist()) for c in runs["lmms_calls"]}
    default = [c for c in runs["lm_calls"] if tuple(c["input_ids"][0].tolist()) not in lmms_ids]
    assert len(default) == 2 == len(runs["lm_calls"]) - 2 * len(CATEGORIES)  # vocalgrad_pitch's two clips
    ids = default[0]["input_ids"][0].tolist()
    assert any(sorted(ids) == sorted(k) for k in lmms_ids)  # the same tokens, in another order


def test_report_reads_lmms_eval_output_like_lm_eval(runs, tmp_path):
    from analysis.report.loading import load_evaluations

    files = sorted(p.name for p in runs["out"].rglob("*") if p.is_file())
    assert files == ["20261202_000000_results.json"] + [f"20261202_000000_samples_vocalgrad_{c}.jsonl"
                                                        for c in sorted(CATEGORIES)]
    (ev,) = load_evaluations([f"tiny={runs['out']}"], strict=True)
    assert ev.label == "tiny" and ev.variant == "default" and not ev.warnings
    assert sorted(ev.task_metrics) == sorted(CATEGORIES)
    lm_answers = {**_answers(runs["lm"]["samples"]["vocalgrad_audiofirst_pitch"]),
                  **_answers(runs["lm"]["samples"]["vocalgrad_audiofirst_volume"])}
    assert {r["id"]: (r["raw"].strip(), float(r["correct"])) for r in ev.records} == lm_answers
    assert all(r["tier"] == "low" and r["source_id"] == "tone00" for r in ev.records)
    # the clip record carries the sha256 of the clip's FLAC bytes (the Hub parquet's audio bytes)
    import json

    import pyarrow.parquet as pq

    from generation.identity import sha256_bytes

    (log,) = runs["out"].rglob("20261202_000000_samples_vocalgrad_pitch.jsonl")
    line = json.loads(log.read_text().splitlines()[0])
    assert "doc" not in line  # lmms-eval drops it; our tasks log the clip's record instead
    table = pq.read_table(next((runs["out"].parent / "hub" / "pitch").glob("*.parquet"))).to_pylist()
    by_id = {row["id"]: sha256_bytes(row["audio"]["bytes"]) for row in table}
    assert line["clip"]["sha256"] == by_id[line["clip"]["id"]]


def test_lmms_eval_command_line_with_include_path_scores_and_logs_every_clip(runs, tmp_path):
    """The `lmms-eval --include_path ... --tasks ...` command itself, as a user runs it after the `lmms` extra's
    install (its `dummy` model answers "increase" to every clip): exit status 0 and every clip scored and logged
    (was: with filelock 4 it stopped on `No module named 'filelock._api'` and still exited 0)."""
    import json
    import os
    import subprocess
    import sys

    out = tmp_path / "cli"
    env = {**os.environ, "VOCALGRAD_DATASET": str(runs["hub"])}
    code = ("import sys; from lmms_eval.cli.dispatch import main; sys.argv[0] = 'lmms-eval'; "
            "sys.exit(main())")
    proc = subprocess.run(
        [sys.executable, "-c", code, "--include_path", str(lmms_configs.TASK_DIR),
         "--tasks", ",".join(f"vocalgrad_{c}" for c in CATEGORIES), "--model", "dummy",
         "--model_args", "response=increase", "--output_path", str(out), "--log_samples"],
        env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "filelock._api" not in proc.stdout + proc.stderr
    (results,) = out.rglob("*_results.json")
    data = json.loads(results.read_text())
    for cat in CATEGORIES:
        assert data["results"][f"vocalgrad_{cat}"]["acc,none"] == 0.5
        assert data["results"][f"vocalgrad_{cat}"]["increase_ratio_all,none"] == 1.0
        (log,) = out.rglob(f"*_samples_vocalgrad_{cat}.jsonl")
        lines = [json.loads(t) for t in log.read_text().splitlines()]
        assert sorted((x["clip"]["direction"], x["acc"]) for x in lines) == [("decrease", 0.0), ("increase", 1.0)]
