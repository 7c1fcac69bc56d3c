"""The label-free tracking check (analysis.probe.tracking): planned change, half medians, summaries,
and a real tracker (FCPE's packaged weights) telling a shift from a voice's own intonation."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
import soundfile as sf

from analysis.probe.tracking import half_change, main, planned_half_change, summarise, track_render
from tests._hub_helpers import write_manifest


@pytest.mark.parametrize("traj, share", [("linear", 0.5), ("quad_first_flat", 0.5), ("quad_last_flat", 0.5),
                                         ("jump", 1.0)])
def test_planned_half_change_of_each_trajectory(traj, share):
    assert planned_half_change(-3.0, 3.0, traj) == pytest.approx(6.0 * share, abs=2e-3)
    assert planned_half_change(2.0, -2.0, traj) == pytest.approx(-4.0 * share, abs=2e-3)   # a decrease
    assert planned_half_change(1.0, 1.0, traj) == 0.0


def test_half_change_keeps_the_span_and_voiced_frames_only():
    rate = 10.0                                                   # frame i at i / 10 s
    f = np.full(20, np.nan)
    f[2:10] = np.log2(100.0)                                      # early half of the span 0.2..1.7 s
    f[10:18] = np.log2(200.0)                                     # late half: an octave up
    f[0:2] = f[18:] = np.log2(1000.0)                             # outside the span: left out
    change, voiced = half_change(f, rate, 0.2, 1.7)
    assert change == pytest.approx(12.0) and voiced == 1.0
    f[5] = np.nan                                                 # one unvoiced frame
    assert half_change(f, rate, 0.2, 1.7) == (pytest.approx(12.0), pytest.approx(15 / 16))
    # the span's end is inclusive: frame 18 (1.8 s) joins the late half at offset 1.8, not at 1.79
    assert half_change(f, rate, 0.2, 1.8)[0] == pytest.approx(12.0 * np.median([1, 1, 1, 1, 1, 1, 1, 1, np.log2(5)]))
    assert half_change(f, rate, 0.2, 1.79)[0] == pytest.approx(12.0)
    # an even split: 100, 200 | 200, 200 is half an octave (the halves share no frame)
    assert half_change(np.log2([100.0, 200.0, 200.0, 200.0]), 1.0, 0.0, 3.0)[0] == pytest.approx(6.0)
    g = f.copy()
    g[10:18] = np.nan                                             # a half without a voiced frame
    change, voiced = half_change(g, rate, 0.2, 1.7)
    assert math.isnan(change) and voiced == pytest.approx(7 / 16)
    assert half_change(f, rate, 5.0, 6.0) == (pytest.approx(math.nan, nan_ok=True), 0.0)   # empty span


def test_summarise_counts_a_lost_voice_as_not_following():
    rows = [{"tracker": "t", "speaker": "a", "label": "increase", "clip": 2.0, "source": -1.0, "planned": 3.0,
             "voiced": 0.5, "source_voiced": 0.7},
            {"tracker": "t", "speaker": "a", "label": "decrease", "clip": -4.0, "source": -1.0, "planned": -3.0,
             "voiced": 0.5, "source_voiced": 0.7},
            {"tracker": "t", "speaker": "a", "label": "increase", "clip": math.nan, "source": -1.0, "planned": 3.0,
             "voiced": 0.0, "source_voiced": 0.7},
            {"tracker": "t", "speaker": "b", "label": "increase", "clip": -0.5, "source": -1.0, "planned": 0.5,
             "voiced": 0.5, "source_voiced": 0.7}]
    a, b = summarise(rows)
    assert (a["speaker"], a["n"], b["n"]) == ("a", 3, 1)
    assert a["follows"] == pytest.approx(2 / 3) and a["reads_label"] == pytest.approx(2 / 3)
    assert a["slope"] == pytest.approx(1.0) and a["source"] == pytest.approx(-1.0)
    assert b["follows"] == 1.0 and b["reads_label"] == 0.0        # follows the shift; intonation hides the label
    assert math.isnan(b["slope"])                                 # one clip: no slope


SR = 16000


def _voice(semitones, seconds=2.0):
    """A 150-Hz harmonic voice in 200-ms bursts whose pitch follows ``semitones(t)`` (t in 0..1)."""
    t = np.arange(int(seconds * SR)) / SR
    f0 = 150.0 * 2.0 ** (semitones(t / seconds) / 12.0)
    phase = 2 * np.pi * np.cumsum(f0) / SR
    y = sum(np.sin(k * phase) / k for k in range(1, 11)) * ((t % 0.3) < 0.2)
    return (0.2 * y / np.abs(y).max()).astype(np.float32)


def _row(**kw):
    row = {"split": "test", "category": "pitch", "attribute": "voice pitch", "tier": "high",
           "trajectory": "linear", "source_id": "v01", "speaker_id": "v", "sentence_id": "s", "gender": "",
           "accent": "", "text": "", "sample_rate": SR, "duration_sec": 2.0, "onset_sec": 0.0, "offset_sec": 2.0,
           "source_onset_sec": 0.0, "source_offset_sec": 2.0, "speech_found": True, "value_start": -3.0,
           "value_end": 3.0, "value_unit": "semitones", "clipped_ratio": 0.0, "sha256": "0" * 64,
           "recipe": "faithful-v1", "clip_id": "up", "path": "clips/pitch/up.flac", "direction": "increase"}
    return {**row, **kw}


def test_a_real_tracker_separates_the_shift_from_the_voice_s_intonation(tmp_path, capsys):
    """FCPE on a falling voice (-2 semitones over the span: -1 between the halves), shifted by a planned
    linear -3 -> +3 (+3 between the halves): the clip alone rises 2, clip minus source 3; a silent clip
    (the voice lost) is NaN and does not follow."""
    (tmp_path / "sources").mkdir()
    (tmp_path / "clips" / "pitch").mkdir(parents=True)
    sf.write(tmp_path / "sources" / "v01.flac", _voice(lambda t: -2.0 * t), SR)
    sf.write(tmp_path / "clips" / "pitch" / "up.flac", _voice(lambda t: -2.0 * t - 3.0 + 6.0 * t), SR)
    sf.write(tmp_path / "clips" / "pitch" / "lost.flac", np.zeros(2 * SR, np.float32), SR)   # silence
    write_manifest(tmp_path, [_row(), _row(clip_id="lost", path="clips/pitch/lost.flac")])
    rows = {r["clip_id"]: r for r in track_render(tmp_path, "fcpe", progress=False)}
    up = rows["up"]
    assert up["source"] == pytest.approx(-1.0, abs=0.25)
    assert up["clip"] == pytest.approx(2.0, abs=0.25)
    assert up["clip"] - up["source"] == pytest.approx(up["planned"], abs=0.3) and up["planned"] == pytest.approx(3.0)
    assert up["voiced"] > 0.5 and up["source_voiced"] > 0.5
    assert 1200 * abs(np.log2(up["source_hz"] / (150.0 * 2 ** (-1 / 12)))) < 50    # the voice's median: -1 st
    assert math.isnan(rows["lost"]["clip"]) and rows["lost"]["voiced"] == 0.0
    (s,) = summarise(list(rows.values()))
    assert s["follows"] == 0.5 and s["reads_label"] == 0.5 and s["source_hz"] == up["source_hz"]
    # python -m analysis.probe.tracking: the tables and every row in a CSV, written whole
    out = tmp_path / "rows.csv"
    assert main([str(tmp_path), "--trackers", "fcpe", "--csv", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("fcpe: 2 pitch clips of ") and " high " in text and " v " in text
    lines = [line.split() for line in text.splitlines() if line.strip().startswith("all ")]
    assert [w[:2] for w in lines] == [["all", "n"], ["all", "2"]] and lines[1][2] == "0.500"      # header, then the row
    with open(out) as fh:
        assert sorted(r["clip_id"] for r in csv.DictReader(fh)) == ["lost", "up"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("rows")) == ["rows.csv"]


def test_track_render_refuses_a_tracker_without_a_decoded_f0_layer_and_a_missing_source(tmp_path, capsys):
    with pytest.raises(ValueError, match="not a pitch tracker"):
        track_render(tmp_path, "resemblyzer", progress=False)
    (tmp_path / "clips" / "pitch").mkdir(parents=True)
    sf.write(tmp_path / "clips" / "pitch" / "up.flac", _voice(lambda t: 0 * t), SR)
    write_manifest(tmp_path, [_row()])
    with pytest.raises(FileNotFoundError, match=r"sources/v01.flac: source of clip up is missing"):
        track_render(tmp_path, "fcpe", progress=False)
    write_manifest(tmp_path, [_row(category="volume")])
    with pytest.raises(ValueError, match="no pitch clips"):
        track_render(tmp_path, "fcpe", progress=False)
    # the command: one line naming what is wrong, exit status 2
    assert main([str(tmp_path), "--trackers", "fcpe"]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path}: no pitch clips in its manifest\n"
    assert main([str(tmp_path / "absent"), "--trackers", "fcpe"]) == 2
    assert "manifest" in capsys.readouterr().err
