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
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import vocalgrad
from harness_tasks import prompts
from harness_tasks.data_identity import DATA_KEY, logged_clip_sha256
from harness_tasks.metrics import parse_record_code, score_answer
from harness_tasks.models.reasoning import answer_text
from harness_tasks.parsing import classify_answer
from harness_tasks.variants import FORMAT_LABELS, LABELLED_FORMATS, RECORD_VARIANTS, split_task

from .authors import is_raw_predictions, load_raw_predictions  # the authors' own prediction files
from .content import row_data, separate_builds
from .evaluation import Evaluation, FormatEvaluation, ResultsError

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


def sample_doc(line: dict[str, Any]) -> dict[str, Any]:
    """The doc of a sample-log line: lm-eval's ``doc``, or the ``clip`` record that the VocalGrad
    lmms-eval tasks log (lmms-eval drops the doc); ``{}`` when neither is there."""
    for key in ("doc", "clip"):
        if isinstance(line.get(key), dict):
            return line[key]
    return {}


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


def _clip_sha256(line: dict, doc: dict, clip_id: str) -> str | None:
    """The sha256 of the clip a sample line answered: the one logged with its request (what the model
    heard), else the doc's ``sha256`` (the Hub row's, the same bytes; lmms-eval's lines log only that)."""
    sha = logged_clip_sha256(line.get("arguments"), clip_id)
    return sha or (doc.get("sha256") if isinstance(doc.get("sha256"), str) else None)


def sample_lines(path: Path):
    """Yield ``(line number, parsed JSON object)`` for each non-blank line of an lm-eval sample log.

    Raises
    ------
    ResultsError
        On a line that is not JSON, naming the file and line.
    """
    with open(path, encoding="utf-8") as fh:
        for lineno, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                yield lineno, json.loads(text)
            except json.JSONDecodeError as exc:
                raise ResultsError(f"{path}:{lineno}: not JSON ({exc}); the file may be truncated, "
                                   f"rerun lm-eval with --log_samples") from None


class LoggedSample(NamedTuple):
    """One line of an lm-eval sample log, with what every reader takes from it."""

    lineno: int
    #: The whole JSON object of the line.
    line: dict[str, Any]
    #: The task's document (a line without one is skipped, see :func:`line_problem`).
    doc: dict[str, Any]
    #: The model's (filtered) answer text, ``None`` when not logged.
    raw: str | None
    #: The task's record under the metric's key, decoded (``None`` when not logged).
    logged: dict[str, Any] | None


def logged_samples(path: Path, metric: str, *, dicts: bool = False):
    """Yield a :class:`LoggedSample` per non-blank line of a sample log, its record read from key ``metric``.

    The record is the compact code of :func:`harness_tasks.metrics.record_code`; with
    ``dicts=True`` a dict there (logs of earlier toolkit versions) is taken as it is.

    Raises
    ------
    ResultsError
        On a line that is not JSON or whose record code does not parse, naming the file and line.
    """
    bad: list[tuple[int, str]] = []
    for lineno, line in sample_lines(path):
        problem = line_problem(line)
        if problem:
            bad.append((lineno, problem))
            continue
        code = line.get(metric)
        if isinstance(code, str):
            try:
                logged = parse_record_code(code)
            except ValueError as exc:
                raise ResultsError(f"{path}:{lineno}: {exc}") from None
        else:
            logged = code if dicts and isinstance(code, dict) else None
        yield LoggedSample(lineno, line, sample_doc(line), _raw_output(line), logged)
    if bad:
        shown = ", ".join(str(n) for n, _ in bad[:10]) + (", ..." if len(bad) > 10 else "")
        warnings.warn(f"{path}:{bad[0][0]}: skipped {len(bad)} sample-log line(s) ({bad[0][1]}; lines {shown}); "
                      f"they are not counted", SampleLogWarning, stacklevel=2)


class SampleLogWarning(UserWarning):
    """Sample-log lines that are not samples of a VocalGrad task (skipped, named by file and line)."""


def line_problem(line: Any) -> str | None:
    """Why a parsed sample-log line cannot be a sample (its ``doc`` is null or not an object, a field of
    the wrong type), None when it can."""
    if not isinstance(line, dict):
        return f"a JSON {type(line).__name__}, not an object"
    if "doc" not in line and "clip" not in line:
        return None  # a line without its doc (older logs): what is read comes from the logged record
    doc = line.get("doc", line.get("clip"))  # lmms-eval's lines carry the VocalGrad tasks' clip record instead
    if not isinstance(doc, dict):
        return f"'doc' is {'null' if doc is None else type(doc).__name__}, not an object"
    for key in ("id", "category", "direction", "label", "source_id", "tier", "trajectory"):
        if key in doc and doc[key] is not None and not isinstance(doc[key], str):
            return f"doc {key!r} is a {type(doc[key]).__name__}, not a string"
    return None


