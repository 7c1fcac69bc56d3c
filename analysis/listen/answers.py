"""``answers.jsonl``: the listening test's answers, written safely and read back as records.

Every answer is one JSON line::

    {"annotator": "ann1", "clip_id": "...", "answer": "increase", "rt_sec": 1.42, "plays": 1,
     "practice": false, "position": 3, "category": "pitch", "direction": "decrease",
     "tier": "low", "trajectory": "linear", "source_id": "...", "time": "2026-11-29T18:40:02Z"}

``direction`` is the gold label, so the file can be scored without the data. ``rt_sec`` is the
time from the end of the clip's first playback to the answer.

Writing (:class:`AnswerLog`): an exclusive ``flock`` on the file serialises every writer (threads,
several ``vocalgrad listen`` processes); under the lock the lines written by others since the last
look are read, a clip the annotator has already answered is refused (a double click, a second tab),
and the new line is appended with one ``write`` and ``fsync``. A line cut short by a crash is
skipped on reading (with a warning) and never glued to the next one.

Reading for the report: :func:`human_records` turns the file(s) into the per-sample records of
:mod:`harness_tasks.metrics` / ``vocalgrad report``; :func:`human_evaluation_fields` packs them as
the fields of the report's ``Evaluation`` (label ``human``), and :func:`annotator_agreement`
gives each annotator's agreement with the others.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import vocalgrad

__all__ = [
    "AnswerLog",
    "AnswersError",
    "check_answers_file",
    "annotator_agreement",
    "human_evaluation",
    "human_evaluation_fields",
    "human_records",
    "read_answer_lines",
]

_REQUIRED = ("annotator", "clip_id", "answer", "direction")


class AnswersError(vocalgrad.VocalGradError, ValueError):
    """An answers file that cannot be used; the message names the file and line."""


def _parse_lines(data: bytes, path, start_line: int = 1) -> tuple[list[dict], int]:
    """Complete lines of ``data`` as dicts; returns them and the number of bytes consumed."""
    out = []
    end = data.rfind(b"\n") + 1  # a trailing fragment without newline is left for later
    for i, raw in enumerate(data[:end].split(b"\n")[:-1], start_line):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
            if not isinstance(rec, dict) or any(k not in rec for k in _REQUIRED):
                raise ValueError("missing " + ", ".join(k for k in _REQUIRED if k not in (rec or {})))
        except ValueError as exc:
            warnings.warn(f"{path}:{i}: skipped a damaged answer line ({exc})", stacklevel=3)
            continue
        out.append(rec)
    return out, end


def read_answer_lines(path, *, include_practice: bool = False) -> list[dict]:
    """Answer lines of one file, in file order (damaged lines skipped with a warning).

    Raises
    ------
    AnswersError
        If the file does not exist, is empty, or its first line is no answer line (a binary file, a
        report...): the check :func:`check_answers_file` makes before ``vocalgrad listen`` appends to a file.
    """
    path = Path(path)
    if not path.is_file():
        raise AnswersError(f"{path}: no such answers file (written by `vocalgrad listen --answers`)")
    try:
        check_answers_file(path)
    except AnswersError:
        raise AnswersError(f"{path}: not an answers file of `vocalgrad listen` (line 1 is not a JSON answer line "
                           f"with {', '.join(_REQUIRED)}); give the .jsonl file `vocalgrad listen --answers` "
                           "wrote") from None
    data = path.read_bytes()
    if not data.strip():
        raise AnswersError(f"{path}: empty; expected the answers `vocalgrad listen --answers` wrote (one JSON "
                           "line per answer): no annotator has answered into this file yet")
    if data and not data.endswith(b"\n"):
        warnings.warn(f"{path}: last line is incomplete (interrupted write); it is ignored", stacklevel=2)
    lines, _ = _parse_lines(data, path)
    return [r for r in lines if include_practice or not r.get("practice")]


def check_answers_file(path) -> None:
    """Refuse to append answers to an existing file that is not an answers file of ``vocalgrad listen``.

    An empty or missing file is fine; otherwise its first line must be an answer line (a JSON object
    with ``annotator``, ``clip_id``, ``answer`` and ``direction``), or the start of one cut off by an
    interruption.

    Raises
    ------
    AnswersError
        A folder, or a file whose first line is not an answer (``report.md``, a CSV...), named.
    """
    path = Path(path)
    if path.is_dir():
        raise AnswersError(f"--answers {path}: a folder; give the answers file (e.g. {path / 'answers.jsonl'})")
    if not path.is_file():
        return
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    first = head.split(b"\n", 1)[0].strip()
    if not head.strip():
        return
    complete = b"\n" in head
    try:
        rec = json.loads(first)
        ok = isinstance(rec, dict) and all(k in rec for k in _REQUIRED)
    except ValueError:
        ok = not complete and first.startswith(b"{")  # the first answer, cut off by an interruption
    if not ok:
        raise AnswersError(f"--answers {path}: not an answers file of `vocalgrad listen` (line 1 is not a JSON "
                           f"answer line with {', '.join(_REQUIRED)}); nothing was written to it. Give a new file "
                           f"name or an existing answers .jsonl file")


class AnswerLog:
    """Append-only answers file shared by threads and processes.

    Parameters
    ----------
    path : path-like
        ``answers.jsonl`` (created with its folder if missing).
    """

    def __init__(self, path):
        self.path = Path(path)
        check_answers_file(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._offset = 0
        self._lineno = 1
        self._answered: dict[str, set[str]] = defaultdict(set)
        self._lines: list[dict] = []
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._catch_up(fd)
        finally:
            os.close(fd)

    def _catch_up(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        if size <= self._offset:
            return
        data = os.pread(fd, size - self._offset, self._offset)
        lines, used = _parse_lines(data, self.path, self._lineno)
        self._lineno += data[:used].count(b"\n")
        self._offset += used
        for rec in lines:
            self._answered[str(rec["annotator"])].add(str(rec["clip_id"]))
            self._lines.append(rec)

    def answered(self, annotator: str) -> set[str]:
        """Clip ids the annotator has answered (as of the last look at the file)."""
        with self._lock:
            fd = os.open(self.path, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)
                self._catch_up(fd)
            finally:
                os.close(fd)
            return set(self._answered.get(annotator, ()))

    def lines(self, annotator: str | None = None) -> list[dict]:
        """Lines read so far (of one annotator, if given)."""
        self.answered(annotator or "")
        with self._lock:
            return [r for r in self._lines if annotator is None or r["annotator"] == annotator]

    def append(self, record: dict) -> bool:
        """Append one answer unless the annotator already answered the clip.

        Returns
        -------
        bool
            True if written, False if it was a repeat (nothing written).
        """
        missing = [k for k in _REQUIRED if k not in record]
        if missing:
            raise ValueError(f"answer record lacks {missing}")
        line = (json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._catch_up(fd)
                if record["clip_id"] in self._answered[record["annotator"]]:
                    return False
                size = os.fstat(fd).st_size
                if size > self._offset:  # a fragment left by a crash: end it so it stays on its own line
                    os.write(fd, b"\n")
                    self._offset = size + 1
                    self._lineno += 1
                os.write(fd, line)
                os.fsync(fd)
                self._offset += len(line)
                self._lineno += 1
                self._answered[record["annotator"]].add(record["clip_id"])
                self._lines.append(record)
                return True
            finally:
                os.close(fd)


# --------------------------------------------------------------------------------------------
# Reading for the report
# --------------------------------------------------------------------------------------------
def human_records(paths, *, annotators=None) -> list[dict[str, Any]]:
    """Human answers as per-sample records of :mod:`harness_tasks.metrics` / ``vocalgrad report``.

    Parameters
    ----------
    paths : path-like or list of path-like
        ``answers.jsonl`` files (practice answers are dropped).
    annotators : iterable of str, optional
        Keep only these annotators.

    Returns
    -------
    list of dict
        One per (annotator, clip) with the keys of the report's model records (``id, category,
        tier, trajectory, direction, source_id, raw, pred, status, exact, retried, correct``)
        plus ``annotator`` and ``rt_sec``. A repeated (annotator, clip) keeps its first answer.
    """
    from harness_tasks.metrics import score_answer

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    keep = set(annotators) if annotators else None
    seen: set = set()
    out = []
    for path in paths:
        for i, line in enumerate(read_answer_lines(path)):
            ann, cid = str(line["annotator"]), str(line["clip_id"])
            if (keep is not None and ann not in keep) or (ann, cid) in seen:
                continue
            seen.add((ann, cid))
            gold = line["direction"]
            if gold not in vocalgrad.DIRECTIONS:
                raise AnswersError(f"{path}: answer {i + 1} ({cid}) has gold direction {gold!r}")
            try:
                fields = vocalgrad.parse_clip_id(cid)
            except ValueError:
                fields = {}
            raw = line["answer"]
            rec = score_answer(raw if isinstance(raw, str) else None, gold)
            out.append({
                "id": cid,
                "category": line.get("category") or fields.get("category"),
                "tier": line.get("tier") or fields.get("tier"),
                "trajectory": line.get("trajectory") or fields.get("trajectory"),
                "direction": gold,
                "source_id": line.get("source_id") or fields.get("source_id") or cid,
                "raw": raw,
                "pred": rec["pred"],
                "status": rec["status"],
                "exact": rec["exact"],
                "retried": False,
                "correct": rec["correct"],
                "annotator": ann,
                "rt_sec": line.get("rt_sec"),
            })
    return out


def human_evaluation_fields(paths, *, label: str = "human", annotators=None) -> dict[str, Any]:
    """Keyword arguments of ``analysis.report.loading.Evaluation`` for the human "model" row.

    Returns a dict with ``label, model, model_args, variant, task_metrics, n_samples, records,
    files, warnings`` (``task_metrics`` empty: the report computes metrics from the records).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = human_records(paths, annotators=annotators)
    n_samples: dict[str, int] = defaultdict(int)
    for r in records:
        n_samples[r["category"]] += 1
    return {
        "label": label, "model": "human", "model_args": "", "variant": "default", "task_metrics": {},
        "n_samples": dict(n_samples), "records": records, "files": [Path(p) for p in paths],
        "warnings": [str(w.message) for w in caught],
    }


