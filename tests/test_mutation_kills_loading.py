"""The report loader's joins (analysis/report/loading.py) on small lm-eval folders: what mutation testing
checks (docs/testing.md): task names to rows, the label from the model arguments or ``LABEL=PATH``, each
refusal's text, the metrics, sample counts, files and warnings each row gets, a re-run replacing only
the categories it covers, the yes/no rows, and an authors' folder read beside an lm-eval one."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

import vocalgrad
from analysis.report import loading as L
from analysis.report.content import MixedBuildsError
from generation.identity import build_digest, short
from generation import published
from harness_tasks import utils
from tests._report_helpers import clips, write_results

S1, S2 = "2026-01-01T00-00-00.000000", "2026-02-01T00-00-00.000000"
CATS = ("pitch", "volume")


def _docs():
    return clips(sources=1, categories=CATS)  # 24 clips per category


def _pitch_right(doc):
    return doc["direction"] if doc["category"] == "pitch" else "increase"  # volume: half right


def test_task_names_labels_and_file_names():
    assert L.parse_task("vocalgrad_pitch") == ("default", "pitch")
    assert L.parse_task("vocalgrad_swap_pitch") == ("swap", "pitch")
    for other in ("vocalgrad_yesno_pitch", "vocalgrad", "mmlu_pitch"):
        assert L.parse_task(other) is None, other
    assert L.parse_format_task("vocalgrad_ternary_echo") == ("ternary", "echo")
    assert L.parse_format_task("vocalgrad_swap_echo") is None and L.parse_format_task("vocalgrad_echo") is None
    assert L.args_text({"pretrained": "org/m", "dtype": "bf16"}) == "pretrained=org/m,dtype=bf16"
    assert L.args_text(None) == "" and L.args_text("") == "" and L.args_text("k=v") == "k=v"
    assert L.model_label("hf", "dtype=bf16, pretrained = org/m") == "org/m"
    assert L.model_label("hf", "pretrained=a=b") == "a=b"
    assert L.model_label("vllm", "pretrained=,model=org/v") == "org/v"
    assert L.model_label("vocalgrad-constant", "direction=increase") == "vocalgrad-constant (direction=increase)"
    assert L.model_label("vocalgrad-oracle", "") == "vocalgrad-oracle"
    assert L.split_spec("m=/x/y") == ("m", Path("/x/y"))
    assert L.split_spec("=/x/y") == (None, Path("=/x/y")) and L.split_spec("m=") == (None, Path("m="))
    assert L.samples_file(Path("d/results_2026-01-01T00.json"), "vocalgrad_pitch") == \
        Path("d/samples_vocalgrad_pitch_2026-01-01T00.jsonl")
    assert L.samples_file(Path("d/20260101_results.json"), "vocalgrad_pitch") == \
        Path("d/20260101_samples_vocalgrad_pitch.jsonl")


def test_a_path_with_an_equals_sign_that_exists_is_a_path(tmp_path):
    odd = tmp_path / "a=b"
    odd.mkdir()
    assert L.split_spec(odd) == (None, odd)


def test_refusals_name_the_file(tmp_path):
    bad = tmp_path / "results_1.json"
    bad.write_text("{not json")
    with pytest.raises(L.ResultsError, match=r"results_1\.json: not a readable lm-eval results JSON \("):
        L.read_json(bad)
    bad.write_text(json.dumps({"results": [1]}))
    with pytest.raises(L.ResultsError, match=r"results_1\.json: no 'results' mapping; is this an lm-eval"):
        L.read_json(bad)
    assert L.read_json(_write(tmp_path / "results_2.json")) == {"results": {}}
    other = tmp_path / "notes.json"
    other.write_text("{}")
    with pytest.raises(L.ResultsError, match=r"notes\.json: expected an lm-eval results_<timestamp>\.json file"):
        L.results_files(other)
    with pytest.raises(L.ResultsError, match=r"nowhere: no such file or folder"):
        L.results_files(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "myresults.json").write_text("{}")
    with pytest.raises(L.ResultsError, match=r"empty: no lm-eval results_\*\.json below this folder; run "
                                             r"vocalgrad-eval with --output_path .*empty --log_samples"):
        L.results_files(empty)
    (empty / "b").mkdir()
    found = [_write(empty / "b" / "results_9.json"), _write(empty / "20260101_results.json")]
    assert L.results_files(empty) == sorted(found) and L.results_files(found[0]) == [found[0]]


def _write(path: Path) -> Path:
    path.write_text(json.dumps({"results": {}}))
    return path


def test_one_run_gives_one_row_with_its_metrics_counts_and_files(tmp_path):
    rfile = write_results(tmp_path, "hf", _pitch_right, docs=_docs(), model_args="pretrained=org/m",
                          data={"build": "b1", "dataset": "d", "source": "s", "source_kind": "demo"})
    (ev,) = L.load_evaluations([tmp_path], strict=True)
    assert (ev.label, ev.model, ev.model_args, ev.variant) == ("org/m", "hf", "pretrained=org/m", "default")
    assert ev.n_samples == {"pitch": 24, "volume": 24} and ev.warnings == []
    assert ev.task_metrics["pitch"]["acc"] == 1.0 and ev.task_metrics["volume"]["acc"] == 0.5
    assert "acc_stderr" not in ev.task_metrics["pitch"] and "alias" not in ev.task_metrics["pitch"]
    assert set(ev.task_metrics["pitch"]) == {"acc", "acc_parsed", "balanced_acc", "acc_increase", "acc_decrease",
                                             "increase_ratio", "increase_ratio_all", "unparsed_rate",
                                             "ambiguous_rate", "error_rate", "blocked_rate", "exact_match_rate"}
    assert ev.files == [rfile, rfile.parent / f"samples_vocalgrad_pitch_{S1}.jsonl",
                        rfile.parent / f"samples_vocalgrad_volume_{S1}.jsonl"]
    assert len(ev.records) == 48 and sum(r["correct"] for r in ev.records) == 24 + 12
    assert [r["category"] for r in ev.records] == ["pitch"] * 24 + ["volume"] * 24
    assert (ev.data["build"], ev.data["source_kind"], ev.data["n_clips"], ev.data["n_sources"]) == \
        ("b1", "demo", 48, 1)


def test_counts_and_accuracy_that_disagree_with_the_results_file_are_warned(tmp_path):
    rfile = write_results(tmp_path, "m", _pitch_right, docs=_docs())
    data = json.loads(rfile.read_text())
    data["results"]["vocalgrad_volume"]["acc,none"] = 0.75
    data["n-samples"]["vocalgrad_pitch"]["effective"] = 23
    rfile.write_text(json.dumps(data))
    (ev,) = L.load_evaluations([tmp_path])
    assert ev.n_samples == {"pitch": 23, "volume": 24}
    assert ev.warnings == [
        f"pitch: samples_vocalgrad_pitch_{S1}.jsonl has 24 samples, the results file says 23",
        "volume: accuracy from the sample log (0.5000) differs from the results file (0.7500); were the files "
        "produced by the same run?"]


def test_labels_from_the_spec_and_the_variant(tmp_path):
    write_results(tmp_path / "one", "hf", _pitch_right, docs=_docs(), model_args="pretrained=org/m")
    (ev,) = L.load_evaluations([f"mine={tmp_path / 'one'}"])
    assert ev.label == "mine"
    write_results(tmp_path / "one", "vocalgrad-oracle", _pitch_right, docs=_docs())
    assert sorted(e.label for e in L.load_evaluations([f"mine={tmp_path / 'one'}"])) == \
        ["mine / org/m", "mine / vocalgrad-oracle"]
    write_results(tmp_path / "sw", "hf", _pitch_right, docs=_docs(), model_args="pretrained=org/m", variant="swap")
    (ev,) = L.load_evaluations([tmp_path / "sw"])
    assert (ev.label, ev.variant, ev.categories) == ("org/m [swap]", "swap", ["pitch", "volume"])


def test_a_missing_sample_log_is_a_warning_or_with_strict_an_error(tmp_path):
    rfile = write_results(tmp_path, "m", _pitch_right, docs=_docs(), samples=False)
    msg = (f"pitch: no sample log samples_vocalgrad_pitch_{S1}.jsonl next to {rfile}; intervals and breakdowns "
           f"need lm-eval's --log_samples")
    (ev,) = L.load_evaluations([tmp_path])
    assert ev.warnings[0] == msg and len(ev.warnings) == 2 and ev.records == [] and ev.files == [rfile]
    assert ev.n_samples == {"pitch": 24, "volume": 24} and ev.data["n_clips"] == 48
    with pytest.raises(L.ResultsError) as err:
        L.load_evaluations([tmp_path], strict=True)
    assert str(err.value) == msg


def test_a_rerun_replaces_only_the_categories_it_covers(tmp_path):
    write_results(tmp_path, "m", lambda d: "increase", docs=_docs(), samples=False)  # no logs: two warnings
    pitch = [d for d in _docs() if d["category"] == "pitch"]
    write_results(tmp_path, "m", lambda d: d["direction"], docs=pitch, stamp=S2)
    (ev,) = L.load_evaluations([tmp_path])
    assert ev.task_metrics["pitch"]["acc"] == 1.0 and ev.task_metrics["volume"]["acc"] == 0.5
    assert [w.split(";")[0] for w in ev.warnings] == [
        f"volume: no sample log samples_vocalgrad_volume_{S1}.jsonl next to {tmp_path / 'm' / f'results_{S1}.json'}",
        f"results of {S2} replace those of {S1} (pitch)"]
    assert len(ev.records) == 24 and all(r["correct"] for r in ev.records)


def _format_results(root: Path, model: str, fmt: str, answer) -> Path:
    """What `vocalgrad-eval --tasks vocalgrad_<fmt>_pitch --log_samples` leaves (the task's own scoring)."""
    docs = clips(sources=1, categories=("pitch",))[:6]
    for d in docs:
        d["label"] = {"increase": "yes"}.get(d["direction"], "no") if fmt == "yesno" else d["direction"]
    out = root / model
    out.mkdir(parents=True)
    task, lines, per = f"vocalgrad_{fmt}_pitch", [], {}
    for i, doc in enumerate(docs):
        values = getattr(utils, f"process_results_{fmt}")(doc, [answer(doc)])
        for k, v in values.items():
            per.setdefault(k, []).append(v)
        lines.append(json.dumps({"doc_id": i, "doc": doc, "target": doc["label"], "resps": [[answer(doc)]],
                                 "filtered_resps": [answer(doc)], "filter": "none", **values}))
    (out / f"samples_{task}_{S1}.jsonl").write_text("\n".join(lines) + "\n")
    res = {"alias": "pitch", "acc,none": sum(per["acc"]) / len(docs)}
    res.update({f"{m},none": getattr(utils, f"agg_{m}_{fmt}")(per[m]) for m in utils.label_metric_names(fmt)})
    path = out / f"results_{S1}.json"
    path.write_text(json.dumps({"results": {task: res, f"vocalgrad_{fmt}": {"acc,none": 0.5}},
                                "n-samples": {task: {"effective": len(docs)}},
                                "config": {"model": model, "model_args": ""}}))
    return path


def test_format_tasks_are_their_own_rows(tmp_path):
    rfile = _format_results(tmp_path, "m", "yesno", lambda d: "Yes.")
    evals, (fe,) = L.load_all([tmp_path])
    assert evals == [] and (fe.label, fe.fmt, fe.model) == ("m", "yesno", "m")
    assert fe.task_metrics["pitch"]["acc"] == 0.5 and fe.task_metrics["pitch"]["pred_yes"] == 1.0
    assert fe.n_samples == {"pitch": 6} and fe.warnings == [] and len(fe.records) == 6
    assert {r["pred"] for r in fe.records} == {"yes"} and fe.files[0] == rfile
    with pytest.raises(L.ResultsError, match=r"^no VocalGrad tasks \(vocalgrad_<category>\) in "):
        L.load_evaluations([tmp_path])
    other = tmp_path / "other"
    other.mkdir()
    (other / f"results_{S1}.json").write_text(json.dumps({"results": {"mmlu": {"acc,none": 0.3}}}))
    with pytest.raises(L.ResultsError, match=r"^no VocalGrad tasks \(vocalgrad_<category>, vocalgrad_yesno_<category>, "
                                             r"vocalgrad_ternary_<category>\) in .*other$"):
        L.load_all([other])


def _authors_folder(root: Path, docs) -> Path:
    """One prediction file of the authors' scripts (always "increase") for ``docs``."""
    folder = root / "raw" / "pitch"
    folder.mkdir(parents=True)
    rows = []
    for doc in docs:
        bid = published.to_benchmark_clip_id(doc["id"], source_clip_id=f"{doc['source_id']}-utt")
        rows.append({"backend": "chance", "model_id": "org/m", "category": vocalgrad.category("pitch").id,
                     "benchmark_clip_id": bid, "gold_label": doc["direction"], "raw_response": "Increase.",
                     "metadata": {"source_clip_id": f"{doc['source_id']}-utt"}})
    (folder / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root / "raw"


def test_an_authors_folder_beside_an_lm_eval_folder_of_the_same_model(tmp_path):
    # in either order, and before and after: the authors' rows are kept apart, named so, in their place
    pitch = [d for d in _docs() if d["category"] == "pitch"]
    raw = _authors_folder(tmp_path, pitch)
    lm = tmp_path / "lm"
    write_results(lm, "hf", _pitch_right, docs=_docs(), model_args="pretrained=org/m")
    for specs, labels in (([raw, lm], ["org/m (authors' files)", "org/m"]),
                          ([lm, raw], ["org/m", "org/m (authors' files)"]),
                          ([raw, lm, f"x={raw}"], ["org/m (authors' files)", "org/m", "x"])):
        evs = L.load_evaluations(specs)
        assert [e.label for e in evs] == labels, specs
        by = {e.label: e for e in evs}
        assert by["org/m"].task_metrics["pitch"]["acc"] == 1.0 and len(by["org/m"].records) == 48
        assert by["org/m"].data["n_clips"] == 48 and by["org/m"].model == "hf"
        authors = by["org/m (authors' files)"]
        assert authors.categories == ["pitch"] and authors.task_metrics["pitch"]["acc"] == 0.5
        assert len(authors.records) == 24 and authors.data == {} and authors.files == [raw / "pitch" / "m.jsonl"]


def test_two_builds_in_one_row_are_refused_by_the_rows_label_or_kept_apart(tmp_path):
    docs = _docs()

    def sha(build):
        return lambda d: hashlib.sha256(f"{build}:{d['id']}".encode()).hexdigest()
    fp = {b: short(build_digest((d["id"], sha(b)(d)) for d in docs)) for b in "AB"}
    for variant, suffix in (("default", ""), ("swap", " [swap]")):
        root = tmp_path / variant
        for build, stamp in (("A", S1), ("B", S2)):
            write_results(root / build, "m", _pitch_right, docs=docs, variant=variant, stamp=stamp, sha256=sha(build))
        first = root / "A" / "m" / f"results_{S1}.json"
        with pytest.raises(MixedBuildsError, match="^" + re.escape(f"m{suffix}: {first} (build {fp['A']}) and ")):
            L.load_all([root / "A", root / "B"])
        with pytest.raises(MixedBuildsError, match="^" + re.escape(f"m{suffix}: {first} (build {fp['A']}) and ")):
            L.load_evaluations([root / "A", root / "B"])  # refused by default here too
        evs = L.load_evaluations([root / "A", root / "B"], allow_mixed=True)
        assert [e.label for e in evs] == [f"m (build {fp['A']}){suffix}", f"m (build {fp['B']}){suffix}"]
        assert [(e.data["fingerprint"], len(e.records), e.warnings) for e in evs] == \
            [(fp["A"], 48, []), (fp["B"], 48, [])]