def read_format_samples(path: Path, fmt: str, category: str) -> list[dict[str, Any]]:
    """Records of one ``samples_vocalgrad_<fmt>_<category>_<timestamp>.jsonl`` file.

    The record code the task logs (under ``macro_f1``: gold label, prediction, status) is used
    when present; otherwise the raw output is parsed again with the format's answer words.

    Raises
    ------
    ResultsError
        On a line that is not JSON or whose gold label is not one of the format's labels.
    """
    labels = FORMAT_LABELS[fmt]
    words = prompts.answer_words(fmt)
    records = []
    for lineno, line, doc, raw, logged in logged_samples(path, "macro_f1"):
        if logged is not None:
            gold, pred, status = logged["direction"], logged["pred"], logged["status"]
        else:
            gold = doc.get("label") or line.get("target")
            pred, status = classify_answer(answer_text(raw), words)
        cid = doc.get("id") or f"{category}#{line.get('doc_id', lineno)}"
        if gold not in labels:
            raise ResultsError(f"{path}:{lineno}: gold label {gold!r} of clip {cid!r} is not one of "
                               f"{', '.join(labels)} ({fmt} format)")
        records.append({"id": cid, "category": doc.get("category") or category,
                        "source_id": doc.get("source_id") or cid, "direction": gold, "pred": pred,
                        "status": status, "raw": raw, "correct": pred == gold,
                        "sha256": _clip_sha256(line, doc, cid)})
    return records


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
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: not a readable lm-eval results JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ResultsError(f"{path}: no 'results' mapping; is this an lm-eval results_*.json file?")
    return data


def _raw_output(line: dict) -> str | None:
    resp = line.get("filtered_resps")
    if resp is None:
        resp = line.get("resps")
    while isinstance(resp, list):
        resp = resp[0] if resp else None
    return resp if resp is None or isinstance(resp, str) else str(resp)


def read_samples(path: Path, category: str) -> list[dict[str, Any]]:
    """Records of one ``samples_<task>_<timestamp>.jsonl`` file.

    The record logged by the VocalGrad task (under ``acc_parsed``: the compact code of
    :func:`harness_tasks.metrics.record_code`, or a dict in logs of earlier toolkit versions) is
    used when present, so that adapter errors keep their status; otherwise the raw output is
    parsed again. A sweep clip's record also carries the doc's :data:`vocalgrad.SWEEP_COLUMNS` (``level_null``...).

    Raises
    ------
    ResultsError
        On a line that is not JSON or lacks the clip's gold direction.
    """
    records = []
    for lineno, line, doc, raw, logged in logged_samples(path, "acc_parsed", dicts=True):
        cid = doc.get("id") or (logged or {}).get("id") or f"{category}#{line.get('doc_id', lineno)}"
        try:
            fields = vocalgrad.parse_clip_id(cid)
        except ValueError:
            fields = {}
        gold = (logged or {}).get("direction") or doc.get("label") or doc.get("direction") \
            or line.get("target") or fields.get("direction")
        if gold not in vocalgrad.DIRECTIONS:
            raise ResultsError(f"{path}:{lineno}: no gold direction for clip {cid!r} (got {gold!r})")
        if logged is not None and "status" in logged:
            pred, status, exact = logged.get("pred"), logged["status"], bool(logged.get("exact"))
        else:
            scored = score_answer(raw, gold)
            pred, status, exact = scored["pred"], scored["status"], scored["exact"]
        records.append({
            "id": cid,
            "category": doc.get("category") or category,
            "tier": doc.get("tier") or fields.get("tier"),
            "trajectory": doc.get("trajectory") or fields.get("trajectory"),
            "direction": gold,
            "source_id": doc.get("source_id") or fields.get("source_id") or cid,
            "raw": raw,
            "pred": pred,
            "status": status,
            "exact": exact,
            "retried": bool((logged or {}).get("retried", False)),
            "correct": pred == gold,
            "sha256": _clip_sha256(line, doc, cid),
            **{k: doc[k] for k in vocalgrad.SWEEP_COLUMN_NAMES if k in doc},  # a sweep clip's level_null... (sweep.md)
        })
    return records


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

    def add_authors_files(self, path: Path, label: str | None) -> None:
        """The evaluations of a folder of the authors' prediction files."""
        for ev in load_raw_predictions(path, label=label):
            if (ev.label, ev.variant) in self.evals:
                ev.label += " (authors' files)"
            self.evals[(ev.label, ev.variant)] = ev

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
