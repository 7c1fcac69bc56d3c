"""Read lm-eval output folders (``--output_path``, optionally ``--log_samples``) into evaluations.

lm-eval 0.4.13 writes, per run, ``<output_path>/<model>/results_<timestamp>.json`` and, with
``--log_samples``, one ``samples_<task>_<timestamp>.jsonl`` per task next to it. lmms-eval 0.7
(``harness_tasks/lmms``, docs/lmms-eval.md) writes ``<timestamp>_results.json`` and
``<timestamp>_samples_<task>.jsonl`` with the same fields, except that its sample lines hold no
``doc``: the VocalGrad lmms-eval tasks log the clip's record under ``clip`` instead
(:func:`sample_doc`). Both layouts are read alike (:data:`RESULTS_FILE`, :func:`samples_file`). This module
finds those files, keeps the VocalGrad tasks (``vocalgrad_<category>`` and the variants
``vocalgrad_swap_*``, ``vocalgrad_audioref_*``, ``vocalgrad_beep_*``) and turns every logged
sample into a *record* as understood by :mod:`harness_tasks.metrics`.

The sample logs themselves are read by :mod:`.sample_logs` (its readers are re-exported here).
An :class:`Evaluation` is one model on one task variant. Results files of the same model and
variant are merged (a later run replaces the categories it covers), so re-running only the
missing categories into the same folder works. The yes/no and ternary formats
(``vocalgrad_yesno_<category>``, ``vocalgrad_ternary_<category>``) have other labels and are
read into a :class:`FormatEvaluation` each (:func:`load_all`), merged the same way. The authors'
raw prediction files (JSON lines of their benchmark scripts) are read by :mod:`.authors`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from generation.user_files import read_text
from harness_tasks.data_identity import DATA_KEY
from harness_tasks.variants import LABELLED_FORMATS, RECORD_VARIANTS, split_task

from .authors import is_raw_predictions, load_raw_predictions  # the authors' own prediction files
from .content import row_data, separate_builds
from .evaluation import Evaluation, FormatEvaluation, ResultsError
from .sample_logs import (LoggedSample, SampleLogWarning, line_problem, logged_samples,  # noqa: F401 (re-exported)
                          read_format_samples, read_samples, sample_doc, sample_lines)

__all__ = ["Evaluation", "FormatEvaluation", "ResultsError", "load_all", "load_evaluations", "parse_format_task",
           "parse_task", "read_format_samples", "read_samples", "sample_doc", "samples_file"]

#: Name of a results file (group 1: its timestamp): lm-eval's ``results_<timestamp>.json`` or
#: lmms-eval's ``<timestamp>_results.json``.
RESULTS_FILE = re.compile(r"^(?=results_.+\.json$|.+_results\.json$)(?:results_)?(.+?)(?:_results)?\.json$")


def samples_file(rfile: Path, task: str) -> Path:
    """The sample log of ``task`` next to results file ``rfile``, in the same harness's naming."""
    stamp = RESULTS_FILE.match(rfile.name).group(1)
    if rfile.name.startswith("results_"):
        return rfile.parent / f"samples_{task}_{stamp}.jsonl"
    return rfile.parent / f"{stamp}_samples_{task}.jsonl"


def parse_task(name: str) -> tuple[str, str] | None:
    """``(variant, category)`` of a task read into an :class:`Evaluation` (a variant of
    :data:`~harness_tasks.variants.RECORD_VARIANTS`), ``None`` for any other task or a group.

    >>> parse_task("vocalgrad_swap_pitch")
    ('swap', 'pitch')
    """
    task = split_task(name)
    return task if task is not None and task[0] in RECORD_VARIANTS else None


def parse_format_task(name: str) -> tuple[str, str] | None:
    """``(format, category)`` of a yes/no or ternary task name, read into a
    :class:`FormatEvaluation`; ``None`` otherwise."""
    task = split_task(name)
    return task if task is not None and task[0] in LABELLED_FORMATS else None


def args_text(args: Any) -> str:
    """lm-eval's ``model_args`` (a mapping or ``k=v,...`` text) as ``k=v,...`` text."""
    if isinstance(args, dict):
        return ",".join(f"{k}={v}" for k, v in args.items())
    return str(args or "")


def _args_dict(text: str) -> dict[str, str]:
    out = {}
    for part in text.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def model_label(model: str, model_args: str) -> str:
    """Default label: the checkpoint (``pretrained=``/``model=``) or the adapter with its arguments."""
    args = _args_dict(model_args)
    for key in ("pretrained", "model"):
        if args.get(key):
            return args[key]
    return f"{model} ({model_args})" if model_args else model


