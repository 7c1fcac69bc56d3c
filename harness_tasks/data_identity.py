"""What data a ``vocalgrad-eval`` run evaluated, recorded in its results file by content.

lm-eval's results file names the task and the model, not the clips: two runs on different builds
with the same clip ids look alike. ``vocalgrad-eval`` therefore adds one key to every results file::

    "vocalgrad_data": {
      "dataset": "demo_out/hub",            # as given (VOCALGRAD_DATASET, --metadata or the Hub id)
      "build": "hub",                       # the folder's name (or the repo id)
      "source": "demo", "source_kind": "demo", "source_kind_text": "demo voices (synthetic)",
      "build_digest": "3f2a...", "fingerprint": "3f2a9c01be7d",
      "n_clips": 864, "n_sources": 4, "toolkit_version": "0.1.0",
      "tasks": {"vocalgrad_pitch": {"build_digest": "...", "n_clips": 96, "n_sources": 4, "dataset": "..."}, ...}
    }

``build_digest`` is :func:`generation.identity.build_digest` over the ``(clip id, sha256)`` pairs of
the clips evaluated (each task's own, and all tasks together): run on every clip of a Hub folder it
equals the digest of that folder's clips. The clips' sha256 come from the sample log (lm-eval logs
each clip's ``{"clip_id", "sha256"}`` with its request, see :class:`harness_tasks.clip_audio.ClipAudio`)
or, without ``--log_samples``, from the docs this process scored. ``source_kind`` is read from the
dataset: the ``Source corpus`` line of a Hub folder's card (``vocalgrad hub`` writes it from
render.json), the authors' release layout (VCTK), the reference Hub id (VCTK); ``unknown`` otherwise.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import vocalgrad
from generation.identity import build_digest, short

__all__ = ["DATA_KEY", "PAPER_KINDS", "SOURCE_KINDS", "data_record", "dataset_source_kind", "install",
           "logged_clip_sha256", "source_kind"]

log = logging.getLogger("vocalgrad")

#: Key of the results file that holds :func:`data_record`.
DATA_KEY = "vocalgrad_data"
#: Source kind -> how people read it.
SOURCE_KINDS = {
    "vctk": "VCTK",
    "published": "VCTK (the authors' release)",
    "demo": "demo voices (synthetic)",
    "tones": "synthetic tones",
    "folder": "audio folder",
    "hf": "Hugging Face audio dataset",
    "loquacious": "Loquacious",
    "cv-spontaneous": "Common Voice spontaneous",
    "unknown": "unknown",
}
#: Source kinds the paper's rows were measured on (its VCTK test set).
PAPER_KINDS = ("vctk", "published")

_CARD_SOURCE = re.compile(r"Source corpus:\s*`([^`]*)`")


def source_kind(source: str | None) -> str:
    """The kind of a ``--source`` string: ``"demo"``, ``"vctk:/data/VCTK"`` -> ``"vctk"``, ...; ``unknown``."""
    if not source:
        return "unknown"
    kind = str(source).strip().partition(":")[0].lower()
    return kind if kind in SOURCE_KINDS else "unknown"


def dataset_source_kind(dataset: str | None) -> tuple[str, str | None]:
    """``(source kind, --source string or None)`` of a dataset (local folder or repo id).

    A Hub folder: the ``Source corpus`` line of its card; a render folder: its render.json; the
    authors' release layout and the reference Hub id: VCTK. Anything else: ``("unknown", None)``.
    """
    if not dataset:
        return "unknown", None
    path = Path(str(dataset)).expanduser()
    if path.is_dir():
        from generation import published
        from generation.render_dir import RenderDir

        if published.published_folder(path) is not None:
            return "published", "the authors' release"
        if RenderDir.looks_like(path):
            src = RenderDir(path).meta.get("source")
            return source_kind(src), src
        card = path / "README.md"
        if card.is_file():
            try:
                m = _CARD_SOURCE.search(card.read_text(encoding="utf-8", errors="replace")[:200_000])
            except OSError:
                m = None
            if m:
                return source_kind(m.group(1)), m.group(1)
        return "unknown", None
    if str(dataset) == vocalgrad.HUB_REPO_ID:
        return "vctk", vocalgrad.HUB_REPO_ID
    return "unknown", None


def logged_clip_sha256(arguments: Any, clip_id: str) -> str | None:
    """The sha256 lm-eval logged with a request for the clip ``clip_id`` (None when not logged).

    The requests' audio lists hold ``{"clip_id", "sha256"}`` items (few-shot requests several);
    ``arguments`` is a sample line's ``arguments`` as logged or as lm-eval holds it in memory.
    """
    stack = [arguments]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if item.get("clip_id") == clip_id and isinstance(item.get("sha256"), str):
                return item["sha256"]
            stack.extend(v for v in item.values() if isinstance(v, (Mapping, list, tuple)))
        elif isinstance(item, (list, tuple)):
            stack.extend(v for v in item if isinstance(v, (Mapping, list, tuple)))
    return None


def _summary(clips: Mapping[str, tuple[str | None, str | None]]) -> dict[str, Any]:
    """``build_digest``/``n_clips``/``n_sources`` of ``{clip id: (sha256, source id)}``; no digest when a
    sha256 is missing."""
    shas = [(cid, sha) for cid, (sha, _) in clips.items()]
    missing = [cid for cid, sha in shas if not sha]
    out: dict[str, Any] = {"n_clips": len(clips), "n_sources": len({s for _, s in clips.values() if s})}
    if missing:
        out["build_digest"] = None
        out["note"] = f"{len(missing)} clip(s) without a logged sha256 (e.g. {missing[0]})"
    else:
        try:
            out["build_digest"] = build_digest(shas)
        except ValueError as exc:
            out["build_digest"], out["note"] = None, str(exc)
    return out


def data_record(dataset: str | None, per_task: Mapping[str, Mapping[str, tuple[str | None, str | None]]], *,
                datasets: Mapping[str, str] | None = None, expected: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The ``vocalgrad_data`` entry of a results file.

    Parameters
    ----------
    dataset : str
        The dataset the run read (local folder or repo id).
    per_task : mapping
        Task -> ``{clip id: (sha256, source id)}`` of the clips it evaluated.
    datasets : mapping, optional
        Task -> its dataset where it differs from ``dataset`` (``--metadata vocalgrad_dataset``).
    expected : mapping, optional
        Task -> number of clips lm-eval says it evaluated; a task that lists fewer (a distributed run
        without ``--log_samples``: this process saw its share only) gets no digest and a note.
    """
    from harness_tasks.models.answer_log import toolkit_version

    datasets = dict(datasets or {})
    tasks: dict[str, Any] = {}
    every: dict[str, tuple[str | None, str | None]] = {}
    complete = True
    for task, clips in sorted(per_task.items()):
        entry = _summary(clips)
        n = (expected or {}).get(task)
        if n is not None and n != len(clips):
            entry["build_digest"] = None
            entry["note"] = (f"{len(clips)} of {n} clips seen by this process (a distributed run? add "
                             f"--log_samples to record them all)")
        complete = complete and entry["build_digest"] is not None
        if datasets.get(task, dataset) != dataset:
            entry["dataset"] = datasets[task]
        tasks[task] = entry
        for cid, (sha, sid) in clips.items():
            if cid in every and every[cid][0] != sha:
                complete = False
            every.setdefault(cid, (sha, sid))
    kind, src = dataset_source_kind(dataset)
    overall = _summary(every)
    if not complete:
        overall["build_digest"] = None
        overall.setdefault("note", "a task's clips have no digest (see its note)")
    name = Path(str(dataset)).expanduser()
    return {
        "dataset": dataset,
        "build": name.resolve().name if name.is_dir() else dataset,
        "source": src,
        "source_kind": kind,
        "source_kind_text": SOURCE_KINDS[kind],
        **overall,
        "fingerprint": short(overall["build_digest"]) if overall["build_digest"] else None,
        "toolkit_version": toolkit_version(),
        "tasks": tasks,
    }


