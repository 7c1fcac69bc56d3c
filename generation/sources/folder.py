"""``folder:PATH``: audio files under a folder (wav, flac, ogg, mp3), described by an optional
``metadata.csv``; used as they are (no selection).
"""

from __future__ import annotations

import csv
from pathlib import Path

from .base import (AUDIO_EXTENSIONS, SourceItem, SourceOptions, SourceSpecError, normalise_gender, register_source,
                   safe_id)

__all__ = ["FOLDER_COLUMNS", "folder_candidates"]


#: Columns understood in a folder's ``metadata.csv`` (only ``file_name`` is required).
FOLDER_COLUMNS = ("file_name", "speaker_id", "gender", "accent", "text", "sentence_id", "source_id")


def folder_candidates(root: Path) -> list[SourceItem]:
    """Every utterance of a folder source.

    Without ``metadata.csv`` every audio file is an utterance; its id is the relative path with
    separators as ``-`` and its speaker is the first sub-folder (none for files at the top).
    With ``metadata.csv`` (columns :data:`FOLDER_COLUMNS`, ``file_name`` relative to the folder)
    exactly the listed files are used.
    """
    meta = root / "metadata.csv"
    if not meta.is_file():
        files = sorted(p for p in root.rglob("*") if p.suffix.lower() in AUDIO_EXTENSIONS and p.is_file())
        if not files:
            raise SourceSpecError(f"folder source: no audio files ({', '.join(AUDIO_EXTENSIONS)}) under {root}")
        items = []
        for p in files:
            rel = p.relative_to(root).with_suffix("")
            sid = safe_id("-".join(rel.parts))
            items.append(SourceItem(sid, str(p), speaker_id=safe_id(rel.parts[0]) if len(rel.parts) > 1 else "",
                                    sentence_id=sid))
        return items

    with open(meta, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in (reader.fieldnames or [])]
        if "file_name" not in header:
            raise SourceSpecError(f"{meta}: needs a 'file_name' column (found: {', '.join(header) or 'no header'})")
        rows = [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in reader]
    if not rows:
        raise SourceSpecError(f"{meta}: no rows")
    items = []
    for line, row in enumerate(rows, start=2):
        rel = row["file_name"]
        path = root / rel
        if not rel or not path.is_file():
            raise SourceSpecError(f"{meta}, line {line}: audio file {rel!r} not found under {root}")
        sid = row.get("source_id") or "-".join(Path(rel).with_suffix("").parts)
        speaker = safe_id(row["speaker_id"]) if row.get("speaker_id") else ""
        items.append(SourceItem(safe_id(sid), str(path), speaker_id=speaker,
                                sentence_id=row.get("sentence_id", ""), text=row.get("text", ""),
                                gender=normalise_gender(row.get("gender")), accent=row.get("accent", ""),
                                extra={"file_name": rel}))
    return items


@register_source("folder")
def _folder(arg: str, options: SourceOptions) -> list[SourceItem]:
    """Audio files under a folder, used as they are: the folder is the selection.

    Every file (or every file listed in ``metadata.csv``, in its order) is a source, for whichever
    split is rendered; no benchmark.md §6 selection is drawn, and files that cannot be decoded are left to the
    render, which skips them with the reason. To draw a balanced selection from a folder corpus, read it
    as ``hf:PATH`` (datasets' audiofolder reads the same ``metadata.csv``).
    """
    root = Path(arg).expanduser()
    if not arg or not root.is_dir():
        raise SourceSpecError(f"folder source: {root} is not a folder (use --source folder:PATH)")
    return folder_candidates(root)