def human_evaluation(paths, *, label: str = "human", annotators=None):
    """The human answers as a ``analysis.report.loading.Evaluation`` (the report's model row)."""
    from analysis.report.loading import Evaluation

    return Evaluation(**human_evaluation_fields(paths, label=label, annotators=annotators))


def annotator_agreement(records) -> dict[str, Any]:
    """Agreement between annotators on the clips they share.

    Parameters
    ----------
    records : iterable of dict
        From :func:`human_records` (``annotator``, ``id``, ``pred``).

    Returns
    -------
    dict
        ``per_annotator``: annotator -> ``{"n": answers, "acc": accuracy, "shared": clips also
        answered by someone else, "agreement": share of those where the annotator's answer equals
        the majority answer of the others (ties count half)}``; ``pairwise``: ``"a|b"`` ->
        ``{"n": shared clips, "agreement": share equal}``; ``fleiss_kappa`` over clips with at
        least two answers (``nan`` when undefined).
    """
    import math

    by_clip: dict[str, dict[str, str | None]] = defaultdict(dict)
    per: dict[str, list] = defaultdict(list)
    for r in records:
        by_clip[r["id"]][r["annotator"]] = r["pred"]
        per[r["annotator"]].append(r)
    out: dict[str, Any] = {"per_annotator": {}, "pairwise": {}}
    for ann, recs in sorted(per.items()):
        shared, agree = 0, 0.0
        for r in recs:
            others = [p for a, p in by_clip[r["id"]].items() if a != ann]
            if not others:
                continue
            shared += 1
            same = sum(p == r["pred"] for p in others)
            agree += 1.0 if 2 * same > len(others) else 0.5 if 2 * same == len(others) else 0.0
        out["per_annotator"][ann] = {
            "n": len(recs), "acc": sum(r["correct"] for r in recs) / len(recs),
            "shared": shared, "agreement": agree / shared if shared else math.nan,
        }
    names = sorted(per)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = [c for c in by_clip.values() if a in c and b in c]
            out["pairwise"][f"{a}|{b}"] = {
                "n": len(both), "agreement": sum(c[a] == c[b] for c in both) / len(both) if both else math.nan}
    # Fleiss' kappa with categories increase / decrease / unparsed, over clips with >= 2 raters.
    rows = [list(c.values()) for c in by_clip.values() if len(c) >= 2]
    kappa = math.nan
    if rows:
        labels = ("increase", "decrease", None)
        p_bar, totals, n_all = 0.0, dict.fromkeys(labels, 0), 0
        for preds in rows:
            m = len(preds)
            counts = [sum(p == lab for p in preds) for lab in labels]
            p_bar += (sum(c * c for c in counts) - m) / (m * (m - 1))
            for lab, c in zip(labels, counts):
                totals[lab] += c
            n_all += m
        p_bar /= len(rows)
        p_e = sum((t / n_all) ** 2 for t in totals.values())
        kappa = (p_bar - p_e) / (1 - p_e) if p_e < 1 else math.nan
    out["fleiss_kappa"] = kappa
    return out