# ----------------------------------------------------------------------------- lm-eval hooks
#: Task -> {clip id: (sha256, source id)} of the docs this process scored (no --log_samples).
SCORED: dict[str, dict[str, tuple[str | None, str | None]]] = {}


def _doc_sha256(doc: Mapping[str, Any]) -> str | None:
    from .clip_audio import audio_sha256
    from .dataset import AUDIO_STORES, CLIP_SHA256

    if doc.get("audio") is not None:
        return audio_sha256(doc["audio"])
    ref = str(doc.get("audio_ref") or "")
    if ref in CLIP_SHA256:
        return CLIP_SHA256[ref]
    key, _, row = ref.rpartition("#")
    if key not in AUDIO_STORES:
        return None
    try:
        sha = audio_sha256(AUDIO_STORES[key][int(row)]["audio"])
    except (LookupError, ValueError, TypeError):
        return None  # recorded as a clip without sha256: the run's digest is then null, with a note
    CLIP_SHA256[ref] = sha
    return sha


def _from_samples(samples: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for task, lines in samples.items():
        clips = out.setdefault(task, {})
        for s in lines:
            doc = s.get("doc") if isinstance(s, Mapping) else None
            if isinstance(doc, Mapping) and isinstance(doc.get("id"), str):
                clips[doc["id"]] = (logged_clip_sha256(s.get("arguments"), doc["id"]), doc.get("source_id"))
    return out


def _task_datasets(results: Mapping[str, Any]) -> dict[str, str]:
    from .dataset import dataset_source

    out = {}
    for task, cfg in (results.get("configs") or {}).items():
        if not str(task).startswith("vocalgrad"):
            continue
        meta = (cfg or {}).get("metadata") or {}
        kwargs = (cfg or {}).get("dataset_kwargs") or {}
        out[task] = str(meta.get("vocalgrad_dataset") or kwargs.get("vocalgrad_dataset") or dataset_source())
    return out


def results_data(results: Mapping[str, Any], samples: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """:func:`data_record` of an lm-eval results dict, from its samples (or what this process scored)."""
    from .dataset import dataset_source

    per_task = _from_samples(samples) if samples else {t: dict(c) for t, c in SCORED.items()}
    datasets = _task_datasets(results)
    per_task = {t: c for t, c in per_task.items() if t in datasets}
    if not per_task:
        return None
    expected = {t: int(v["effective"]) for t, v in (results.get("n-samples") or {}).items()
                if t in per_task and isinstance(v, Mapping) and "effective" in v}
    main = sorted(set(datasets.values()))
    dataset = main[0] if len(main) == 1 else dataset_source()
    return data_record(dataset, per_task, datasets=datasets, expected=expected)


def install() -> None:
    """Make lm-eval record :func:`results_data` under :data:`DATA_KEY` in every results file it saves
    (and note the clips each VocalGrad task scores, for runs without ``--log_samples``). Idempotent."""
    import lm_eval.api.task as task_mod
    import lm_eval.loggers.evaluation_tracker as tracker_mod

    task_cls = task_mod.ConfigurableTask
    if not getattr(task_cls.process_results, "_vocalgrad_data", False):
        original = task_cls.process_results

        def process_results(self, doc, results):
            name = str(getattr(self.config, "task", "") or "")
            if name.startswith("vocalgrad") and isinstance(doc, Mapping) and isinstance(doc.get("id"), str):
                SCORED.setdefault(name, {})[doc["id"]] = (_doc_sha256(doc), doc.get("source_id"))
            return original(self, doc, results)

        process_results._vocalgrad_data = True
        task_cls.process_results = process_results

    tracker_cls = tracker_mod.EvaluationTracker
    if not getattr(tracker_cls.save_results_aggregated, "_vocalgrad_data", False):
        save = tracker_cls.save_results_aggregated

        def save_results_aggregated(self, results, samples=None):
            try:
                record = results_data(results, samples)
            except Exception as exc:  # never lose the results over their identity record
                log.warning("vocalgrad-eval: could not record the data of this run (%s: %s)", type(exc).__name__, exc)
                record = None
            if record is not None:
                results[DATA_KEY] = record
            return save(self, results=results, samples=samples)

        save_results_aggregated._vocalgrad_data = True
        tracker_cls.save_results_aggregated = save_results_aggregated


def reset() -> None:
    """Forget the clips scored so far (a new evaluation in the same process)."""
    SCORED.clear()