def read_json(path: Path) -> dict:
    """An lm-eval results JSON; :class:`ResultsError` naming the file when it is not one."""
    what = "an lm-eval results JSON (results_<time>.json)"
    try:
        data = json.loads(read_text(path, what, error=ResultsError))
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: not a readable lm-eval results JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ResultsError(f"{path}: no 'results' mapping; is this an lm-eval results_*.json file?")
    return data


def results_files(path: Path) -> list[Path]:
    """``path`` itself (a results file) or every ``results_*.json`` below it (a folder), sorted."""
    if path.is_file():
        if not RESULTS_FILE.match(path.name):
            raise ResultsError(f"{path}: expected an lm-eval results_<timestamp>.json file or a folder")
        return [path]
    if not path.is_dir():
        raise ResultsError(f"{path}: no such file or folder")
    found = sorted(p for p in path.rglob("*results*.json") if RESULTS_FILE.match(p.name))
    if not found:
        raise ResultsError(f"{path}: no lm-eval results_*.json below this folder; run vocalgrad-eval "
                           f"with --output_path {path} --log_samples")
    return found


def split_spec(spec: str | Path) -> tuple[str | None, Path]:
    """``"LABEL=PATH"`` -> ``(LABEL, PATH)``; a plain path (or one that exists with ``=`` in it) -> ``(None, PATH)``."""
    text = str(spec)
    if "=" in text and not Path(text).exists():
        label, _, path = text.partition("=")
        if label and path:
            return label, Path(path)
    return None, Path(text)


def load_evaluations(specs, *, strict: bool = False, allow_mixed: bool = False) -> list[Evaluation]:
    """Load lm-eval outputs of the increase/decrease tasks (see :func:`load_all`).

    Raises
    ------
    ResultsError
        When a path holds no results, a file cannot be read, or no increase/decrease task is found.
    """
    evals, _ = load_all(specs, strict=strict, allow_mixed=allow_mixed)
    if not evals:
        raise ResultsError("no VocalGrad tasks (vocalgrad_<category>) in " + ", ".join(str(s) for s in specs))
    return evals


def load_all(specs, *, strict: bool = False, allow_mixed: bool = False
             ) -> tuple[list[Evaluation], list[FormatEvaluation]]:
    """Load lm-eval outputs: the increase/decrease tasks and the yes/no and ternary formats.

    Parameters
    ----------
    specs : iterable of str or Path
        Results files or folders (searched recursively for ``results_*.json``). ``LABEL=PATH``
        names the model shown in the report; without it the label comes from the recorded
        ``--model``/``--model_args``.
    strict : bool
        Raise instead of warning when a task's sample file is missing.
    allow_mixed : bool
        Results of one label computed on different builds (the same clip ids with different audio,
        by the sha256 the sample logs record) become one row per build, labelled by the build's
        fingerprint, instead of an error (:func:`analysis.report.content.separate_builds`).

    Returns
    -------
    evaluations : list of Evaluation
        In the order the models were first found; one per (label, variant).
    formats : list of FormatEvaluation
        One per (label, format) with ``vocalgrad_yesno_*`` / ``vocalgrad_ternary_*`` results.

    Raises
    ------
    ResultsError
        When a path holds no results, a file cannot be read, no VocalGrad task is found, or (without
        ``allow_mixed``) one row would mix results of different builds.
    """
    runs = _Runs(strict=strict)
    per_spec: list[tuple[Path, str | None, list[TaskEntry] | None]] = []
    for spec in specs:
        label_override, path = split_spec(spec)
        if is_raw_predictions(path):
            per_spec.append((path, label_override, None))
            continue
        entries = [runs.read_task(task, res, rfile, data, model, margs, base)
                   for rfile, data, model, margs, base in _labelled_results(path, label_override)
                   for task, res in data["results"].items()]
        per_spec.append((path, label_override, [e for e in entries if e is not None]))
    checked = iter(separate_builds([e for _, _, es in per_spec if es for e in es], allow_mixed=allow_mixed))
    for path, label_override, entries in per_spec:
        if entries is None:
            runs.add_authors_files(path, label_override)
            continue
        for _ in entries:
            runs.add_task(next(checked))
    return runs.finish(specs)


