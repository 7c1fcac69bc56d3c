"""Few-shot examples of the ``vocalgrad_fewshot`` tasks: which examples, their audio, the prompt.

The examples come from the ``train`` config of the same category (:data:`FEWSHOT_CONFIG`); see
:func:`choose_fewshot` for the rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import vocalgrad

from . import prompts
from .clip_audio import AUDIO_MARKER, ClipAudio
from .dataset import AUDIO_STORES, doc_to_audio, load_split

__all__ = ["DEFAULT_FEWSHOT_K", "FEWSHOT_CONFIG", "attach_fewshot", "choose_fewshot", "doc_to_audio_fewshot",
           "doc_to_text_fewshot"]

#: Examples per query when ``--metadata vocalgrad_fewshot_k=...`` is not given.
DEFAULT_FEWSHOT_K = 4
#: Hub config the few-shot examples come from.
FEWSHOT_CONFIG = "train"


def choose_fewshot(query_ids: Sequence[str], query_sources: Sequence[str], pool_labels: Sequence[str],
                   pool_sources: Sequence[str], *, k: int, seed: int = 1234) -> list[list[int]]:
    """Pick ``k`` example rows of the pool for every query.

    The examples of a query never share its source utterance, are balanced between the
    labels (the odd one drawn at random), come in random order and depend only on
    ``(seed, query id)`` — not on the order of the queries or ``--limit``.

    Returns
    -------
    list of list of int
        Pool row indices per query.

    Raises
    ------
    ValueError
        If the pool cannot give a query enough examples from other sources.
    """
    import hashlib

    import numpy as np

    k = int(k)
    if k < 0:
        raise ValueError(f"vocalgrad_fewshot_k must be >= 0, got {k}")
    codes: dict[str, int] = {}
    pool_sources = np.array([codes.setdefault(str(s), len(codes)) for s in pool_sources], dtype=np.int64)
    by_label: dict[str, np.ndarray] = {}
    for lab in sorted(set(pool_labels)):
        by_label[lab] = np.flatnonzero(np.asarray(pool_labels, dtype=object) == lab)
    labels = list(by_label)
    out = []
    for qid, qsrc in zip(query_ids, query_sources):
        h = hashlib.sha256(f"{seed}\x00{qid}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(h[:8], "big"))
        quota = {lab: k // len(labels) for lab in labels} if labels else {}
        for lab in rng.permutation(labels)[: k - sum(quota.values())] if labels else []:
            quota[str(lab)] += 1
        picked: list[int] = []
        for lab in labels:
            allowed = by_label[lab][pool_sources[by_label[lab]] != codes.get(str(qsrc), -1)]
            if len(allowed) < quota[lab]:
                raise ValueError(
                    f"few-shot pool has {len(allowed)} {lab!r} example(s) from sources other than "
                    f"{qsrc!r} (query {qid}), {quota[lab]} needed; lower vocalgrad_fewshot_k or "
                    f"build the {FEWSHOT_CONFIG!r} config from more sources")
            picked += [int(allowed[j]) for j in rng.choice(len(allowed), size=quota[lab], replace=False)]
        if len(picked) < k:
            raise ValueError(f"few-shot pool is empty for query {qid}; build the {FEWSHOT_CONFIG!r} config")
        out.append([picked[j] for j in rng.permutation(len(picked))])
    return out


def attach_fewshot(ds, category: str, *, k: Any = DEFAULT_FEWSHOT_K, seed: Any = 1234,
                   source: str | None = None):
    """Add ``fewshot_ids``, ``fewshot_labels`` and ``fewshot_refs`` (audio references into the
    ``train`` config of the same category) to every row; see :func:`choose_fewshot`."""
    pool = load_split(FEWSHOT_CONFIG, split="train", source=source, category=category)
    rows = choose_fewshot(ds["id"], ds["source_id"], pool["label"], pool["source_id"],
                          k=int(k), seed=int(seed))
    key = "fewshot:" + (getattr(pool, "_fingerprint", None) or f"ds{id(pool)}")
    AUDIO_STORES.setdefault(key, pool.select_columns(["audio"]))
    ids, labels = pool["id"], pool["label"]
    ds = ds.add_column("fewshot_ids", [[ids[i] for i in r] for r in rows])
    ds = ds.add_column("fewshot_labels", [[labels[i] for i in r] for r in rows])
    return ds.add_column("fewshot_refs", [[f"{key}#{i}" for i in r] for r in rows])


def doc_to_text_fewshot(doc: Mapping[str, Any]) -> str:
    """The authors' few-shot layout: a lead-in, each example's audio and label, the query audio,
    then the ``audioref`` question, with one :data:`AUDIO_MARKER` where the adapters put each clip
    (:data:`harness_tasks.prompts.FEWSHOT_TEXT`). Without examples: the plain default prompt."""
    labels = doc.get("fewshot_labels") or []
    if not labels:
        return prompts.build_prompt(doc["category"]) + "\n" + AUDIO_MARKER
    t = prompts.FEWSHOT_TEXT
    attribute = vocalgrad.category(doc["category"]).attribute
    parts = [t["intro"].format(k=len(labels), attribute=attribute), ""]
    for n, label in enumerate(labels, 1):
        parts += [t["example"].format(n=n), AUDIO_MARKER, t["label"].format(n=n, label=label), ""]
    parts += [t["query"], AUDIO_MARKER, t["question"], prompts.build_prompt(doc["category"], prompts.FEWSHOT_PROMPT)]
    return "\n".join(parts)


def doc_to_audio_fewshot(doc: Mapping[str, Any]) -> list[ClipAudio]:
    """The doc's example clips (in prompt order), then its own clip."""
    clips = []
    for cid, ref in zip(doc.get("fewshot_ids") or [], doc.get("fewshot_refs") or []):
        key, _, row = str(ref).rpartition("#")
        if key not in AUDIO_STORES:
            raise KeyError(f"no audio for few-shot example {cid!r}: its store {key!r} was not loaded in this process")
        clips.append(ClipAudio(cid, AUDIO_STORES[key], int(row)))
    return clips + doc_to_audio(doc)
