"""Read the authors' raw prediction files into evaluations, beside lm-eval's outputs.

The authors' benchmark scripts (ynklab/vocalgrad, ``benchmarking-and-analysis``) write one JSON
object per clip, one file per model and category (``outputs/raw/vocalgrad/<variant>/<category>/
<model>.jsonl``), with at least ``benchmark_clip_id``, ``category`` (their internal id),
``raw_response``, ``gold_label`` and ``metadata`` (the manifest row: ``curve``, ``tier``,
``direction``, ...), and ``error: true`` when the call failed (``raw_response`` then holds the
exception text); also ``model_id``, ``backend`` and ``prompt_settings``. A JSON array of such
objects is read too.

Every answer is scored again from ``raw_response`` by this toolkit's parser (benchmark.md §7;
the authors' parser is the same rule), errors count as wrong with status ``error``, and clip ids
are mapped to ours (:func:`generation.published.to_clip_id`), so these evaluations pair
clip by clip with lm-eval runs in comparisons and significance tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import vocalgrad
from generation import published
from generation.user_files import read_text
from harness_tasks.metrics import score_answer
from harness_tasks.parsing import error_answer

from .evaluation import Evaluation, ResultsError

__all__ = ["is_raw_predictions", "load_raw_predictions", "raw_prediction_files", "read_raw_rows"]

_REQUIRED = ("benchmark_clip_id", "raw_response", "gold_label")
#: ``prompt_settings`` flag -> our task variant.
_VARIANT_FLAGS = {"swap_direction_order": "swap", "explicit_audio_clip_reference": "audioref",
                  "audio_before_text": "audiofirst"}
_GOLD = {"increase": "increase", "decrease": "decrease", "up": "increase", "down": "decrease"}


def _first_object(path: Path) -> dict | None:
    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(1 << 16).lstrip()
    except (OSError, UnicodeDecodeError):
        return None
    if head.startswith("["):
        head = head[1:].lstrip()
    try:
        obj, _ = json.JSONDecoder().raw_decode(head)
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _is_raw_file(path: Path) -> bool:
    obj = _first_object(path) if path.suffix in (".jsonl", ".json") else None
    return obj is not None and all(k in obj for k in _REQUIRED)


def raw_prediction_files(path) -> list[Path]:
    """The authors' prediction files at ``path`` (a file, or every ``*.jsonl`` below a folder)."""
    path = Path(path)
    if path.is_file():
        return [path] if _is_raw_file(path) else []
    if not path.is_dir():
        return []
    return sorted(p for p in path.rglob("*.jsonl") if not p.name.startswith("samples_") and _is_raw_file(p))


def is_raw_predictions(path) -> bool:
    """True for an authors' prediction file, or a folder holding some and no lm-eval results."""
    path = Path(path)
    if path.is_dir() and any(path.rglob("results_*.json")):
        return False
    return bool(raw_prediction_files(path))


def read_raw_rows(path) -> list[dict]:
    """The objects of one prediction file (JSON lines, or a JSON array)."""
    path = Path(path)
    text = read_text(path, "the authors' predictions (JSON lines or a JSON array)", error=ResultsError)
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ResultsError(f"{path}: not a JSON array of predictions ({exc})") from None
    else:
        rows = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ResultsError(f"{path}:{lineno}: not JSON ({exc}); the file may be truncated") from None
    if not all(isinstance(r, dict) for r in rows):
        raise ResultsError(f"{path}: expected one JSON object per prediction")
    return rows


def _variant(settings: Any, where: str, warnings: list[str]) -> str:
    on = [v for k, v in _VARIANT_FLAGS.items() if isinstance(settings, dict) and settings.get(k)]
    if len(on) > 1:
        warnings.append(f"{where}: prompt_settings combine {', '.join(on)}; reported as {on[0]!r}")
    return on[0] if on else "default"


