"""``loquacious[:DATASET[:CONFIG][:SPLIT]]``: LoquaciousSet, an alternate source domain of the paper (its Table 15).

``speechbrain/LoquaciousSet``, config ``clean``, split ``test``: the shared official test partition ("clean"
is the config name, not an acoustic label). ``DATASET`` may be a local copy (a ``save_to_disk`` folder or files
``load_dataset`` reads). The 100 frozen rows are taken by their recorded row index and checked against the
recorded id (column ``ID``); a changed upstream dataset is an error naming the rows, never a silent substitute.
The recorded speech bounds are used (no re-detection; the render still reports disagreements in
``span_check.csv``). Item ids are the authors' (``loquaciousset_test_0001``).
"""

from __future__ import annotations

from pathlib import Path

from .base import (SourceItem, SourceOptions, SourceSpecError, frozen_extra, normalise_gender, register_source,
                   require_frozen_test, safe_id)
from .hf import HFAudio, audio_column, open_hf, parse_hf_spec

__all__ = ["LOQUACIOUS_DATASET", "loquacious_items"]


#: Hub id, config and split of the LoquaciousSet partition the paper used.
LOQUACIOUS_DATASET = ("speechbrain/LoquaciousSet", "clean", "test")


def _text(value) -> str:
    return str(value or "").strip()


def loquacious_items(arg: str, options: SourceOptions) -> list[SourceItem]:
    """The 100 frozen LoquaciousSet test sources, by recorded row index with an id check."""
    from ..frozen import frozen_rows

    where = f"loquacious:{arg}" if arg else "loquacious"
    require_frozen_test(options, where)
    if arg:
        dataset, config, split = parse_hf_spec(arg)
    else:
        dataset, config, split = LOQUACIOUS_DATASET
    if config is None and not Path(dataset).exists():
        config = LOQUACIOUS_DATASET[1]
    ds, split = open_hf(dataset, config, split or LOQUACIOUS_DATASET[2])
    if "ID" not in ds.column_names:
        raise SourceSpecError(f"{where}: no 'ID' column to check the recorded rows against "
                              f"(columns: {', '.join(ds.column_names)}); is this LoquaciousSet?")
    audio_col = audio_column(ds, where)
    rows = frozen_rows("loquacious", "test")
    index = [int(r.extra["source_row_index"]) for r in rows]
    too_far = [r.item_id for r, i in zip(rows, index) if i >= len(ds)]
    if too_far:
        raise SourceSpecError(f"{where}: {len(ds)} rows, but the frozen selection records row indices up to "
                              f"{max(index)} ({len(too_far)} items beyond the end); use the clean test partition")
    meta = ds.select_columns([c for c in ds.column_names if c != audio_col]).select(index).to_list()
    wrong = [f"{r.item_id} (row {i}: expected {r.corpus_id!r}, found {m['ID']!r})"
             for r, i, m in zip(rows, index, meta) if str(m["ID"]) != r.corpus_id]
    if wrong:
        raise SourceSpecError(
            f"{where}: {len(wrong)} recorded rows hold another clip than the frozen selection, so the upstream "
            f"dataset changed; resolve the frozen clip ids rather than substituting: " + "; ".join(wrong[:5]))
    text_col = next((c for c in ("text", "wrd", "transcription", "sentence") if c in ds.column_names), None)
    spk_col = next((c for c in ("speaker_id", "spk_id", "speaker", "client_id") if c in ds.column_names), None)
    items = []
    for r, i, m in zip(rows, index, meta):
        spk = _text(m.get(spk_col)) if spk_col else ""
        items.append(SourceItem(
            r.item_id, HFAudio(dataset, config, split or None, audio_col, i),
            speaker_id=safe_id(spk) if spk else "", sentence_id=safe_id(r.corpus_id),
            text=_text(m.get(text_col)) if text_col else "", gender=normalise_gender(r.extra.get("gender")),
            extra={**frozen_extra(r, "loquacious"), "hf_row": i}))
    return items


@register_source("loquacious")
def _loquacious(arg: str, options: SourceOptions) -> list[SourceItem]:
    """LoquaciousSet's clean test partition with the paper's frozen 100 rows."""
    return loquacious_items(arg, options)
