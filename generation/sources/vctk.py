"""``vctk:PATH``: the VCTK corpus, layout 0.80 (``wav48/pNNN/pNNN_MMM.wav``) or 0.92
(``wav48_silence_trimmed/pNNN/pNNN_MMM_mic1.flac``), with ``speaker-info.txt`` and ``txt/``.

By default the paper's frozen selection (:mod:`generation.frozen`); ``selection="sample"`` draws a new
one with the seeded selector (:func:`generation.sources.selection.select_sources`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from .selection import select_sources
from .base import SourceItem, SourceOptions, SourceSpecError, normalise_gender, register_source

__all__ = ["VCTK_LAYOUTS", "looks_like_vctk", "read_speaker_info", "vctk_candidates", "vctk_root"]


#: Audio folder of each VCTK layout.
VCTK_LAYOUTS = {"0.92": "wav48_silence_trimmed", "0.80": "wav48"}


def vctk_root(path: Path) -> tuple[Path, str]:
    """Find the VCTK root at ``path`` (or in its only sub-folder) and its layout, "0.80" or "0.92"."""
    tried = [path]
    subdirs = sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []
    if len(subdirs) == 1:
        tried.append(subdirs[0])
    for root in tried:
        for layout, audio_dir in VCTK_LAYOUTS.items():
            if (root / audio_dir).is_dir():
                return root, layout
    found = ", ".join(p.name for p in sorted(path.iterdir())[:12]) if path.is_dir() else "not a folder"
    raise SourceSpecError(
        f"vctk source: {path} is not a VCTK corpus: expected wav48/ (VCTK 0.80) or wav48_silence_trimmed/ "
        f"(VCTK 0.92) with speaker-info.txt and txt/; found: {found or 'an empty folder'}"
    )


def read_speaker_info(path: Path) -> dict[str, dict[str, str]]:
    """Parse VCTK's ``speaker-info.txt`` (both layouts) into speaker -> {age, gender, accent, region}.

    Speaker ids are normalised to ``pNNN`` (0.80 lists bare numbers).
    """
    if not path.is_file():
        raise SourceSpecError(f"vctk source: {path} is missing (it gives each speaker's gender and accent)")
    info = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[0].upper() == "ID":
            continue
        spk = parts[0] if not parts[0].isdigit() else f"p{parts[0]}"
        info[spk] = {
            "age": parts[1],
            "gender": normalise_gender(parts[2]),
            "accent": parts[3] if len(parts) > 3 and not parts[3].startswith("(") else "",
            "region": " ".join(p for p in parts[4:] if p) if len(parts) > 4 else "",
        }
    if not info:
        raise SourceSpecError(f"vctk source: {path} lists no speakers (expected lines 'ID AGE GENDER ACCENTS ...')")
    return info


_VCTK_FILE = {
    "0.80": re.compile(r"^(?P<utt>(?P<spk>[a-z]+\d+)_\d+)\.wav$"),
    "0.92": re.compile(r"^(?P<utt>(?P<spk>[a-z]+\d+)_\d+)_mic(?P<mic>[12])\.flac$"),
}


def vctk_candidates(path: Path, *, mic: int = 1) -> list[SourceItem]:
    """Every VCTK utterance (with the chosen microphone for 0.92), before selection.

    Items have ``source_id`` = ``sentence_id`` = the utterance id (``p226_106``) and ``extra`` with
    the layout, microphone, speaker age and region. A missing transcript gives an empty ``text``.
    """
    if mic not in (1, 2):
        raise SourceSpecError(f"vctk source: --vctk-mic must be 1 or 2, got {mic!r}")
    root, layout = vctk_root(path)
    info = read_speaker_info(root / "speaker-info.txt")
    txt_dir = root / "txt"
    if not txt_dir.is_dir():
        raise SourceSpecError(f"vctk source: {txt_dir} is missing (it holds the transcripts)")
    pattern = _VCTK_FILE[layout]
    audio_dir = root / VCTK_LAYOUTS[layout]
    items = []
    for spk_dir in sorted(p for p in audio_dir.iterdir() if p.is_dir()):
        for f in sorted(spk_dir.iterdir()):
            m = pattern.match(f.name)
            if not m or (layout == "0.92" and int(m["mic"]) != mic):
                continue
            utt, spk = m["utt"], m["spk"]
            meta = info.get(spk, {})
            txt = txt_dir / spk / f"{utt}.txt"
            text = txt.read_text(encoding="utf-8", errors="replace").strip() if txt.is_file() else ""
            extra = {"vctk_layout": layout, "vctk_mic": mic if layout == "0.92" else "",
                     "age": meta.get("age", ""), "region": meta.get("region", "")}
            items.append(SourceItem(utt, str(f), speaker_id=spk, sentence_id=utt, text=text,
                                    gender=meta.get("gender", ""), accent=meta.get("accent", ""), extra=extra))
    if not items:
        suffix = "pNNN/pNNN_MMM.wav" if layout == "0.80" else f"pNNN/pNNN_MMM_mic{mic}.flac"
        raise SourceSpecError(f"vctk source: no audio files named {suffix} under {audio_dir}")
    return items


def looks_like_vctk(path: Path) -> bool:
    """Whether ``path`` is a VCTK corpus (as :func:`vctk_root` finds one)."""
    try:
        vctk_root(path)
        return True
    except (SourceSpecError, OSError):
        return False


@register_source("vctk", recognises=looks_like_vctk)
def _vctk(arg: str, options: SourceOptions) -> list[SourceItem]:
    """VCTK 0.80 or 0.92: the paper's frozen selection, or the seeded selector with ``selection="sample"``."""
    if not arg:
        raise SourceSpecError("vctk source: give the corpus folder, e.g. --source vctk:/data/VCTK-Corpus")
    path = Path(arg).expanduser()
    where = f"vctk:{path}"
    mode = options.selection or "frozen"
    candidates = vctk_candidates(path, mic=options.vctk_mic)
    if mode == "sample":
        items = [replace(it, extra={**it.extra, "selection": "sample", "selection_seed": options.seed})
                 for it in select_sources(candidates, options, where)]
    elif mode == "frozen":
        _refuse_sampler_options(options, where)
        items = _vctk_frozen(candidates, options, path, where)
    else:
        raise SourceSpecError(f"{where}: unknown selection {mode!r}; use frozen (the paper's) or sample")
    # benchmark.md §4a: the reference seeds the noise of a test clip with the VCTK utterance id (p226_106)
    return [replace(it, extra={**it.extra, "reference_clip_id": it.extra.get("corpus_id", it.source_id)})
            for it in items]