class TaskEntry(NamedTuple):
    """One task of one results file, its sample log read: what :class:`_Runs` adds to a row."""

    task: str
    res: dict
    rfile: Path
    data: dict
    model: str
    margs: str
    base: str
    #: ``(kind, label, variant)`` of the row it joins (kind ``eval`` or ``format``).
    row: tuple
    variant: str
    cat: str
    is_format: bool
    records: list | None
    sfile: Path
    #: Fingerprint of its build when its row mixes builds (``--allow-mixed``), else None.
    build: str | None = None


def _labelled_results(path: Path, label_override: str | None):
    """``(file, data, model, model_args, label)`` of each results file under ``path``, oldest first
    (later runs win). ``label_override`` names the model; with several models here it prefixes theirs."""
    files = results_files(path)
    files.sort(key=lambda p: RESULTS_FILE.match(p.name).group(1))  # by the timestamp in the name
    loaded = []
    for rfile in files:
        data = read_json(rfile)
        cfg = data.get("config") or {}
        model = str(cfg.get("model") or data.get("model_name") or "model")
        loaded.append((rfile, data, model, args_text(cfg.get("model_args"))))
    models_here = {(m, a) for _, _, m, a in loaded}
    for rfile, data, model, margs in loaded:
        base = model_label(model, margs)
        if label_override:
            base = label_override if len(models_here) == 1 else f"{label_override} / {base}"
        yield rfile, data, model, margs, base


#: The same, for the other readers of these runs (the sweep fit, :mod:`.psychometric`).
labelled_results = _labelled_results


class _Runs:
    """What :func:`load_all` gathers: evaluations by (label, variant), format evaluations by
    (label, format), and the run (timestamp) each (label, variant, category) was last read from."""

    def __init__(self, *, strict: bool):
        self.strict = strict
        self.evals: dict[tuple[str, str], Evaluation] = {}
        self.fevals: dict[tuple[str, str], FormatEvaluation] = {}
        self.stamps: dict[tuple[str, str, str], str] = {}
        self.replaced: dict[int, tuple] = {}  # id(ev) -> (ev, {(new stamp, old stamp): [categories]})
        self.recorded: dict[Path, dict] = {}  # results file -> its vocalgrad_data
        self.builds: dict[int, str | None] = {}  # id(ev) -> build fingerprint of its label (--allow-mixed)
        self.authors: set[tuple[str, str]] = set()  # keys of the authors' files' evaluations

    def add_authors_files(self, path: Path, label: str | None) -> None:
        """The evaluations of a folder of the authors' prediction files."""
        for ev in load_raw_predictions(path, label=label):
            if (ev.label, ev.variant) in self.evals:
                ev.label += " (authors' files)"
            self.evals[(ev.label, ev.variant)] = ev
            self.authors.add((ev.label, ev.variant))

    def _authors_aside(self, key: tuple[str, str]) -> None:
        """An authors' row read earlier under the label of an lm-eval row: it takes the suffix (in its place),
        as it does when read later; the two are never merged."""
        ev = self.evals[key]
        ev.label += " (authors' files)"
        self.authors.discard(key)
        self.authors.add((ev.label, key[1]))
        self.evals = {(ev.label, k[1]) if k == key else k: v for k, v in self.evals.items()}

    def read_task(self, task: str, res: dict, rfile: Path, data: dict, model: str, margs: str,
                  base: str) -> TaskEntry | None:
        """One task of a results file with its sample log read (None for a task that is not ours)."""
        parsed = parse_task(task)
        fparsed = parse_format_task(task) if parsed is None else None
        if parsed is None and fparsed is None:
            return None
        variant, cat = parsed or fparsed
        if parsed is not None:
            row = ("eval", base if variant == "default" else f"{base} [{variant}]", variant)
        else:
            row = ("format", base, variant)
        sfile = samples_file(rfile, task)
        recs = None
        if sfile.is_file():
            recs = read_format_samples(sfile, variant, cat) if fparsed else read_samples(sfile, cat)
        return TaskEntry(task, res, rfile, data, model, margs, base, row, variant, cat, fparsed is not None,
                         recs, sfile)

    def _evaluation(self, e: TaskEntry):
        """The evaluation an entry is added to (made on first use)."""
        base = e.base if e.build is None else f"{e.base} (build {e.build})"
        if not e.is_format:
            label = base if e.variant == "default" else f"{base} [{e.variant}]"
            if (label, e.variant) in self.authors:
                self._authors_aside((label, e.variant))
            return self.evals.setdefault((label, e.variant), Evaluation(label, e.model, e.margs, e.variant))
        return self.fevals.setdefault((base, e.variant), FormatEvaluation(base, e.model, e.margs, e.variant))

    def _replace_earlier(self, ev, variant: str, cat: str, stamp: str) -> None:
        """Forget what an earlier run of the same (label, variant, category) contributed."""
        prev = self.stamps.get((ev.label, variant, cat))
        if prev is not None:  # the replaced run's warnings about this category no longer apply
            ev.warnings = [w for w in ev.warnings if not w.startswith(f"{cat}: ")]
            self.replaced.setdefault(id(ev), (ev, {}))[1].setdefault((stamp, prev), []).append(cat)
            ev.records = [r for r in ev.records if r["category"] != cat]
            ev.n_samples.pop(cat, None)
        self.stamps[(ev.label, variant, cat)] = stamp

    def add_task(self, e: TaskEntry) -> None:
        """One task's aggregated metrics and sample log from one results file."""
        ev = self._evaluation(e)
        cat, rfile, data = e.cat, e.rfile, e.data
        stamp = RESULTS_FILE.match(rfile.name).group(1)
        self._replace_earlier(ev, e.variant, cat, stamp)
        ev.task_metrics[cat] = {k.split(",")[0]: v for k, v in e.res.items()
                                if isinstance(v, (int, float)) and not k.split(",")[0].endswith("_stderr")}
        n = ((data.get("n-samples") or {}).get(e.task) or {}).get("effective")
        if n is not None:
            ev.n_samples[cat] = int(n)
        if rfile not in ev.files:
            ev.files.append(rfile)
        if isinstance(data.get(DATA_KEY), dict):
            self.recorded[rfile] = data[DATA_KEY]
        note = _sampling_note(data)
        if note and note not in ev.warnings:
            ev.warnings.append(note)
        self.builds[id(ev)] = e.build
        if e.records is not None:
            ev.records.extend(e.records)
            ev.files.append(e.sfile)
            _check_counts(ev, cat, e.records, e.sfile)
        else:
            msg = (f"{cat}: no sample log {e.sfile.name} next to {rfile}; intervals and "
                   f"breakdowns need lm-eval's --log_samples")
            if self.strict:
                raise ResultsError(msg)
            ev.warnings.append(msg)

    def finish(self, specs) -> tuple[list[Evaluation], list[FormatEvaluation]]:
        """The evaluations, with one warning per replaced run (not one per category)."""
        for ev, runs in self.replaced.values():
            ev.warnings += [f"results of {new} replace those of {old} ({', '.join(cats)})"
                            for (new, old), cats in runs.items()]
        for ev in [*self.evals.values(), *self.fevals.values()]:
            if not ev.files or not any(RESULTS_FILE.match(p.name) for p in ev.files):
                continue  # the authors' files: nothing recorded
            recorded = [self.recorded[p] for p in ev.files if p in self.recorded]
            ev.data = row_data(ev.records, recorded, n_clips=sum(ev.n_samples.values()) or None,
                               build=self.builds.get(id(ev)))
        if not self.evals and not self.fevals:
            raise ResultsError("no VocalGrad tasks (vocalgrad_<category>, vocalgrad_yesno_<category>, "
                               "vocalgrad_ternary_<category>) in " + ", ".join(str(s) for s in specs))
        return list(self.evals.values()), list(self.fevals.values())