def _record(row: dict, where: str) -> dict[str, Any]:
    """One prediction as a report record (the fields :func:`analysis.report.loading.read_samples` makes)."""
    for key in _REQUIRED:
        if key not in row:
            raise ResultsError(f"{where}: no {key!r}; is this a prediction file of the authors' scripts?")
    meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
    cat = row.get("category") or meta.get("category")
    bid = str(row["benchmark_clip_id"])
    try:
        cid = published.to_clip_id(bid, str(cat), source_clip_id=meta.get("source_clip_id") or None)
    except ValueError as exc:
        raise ResultsError(f"{where}: {exc}") from None
    fields = vocalgrad.parse_clip_id(cid)
    gold = _GOLD.get(str(row["gold_label"]).strip().lower())
    if gold != fields["direction"]:
        raise ResultsError(f"{where}: gold_label {row['gold_label']!r} disagrees with clip {bid!r}")
    raw = row["raw_response"]
    if row.get("error"):
        raw = error_answer(f"{row.get('error_type') or 'error'}: {raw}")
    elif raw is not None and not isinstance(raw, str):
        raw = str(raw)
    scored = score_answer(raw, gold)
    return {"id": cid, "category": fields["category"], "tier": fields["tier"],
            "trajectory": fields["trajectory"], "direction": gold, "source_id": fields["source_id"],
            "raw": raw, "pred": scored["pred"], "status": scored["status"], "exact": scored["exact"],
            "retried": False, "correct": scored["correct"]}


def load_raw_predictions(path, *, label: str | None = None) -> list[Evaluation]:
    """Evaluations (one per model and prompt variant) from the authors' prediction files.

    Parameters
    ----------
    path : path-like
        A prediction file or a folder searched for ``*.jsonl`` prediction files.
    label : str, optional
        Name shown in the report (default: the rows' ``model_id``, else ``backend``, else the
        file name).

    Returns
    -------
    list of Evaluation
        ``task_metrics`` hold ``acc`` per category, computed from the records. When files of the
        same model, variant and category repeat clips, the later file (by name) replaces the
        category, as re-runs do in lm-eval folders.

    Raises
    ------
    ResultsError
        No prediction file, a row without the required fields, an unknown category or clip id,
        or a gold label that disagrees with the clip id.
    """
    files = raw_prediction_files(path)
    if not files:
        raise ResultsError(f"{path}: no prediction files of the authors' scripts (JSON lines with "
                           "benchmark_clip_id, raw_response, gold_label)")
    evals: dict[tuple[str, str], Evaluation] = {}
    for f in files:
        rows = read_raw_rows(f)
        by_key: dict[tuple[str, str, str], list[dict]] = {}
        warnings: list[str] = []
        for i, row in enumerate(rows, 1):
            where = f"{f}:{i}"
            if row.get("answer_words"):
                raise ResultsError(f"{where}: a paraphrase run (answer_words); only the increase/decrease "
                                   "prompts are read")
            model_id = str(row.get("model_id") or row.get("backend") or f.stem)
            variant = _variant(row.get("prompt_settings"), str(f), warnings)
            rec = _record(row, where)
            by_key.setdefault((model_id, variant, rec["category"]), []).append(rec)
        for (model_id, variant, cat), recs in by_key.items():
            name = label or model_id
            name = name if variant == "default" else f"{name} [{variant}]"
            backend = str(rows[0].get("backend") or "authors")
            ev = evals.setdefault((name, variant), Evaluation(name, f"authors:{backend}", f"model={model_id}",
                                                              variant))
            ids = [r["id"] for r in recs]
            if len(set(ids)) != len(ids):
                raise ResultsError(f"{f}: clip(s) repeated within the file for {cat}")
            if cat in ev.task_metrics:
                ev.warnings.append(f"{cat}: {f.name} replaces the predictions read before")
                ev.records = [r for r in ev.records if r["category"] != cat]
            ev.records.extend(recs)
            ev.task_metrics[cat] = {"acc": sum(r["correct"] for r in recs) / len(recs)}
            ev.n_samples[cat] = len(recs)
            ev.warnings.extend(w for w in warnings if w not in ev.warnings)
            if f not in ev.files:
                ev.files.append(f)
    order = {c: i for i, c in enumerate(vocalgrad.CATEGORY_NAMES)}
    for ev in evals.values():  # file order is completion order for concurrent runs: fix one order
        ev.records.sort(key=lambda r: (order[r["category"]], r["id"]))
    return list(evals.values())