def _refuse_sampler_options(options: SourceOptions, where: str) -> None:
    given = options.sampler_options()
    if given:
        raise SourceSpecError(
            f"{where}: {', '.join(given)} shape the seeded selector, but the frozen selection (the paper's "
            f"test 100 / train 500) is fixed; add --selection sample for a new dataset instance, or drop them")


def _vctk_frozen(candidates: list[SourceItem], options: SourceOptions, path: Path, where: str) -> list[SourceItem]:
    """The frozen test/train utterances of the corpus, renamed to their item ids."""
    from ..frozen import frozen_rows
    from .selection import SelectionError

    if options.split not in ("test", "train"):
        raise SourceSpecError(f"{where}: split {options.split!r} has no VCTK selection "
                              "(the beep split uses --source tones)")
    rows = frozen_rows("vctk", options.split)
    by_id = {it.source_id: it for it in candidates}
    missing = [r.corpus_id for r in rows if r.corpus_id not in by_id]
    if missing:
        root, layout = vctk_root(path)
        raise SelectionError(_missing_message(missing, len(rows), options, root, layout, where))
    layout = candidates[0].extra["vctk_layout"]
    items = []
    for r in rows:
        it = by_id[r.corpus_id]
        extra = {**it.extra, "corpus_id": r.corpus_id}
        if layout == "0.80":  # the recorded bounds belong to 0.80's untrimmed files
            extra.update(selection="frozen", recorded_onset_sec=r.onset_sec, recorded_offset_sec=r.offset_sec)
        else:
            extra.update(selection="frozen-redetected")
        items.append(replace(it, source_id=r.item_id, sentence_id=r.corpus_id, text=r.text or it.text,
                             extra=extra))
    # utterance number then speaker, so that the first N items cover N speakers (as the selector orders)
    items.sort(key=lambda it: (it.source_id.rsplit("_", 1)[1], it.speaker_id))
    return items


def _missing_message(missing: list[str], total: int, options: SourceOptions, root: Path, layout: str,
                     where: str) -> str:
    """Which frozen utterances the corpus lacks, and where they would be."""
    hints = []
    if layout == "0.92":
        other = 2 if options.vctk_mic == 1 else 1
        audio_dir = root / VCTK_LAYOUTS["0.92"]
        found = [u for u in missing if (audio_dir / u.split("_")[0] / f"{u}_mic{other}.flac").is_file()]
        if found:
            hints.append(f"{len(found)} of them exist as _mic{other}.flac: use --vctk-mic {other}")
    absent = sorted({u.split("_")[0] for u in missing if not (root / VCTK_LAYOUTS[layout] / u.split("_")[0]).is_dir()})
    if absent:
        hints.append(f"speaker folders absent: {', '.join(absent[:12])}{' ...' if len(absent) > 12 else ''}")
    shown = ", ".join(missing[:20]) + (f" ... (+{len(missing) - 20})" if len(missing) > 20 else "")
    return (
        f"{where}: the frozen {options.split} selection needs {total} VCTK utterances; {len(missing)} are missing "
        f"from this VCTK {layout} tree: {shown}. "
        + (" ".join(h + "." for h in hints) + " " if hints else "")
        + "They are in VCTK 0.80 (wav48/pNNN/pNNN_MMM.wav, the release the paper used, whose recorded speech "
        "bounds apply) and, under the same ids, in VCTK 0.92 (wav48_silence_trimmed/pNNN/pNNN_MMM_mic1.flac and "
        "_mic2.flac). Use a complete corpus, or --selection sample for a new dataset instance drawn from what "
        "this tree has."
    )