def _sampling_note(data: dict) -> str | None:
    """The report's line for answers sampled at the maker's default temperature (``vocalgrad-openai``
    on Gemini 3 and later records it in ``config.vocalgrad_model.decoding.sampling``), else None."""
    model = (data.get("config") or {}).get("vocalgrad_model")
    decoding = model.get("decoding") if isinstance(model, dict) else None
    text = decoding.get("sampling") if isinstance(decoding, dict) else None
    if isinstance(text, str) and text.startswith("sampled at the maker's default"):
        return (text.split(";")[0] + ": the answers are samples, not greedy decoding; a rerun may answer otherwise "
                "and the answer log keeps the first answers")
    return None


def _check_counts(ev: Evaluation | FormatEvaluation, cat: str, recs: list[dict], sfile: Path) -> None:
    n = ev.n_samples.get(cat)
    if n is not None and n != len(recs):
        ev.warnings.append(f"{cat}: {sfile.name} has {len(recs)} samples, the results file says {n}")
    acc = ev.task_metrics[cat].get("acc")
    if acc is not None and recs:
        mine = sum(r["correct"] for r in recs) / len(recs)
        if abs(mine - acc) > 1e-9:
            ev.warnings.append(f"{cat}: accuracy from the sample log ({mine:.4f}) differs from the "
                               f"results file ({acc:.4f}); were the files produced by the same run?")
