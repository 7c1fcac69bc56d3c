"""Fixtures for the source and selection tests: tiny fake corpora built on the fly."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import soundfile as sf

from generation.sources import SourceItem

SR = 8000

#: (speaker, gender, accent) of the fake VCTK speakers: 4 F and 4 M over 3 accents.
SPEAKERS = (
    ("p225", "F", "English"), ("p226", "M", "English"), ("p227", "M", "Scottish"), ("p228", "F", "Scottish"),
    ("p229", "F", "American"), ("p230", "M", "American"), ("p231", "F", "English"), ("p232", "M", "Irish"),
)

#: Utterance number -> duration (s). Utterance 1 is the shared "elicitation" sentence; 4 is too short.
DURATIONS = {1: 3.3, 2: 3.6, 3: 4.0, 4: 1.5}


def tone(duration: float, f0: float = 220.0, sr: int = SR) -> np.ndarray:
    """A quiet tone of ``duration`` seconds with 0.3 s of silence on each side."""
    n = int(round(duration * sr))
    y = np.zeros(n, dtype=np.float32)
    a, b = int(0.3 * sr), n - int(0.3 * sr)
    y[a:b] = 0.2 * np.sin(2 * np.pi * f0 * np.arange(b - a) / sr)
    return y


def transcript(spk: str, k: int) -> str:
    """Utterance 1 is read by every speaker (as in VCTK); the others are unique."""
    return "Please call Stella." if k == 1 else f"Sentence {k} read by speaker {spk}."


def make_vctk(root: Path, layout: str, *, speakers=SPEAKERS, durations=DURATIONS, mics=(1, 2),
              nested: bool = False) -> Path:
    """Write a fake VCTK corpus of ``layout`` ("0.80" or "0.92"); returns the folder to pass to ``vctk:``."""
    base = root / "VCTK-Corpus" if nested else root
    audio_dir = base / ("wav48" if layout == "0.80" else "wav48_silence_trimmed")
    lines = ["ID  AGE  GENDER  ACCENTS  REGION"] if layout == "0.80" else ["ID  AGE  GENDER  ACCENTS  REGION COMMENTS "]
    for i, (spk, gender, accent) in enumerate(speakers):
        sid = spk[1:] if layout == "0.80" else spk
        lines.append(f"{sid}  {23 + i}  {gender}    {accent}  Some Region")
        (base / "txt" / spk).mkdir(parents=True, exist_ok=True)
        (audio_dir / spk).mkdir(parents=True, exist_ok=True)
        for k, dur in durations.items():
            utt = f"{spk}_{k:03d}"
            (base / "txt" / spk / f"{utt}.txt").write_text(transcript(spk, k) + "\n")
            y = tone(dur, f0=150 + 10 * i + k)
            if layout == "0.80":
                sf.write(audio_dir / spk / f"{utt}.wav", y, SR, subtype="PCM_16")
            else:
                for mic in mics:
                    sf.write(audio_dir / spk / f"{utt}_mic{mic}.flac", y * (0.5 if mic == 2 else 1.0), SR,
                             subtype="PCM_16")
    (base / "speaker-info.txt").write_text("\n".join(lines) + "\n")
    return root


def make_folder(root: Path, *, with_metadata: bool = True) -> Path:
    """A folder of 8 speakers x 3 utterances (flac and wav) with an optional metadata.csv."""
    rows = []
    for i, (spk, gender, accent) in enumerate(SPEAKERS):
        for k in (1, 2, 3):
            rel = f"{spk}/utt{k}.{'flac' if k % 2 else 'wav'}"
            (root / spk).mkdir(parents=True, exist_ok=True)
            sf.write(root / rel, tone(DURATIONS[k], f0=200 + i), SR, subtype="PCM_16")
            rows.append({"file_name": rel, "speaker_id": spk, "gender": "female" if gender == "F" else "male",
                         "accent": accent, "text": transcript(spk, k)})
    if with_metadata:
        with open(root / "metadata.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return root


def fake_items(n_per_group: dict[tuple[str, str], int], *, utts: int = 3, short: tuple[int, ...] = ()):
    """In-memory candidates: speakers per (gender, accent) with ``utts`` utterances each.

    Returns the items and their durations (utterance numbers in ``short`` last 2 s, others 4 s).
    """
    items, durations = [], {}
    n = 0
    for (gender, accent), count in sorted(n_per_group.items()):
        for _ in range(count):
            n += 1
            spk = f"s{n:03d}"
            for k in range(1, utts + 1):
                sid = f"{spk}_{k:03d}"
                text = "shared sentence" if k == 1 else f"text {sid}"
                items.append(SourceItem(sid, f"/nowhere/{sid}.wav", speaker_id=spk, sentence_id=sid,
                                        text=text, gender=gender, accent=accent))
                durations[sid] = 2.0 if k in short else 4.0
    return items, durations


def speech_like(seconds: float = 1.0, pad: float = 0.25, sr: int = 48000) -> np.ndarray:
    """A voiced, amplitude-modulated harmonic tone with silent padding: speech enough for span detection."""
    t = np.arange(int(seconds * sr)) / sr
    y = sum(np.sin(2 * np.pi * k * 180.0 * t) / k for k in range(1, 6))
    y = 0.3 * y / np.max(np.abs(y)) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))
    z = np.zeros(int(pad * sr))
    return np.concatenate([z, y, z]).astype(np.float32)
