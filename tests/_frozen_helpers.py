"""A fake VCTK tree holding every frozen test and train utterance (both layouts), built on the fly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from generation.frozen import frozen_rows, vctk_test_speakers

FULL_SR = 48000


def speech_like(duration: float, onset: float, offset: float, sr: int = FULL_SR, f0: float = 180.0) -> np.ndarray:
    """Silence, then a harmonic tone over ``[onset, offset)`` seconds, then silence."""
    n = int(round(duration * sr))
    y = np.zeros(n, dtype=np.float32)
    a, b = int(round(onset * sr)), min(n, int(round(offset * sr)))
    t = np.arange(b - a) / sr
    y[a:b] = 0.1 * sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 5))
    return y


def make_frozen_vctk(root: Path, layout: str, *, full: dict[str, tuple[float, float, float]] | None = None,
                     mics=(1, 2), skip: tuple[str, ...] = ()) -> Path:
    """Write every frozen VCTK utterance as a file of ``layout`` ("0.80" or "0.92").

    Utterances named in ``full`` (id -> (duration, onset, offset) in seconds) get audible content at
    48 kHz; the others are 0.6 s of a quiet tone at 8 kHz (listed by the reader, never rendered).
    Ids in ``skip`` are left out.
    """
    full = full or {}
    speakers = vctk_test_speakers()
    utts = [r.corpus_id for r in frozen_rows("vctk", "test") + frozen_rows("vctk", "train")]
    audio_dir = root / ("wav48" if layout == "0.80" else "wav48_silence_trimmed")
    spk_ids = sorted({u.split("_")[0] for u in utts})
    lines = ["ID  AGE  GENDER  ACCENTS  REGION"]
    for i, spk in enumerate(spk_ids):
        meta = speakers.get(spk, {"age": "23", "gender": "FM"[i % 2], "accent_raw": "English"})
        sid = spk[1:] if layout == "0.80" else spk
        lines.append(f"{sid}  {meta['age']}  {meta['gender']}    {meta['accent_raw']}  Somewhere")
    (root / "speaker-info.txt").parent.mkdir(parents=True, exist_ok=True)
    (root / "speaker-info.txt").write_text("\n".join(lines) + "\n")
    quiet = (0.01 * np.sin(2 * np.pi * 200 * np.arange(4800) / 8000)).astype(np.float32)
    for utt in utts:
        if utt in skip:
            continue
        spk = utt.split("_")[0]
        (root / "txt" / spk).mkdir(parents=True, exist_ok=True)
        (audio_dir / spk).mkdir(parents=True, exist_ok=True)
        (root / "txt" / spk / f"{utt}.txt").write_text(f"Corpus transcript of {utt}.\n")
        y, sr = (speech_like(*full[utt]), FULL_SR) if utt in full else (quiet, 8000)
        if layout == "0.80":
            sf.write(audio_dir / spk / f"{utt}.wav", y, sr, subtype="PCM_16")
        else:
            for mic in mics:
                sf.write(audio_dir / spk / f"{utt}_mic{mic}.flac", y, sr, subtype="PCM_16")
    return root
