"""Sample logs of lm-eval and lmms-eval runs: their lines read into the report's records.

A sample log (``samples_<task>_<timestamp>.jsonl`` of lm-eval, ``<timestamp>_samples_<task>.jsonl`` of
lmms-eval) holds one JSON line per answered clip. :func:`read_samples` and :func:`read_format_samples`
turn them into the records of :mod:`harness_tasks.metrics`; a line that is no sample is skipped with a
:class:`SampleLogWarning` naming it, and a clip logged on several lines (a log appended to twice)
counts once, the repeated lines named in a warning (:func:`once_per_clip`).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import vocalgrad
from generation.user_files import text_lines
from harness_tasks import prompts
from harness_tasks.data_identity import logged_clip_sha256
from harness_tasks.metrics import parse_record_code, score_answer
from harness_tasks.models.thinking import answer_text
from harness_tasks.parsing import classify_answer
from harness_tasks.variants import FORMAT_LABELS

from .evaluation import ResultsError

__all__ = ["LoggedSample", "SampleLogWarning", "line_problem", "logged_samples", "once_per_clip",
           "read_format_samples", "read_samples", "sample_doc", "sample_lines"]


def sample_doc(line: dict[str, Any]) -> dict[str, Any]:
    """The doc of a sample-log line: lm-eval's ``doc``, or the ``clip`` record that the VocalGrad
    lmms-eval tasks log (lmms-eval drops the doc); ``{}`` when neither is there."""
    for key in ("doc", "clip"):
        if isinstance(line.get(key), dict):
            return line[key]
    return {}


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
    for lineno, text in text_lines(path, "lm-eval's sample log (one JSON object per line, written with "
                                   "--log_samples)", error=ResultsError):
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
    records, lines = [], []
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
        lines.append(lineno)
    return once_per_clip(path, records, lines)


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
    parsed again.

    Raises
    ------
    ResultsError
        On a line that is not JSON or lacks the clip's gold direction.
    """
    records, lines = [], []
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
            **({"clipped_ratio": doc["clipped_ratio"]} if "magnitude" in doc and "clipped_ratio" in doc else {}),
        })
        lines.append(lineno)
    return once_per_clip(path, records, lines)


def once_per_clip(path: Path, records: list[dict[str, Any]], lines: list[int]) -> list[dict[str, Any]]:
    """``records`` with each clip once (its first line); the repeated lines are named in a
    :class:`SampleLogWarning` (a log appended to by two runs, a copy pasted twice)."""
    seen: dict[str, int] = {}
    kept, repeated = [], []
    for rec, lineno in zip(records, lines):
        if rec["id"] in seen:
            repeated.append((lineno, rec["id"], seen[rec["id"]]))
            continue
        seen[rec["id"]] = lineno
        kept.append(rec)
    if repeated:
        shown = "; ".join(f"line {n} repeats {cid} (line {first})" for n, cid, first in repeated[:3])
        more = f"; and {len(repeated) - 3} more" if len(repeated) > 3 else ""
        warnings.warn(f"{path}: {len(repeated)} clip(s) logged more than once ({shown}{more}); each clip is counted "
                      "once, from its first line", SampleLogWarning, stacklevel=3)
    return kept
