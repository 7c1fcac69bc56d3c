"""Gather many results folders into leaderboard rows: one row per model × variant × dataset build.

Each lm-eval results file (``results_<stamp>.json`` and its ``samples_*.jsonl``) is one *run*. A run's
dataset build is identified by its content: :func:`generation.identity.build_digest` over the
``(clip id, sha256)`` pairs of the clips its sample logs answered, so two runs on the same clip ids
with different audio get different builds and never share a row. Runs of the same model, variant and
build are one row: the latest run (by the date lm-eval recorded) stands and the others are named in
the row's ``superseded`` list. A run without sample logs has no build digest and no interval; it is
listed with ``build`` ``None`` ("unknown") and never merged with another run.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import vocalgrad
from generation.identity import short
from harness_tasks.stat_settings import STATS

__all__ = ["LeaderboardError", "Row", "gather", "run_rows"]


class LeaderboardError(vocalgrad.VocalGradError, ValueError):
    """Results that cannot make a leaderboard; the message names the folder or file."""


@dataclass
class Row:
    """One leaderboard row: a model on one task variant and one dataset build.

    Attributes
    ----------
    model : str
        The label the report uses (``--model`` and ``--model_args``, or ``LABEL=`` of the command line).
    variant : str
        ``default``, ``swap``, ``audioref`` or ``beep``.
    build : str or None
        Build digest (hex) of the clips answered; ``None`` without a sample log.
    n_clips, n_sources : int
        Clips and source utterances answered (from the sample logs; lm-eval's count without them).
    acc : float
        Mean over the categories present (the paper's rule), a fraction.
    ci : list of float or None
        The headline 95 % interval of ``acc`` (``None`` without a sample log): over voices (clustered) from
        :data:`~harness_tasks.metrics.MIN_CLUSTERS` sources, else the clip bootstrap's (these voices); ``over``
        says which (:mod:`analysis.report.verdicts`).
    verdict : str
        The headline verdict: ``above chance``, ``below chance``, ``not different from chance``, ``too few
        clips`` or ``n/a``.
    by_category : dict
        Category -> accuracy (fraction).
    decoding : dict
        What the results file records about decoding: ``gen_kwargs``, ``batch_size``, the model's
        generation settings where the adapter recorded them.
    toolkit : str
        Toolkit version that made the results (``unknown`` for results that do not record it).
    date : str
        ISO date and time (UTC) of the run as lm-eval recorded it.
    data : dict
        What the results file says of the dataset (name, source kind), where recorded.
    results_file : str
        The run's results file; ``superseded`` lists earlier runs of the same row.
    error_rate : float or None
        Share of error answers (failed requests; ``None`` without a sample log); above
        :data:`analysis.report.stats.MAX_ERROR_RATE` the row has no verdict (``n/a: k % error answers``).
    over : str or None
        Scope of the headline: ``voices`` or ``these voices`` (``None`` without a sample log).
    ci_clips, verdict_clips
        The clip-level interval and verdict (these voices; the paper's clip bootstrap) beside the headline.
    blocked_rate : float or None
        Share of replies the provider blocked (safety or recitation filters; ``None`` without a sample
        log): wrong answers, as unparsed ones are, shown beside the verdict.
    """

    model: str
    variant: str
    build: str | None
    n_clips: int
    n_sources: int | None
    acc: float
    ci: list | None
    verdict: str
    by_category: dict
    decoding: dict
    toolkit: str
    date: str
    data: dict
    results_file: str
    superseded: list = field(default_factory=list)
    error_rate: float | None = None
    over: str | None = None
    ci_clips: list | None = None
    verdict_clips: str | None = None
    blocked_rate: float | None = None

    @property
    def key(self) -> tuple:
        return (self.model, self.variant, self.build)

    @property
    def run_id(self) -> str:
        """File-name-safe id of the run, unique by content: model and variant slugs (readable), then
        12 hex digits of the sha256 of the run's content (model name as given, variant, build,
        results file, date, figures), so ``Org/Model`` and ``org-model`` never share a file."""
        from analysis.report.markdown import slug

        content = {k: v for k, v in asdict(self).items() if k != "superseded"}
        digest = hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:12]
        return f"{slug(self.model)[:80]}__{slug(self.variant)[:20]}__{digest}"

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["build_short"] = short(self.build)
        out["run_id"] = self.run_id
        return out



class LeaderboardWarning(UserWarning):
    """A results file field the leaderboard cannot read (shown as unknown)."""


def _date(data: dict, rfile: Path) -> str:
    """The run's date (UTC, ISO): lm-eval's ``date`` (seconds since 1970), else the results file's
    name; ``unknown`` with a warning when neither can be read (``1e20``, ``-1e300``, text)."""
    stamp = data.get("date")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        try:
            return _dt.datetime.fromtimestamp(stamp, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OverflowError, ValueError, OSError):
            pass
    from analysis.report.loading import RESULTS_FILE

    m = RESULTS_FILE.match(rfile.name)  # results_2026-12-02T00-55-30.136372.json
    if m:
        day, _, clock = m.group(1).partition("T")
        text = f"{day}T{clock[:8].replace('-', ':')}Z"
        try:
            _dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
            return text
        except ValueError:
            pass
    if stamp is not None or m:
        shown = repr(stamp)[:40]
        warnings.warn(f"{rfile}: date {shown} is not a readable time (seconds since 1970 within years 1-9999); "
                      "the run's date is shown as unknown", LeaderboardWarning, stacklevel=2)
    return "unknown"


def _toolkit(data: dict) -> str:
    for rec in (data.get("vocalgrad_data"), (data.get("config") or {}).get("vocalgrad_model")):
        if isinstance(rec, dict):
            for name in ("toolkit_version", "toolkit"):
                if rec.get(name):
                    return str(rec[name])
    return "unknown"


def _decoding(data: dict) -> dict[str, Any]:
    cfg = data.get("config") or {}
    out = {"gen_kwargs": cfg.get("gen_kwargs") or {}, "batch_size": cfg.get("batch_size")}
    model = cfg.get("vocalgrad_model", data.get("vocalgrad_model"))  # the adapter's card (config.vocalgrad_model)
    if isinstance(model, dict) and model.get("decoding"):
        out["model"] = model["decoding"]
    return out



def _data_facts(facts: dict) -> dict[str, Any]:
    """The row's data as the leaderboard shows it: build name, dataset, source kind (its text), clips."""
    out = {k: facts[k] for k in ("dataset", "build", "n_clips", "build_digest") if facts.get(k) is not None}
    if facts.get("source_kind") not in (None, "unknown"):
        out["source_kind"] = facts.get("source_kind_text") or facts["source_kind"]  # "demo voices (synthetic)", ...
    return out


def run_rows(results_file: Path, label: str | None = None, *, draws: int, seed: int) -> list[Row]:
    """Rows of one lm-eval results file (one per task variant it holds)."""
    from analysis.report.analysis import analyse_evaluation
    from analysis.report.loading import ResultsError, load_evaluations, read_json

    spec = f"{label}={results_file}" if label else str(results_file)
    try:
        evaluations = load_evaluations([spec])
    except ResultsError as exc:
        raise LeaderboardError(str(exc)) from None
    data = read_json(results_file)
    rows = []
    for ev in evaluations:
        a = analyse_evaluation(ev, draws=draws, seed=seed)
        ov = a["overall"]
        facts = ev.data or {}  # what the report's loader found the row computed on (analysis.report.content.row_data)
        digest = facts.get("build_digest") if ev.has_samples else None  # without sample logs: unknown
        by_cat = {c: g.get("acc") for c, g in (a.get("by_category") or {}).items()}
        rows.append(Row(
            model=ev.label, variant=ev.variant, build=digest,
            n_clips=ov.get("n") if ev.has_samples else sum(ev.n_samples.values()),
            n_sources=ov.get("n_sources"),
            acc=ov.get("acc", ov.get("category_mean_acc", math.nan)),
            ci=list(ov["headline"]["ci"]) if ev.has_samples else None,
            verdict=ov["headline"]["verdict"] if ev.has_samples else ov.get("verdict", "n/a"), by_category=by_cat,
            decoding=_decoding(data), toolkit=_toolkit(data), date=_date(data, results_file),
            data=_data_facts(facts), results_file=str(results_file), error_rate=ov.get("error_rate"),
            blocked_rate=ov.get("blocked_rate"),
            **(dict(over=ov["headline"]["over"], ci_clips=list(ov["ci"]["acc"]["binomial"]),
                    verdict_clips=ov["verdict"]) if ev.has_samples else {})))
    return rows


def gather(specs, *, draws: int = STATS.draws, seed: int = STATS.seed) -> tuple[list[Row], list[str]]:
    """Rows of every results file under ``specs`` (folders or files; ``LABEL=PATH`` names the model).

    Returns
    -------
    rows : list of Row
        Sorted by accuracy, best first; one per (model, variant, build).
    notes : list of str
        One line per run that an identical-build later run of the same model replaced.

    Raises
    ------
    LeaderboardError
        A path with no results, or a results file that cannot be read.
    """
    from analysis.report.loading import ResultsError, results_files, split_spec

    runs: list[Row] = []
    for spec in specs:
        label, path = split_spec(spec)
        try:
            files = results_files(path)
        except ResultsError as exc:
            raise LeaderboardError(str(exc)) from None
        for rfile in files:
            runs.extend(run_rows(rfile, label, draws=draws, seed=seed))
    kept: dict[tuple, Row] = {}
    notes = []
    for row in sorted(runs, key=lambda r: r.date):
        if row.build is None:  # unknown build: its own row, never merged
            kept[(row.model, row.variant, row.results_file)] = row
            continue
        old = kept.get(row.key)
        if old is not None:
            row.superseded = old.superseded + [old.results_file]
            notes.append(f"{row.model} [{row.variant}] on build {short(row.build)}: {old.results_file} "
                         f"({old.date}) is replaced by the later run {row.results_file} ({row.date})")
        kept[row.key] = row
    rows = sorted(kept.values(), key=lambda r: (-(r.acc if r.acc == r.acc else -1), r.model, r.variant))
    return rows, notes
