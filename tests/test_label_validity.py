"""Label validity (measured effect + warnings per clip) and rendering from the stored 16-bit source."""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest
import soundfile as sf

from generation import label_validity as lv
from generation.render import render


def speech_like(sr: int, seconds: float = 2.4, seed: int = 0) -> np.ndarray:
    """Harmonic voice with a syllable envelope, bright fricative bursts (up to sr/2), quiet padding."""
    rng = np.random.default_rng(seed)
    n = int(seconds * sr)
    t = np.arange(n) / sr
    f0 = 140 + 20 * np.sin(2 * np.pi * 1.1 * t)
    ph = 2 * np.pi * np.cumsum(f0) / sr
    voiced = sum(np.sin(k * ph) / k ** 0.8 for k in range(1, 150) if k * 170 < sr / 2)
    syll = 0.55 + 0.45 * np.sin(2 * np.pi * 3.0 * t)
    fric = np.diff(np.concatenate([[0.0], rng.standard_normal(n)])) * (np.mod(t * 1.5, 1.0) < 0.15)
    y = 0.04 * voiced * syll + 0.02 * fric + 0.002 * rng.standard_normal(n)   # breath noise, full band
    pad = 3e-4 * rng.standard_normal(int(0.3 * sr))
    return np.concatenate([pad, y, pad]).astype(np.float32)


def _write(folder, name, y, sr):
    folder.mkdir(parents=True, exist_ok=True)
    sf.write(str(folder / f"{name}.wav"), y, sr, subtype="PCM_16")


def _checks(out):
    with open(out / lv.LABEL_CHECKS_FILE, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def narrow_and_full(tmp_path_factory):
    """Clarity renders of an 8 kHz telephone-band source and of a full-band 48 kHz one."""
    base = tmp_path_factory.mktemp("lv")
    _write(base / "narrow", "tel", speech_like(8000), 8000)
    _write(base / "full", "wide", speech_like(48000), 48000)
    out = {}
    for name in ("narrow", "full"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s = render(f"folder:{base / name}", base / f"out_{name}", categories=["clarity", "pitch"],
                       jobs=1, progress=False)
        out[name] = (base / f"out_{name}", s, [w for w in caught if issubclass(w.category, lv.LabelWarning)])
    return out


def test_band_limited_warning_fires_on_8khz_source(narrow_and_full):
    out, summary, caught = narrow_and_full["narrow"]
    rows = [r for r in _checks(out) if r["category"] == "clarity"]
    assert len(rows) == 24
    flagged = {r["tier"] for r in rows if "band_limited" in r["label_warnings"]}
    # the 8 kHz source has nothing above 4 kHz: the low tier (cut-off 5 kHz, removes >= 4.6 kHz)
    # cannot change it; medium (2.5 kHz) and high (1.2 kHz) still remove speech.
    assert flagged == {"low"}
    low = [r for r in rows if r["tier"] == "low"]
    assert all(abs(float(r["effect_measured"])) < lv.MIN_CHANGE["clarity"] for r in low)
    assert summary.label_warnings["band_limited"] == 8
    assert caught and "band_limited 8" in str(caught[0].message)
    info = lv.label_warning_summary(out)
    assert info["by_category"]["clarity"]["band_limited"] == 8 and len(info["clips"]) >= 8


def test_band_limited_warning_silent_on_full_band_source(narrow_and_full):
    out, summary, caught = narrow_and_full["full"]
    rows = _checks(out)
    assert len(rows) == 48
    assert not any("band_limited" in r["label_warnings"] for r in rows)
    # every clip carries its label: measured change has the label's sign and a clear size
    for r in rows:
        eff = float(r["effect_measured"])
        assert (eff > 0) == (r["direction"] == "increase"), r
        assert r["label_warnings"] == "", r
    assert not caught and summary.label_warnings == {}


def test_pitch_effect_measures_the_semitone_change(narrow_and_full):
    out, _, _ = narrow_and_full["full"]
    rows = {(r["tier"], r["trajectory"], r["direction"]): float(r["effect_measured"])
            for r in _checks(out) if r["category"] == "pitch"}
    # jump: -D -> +D semitones, so the last eighth sits 2D above the first
    for tier, d in (("low", 1), ("medium", 2), ("high", 3)):
        assert rows[(tier, "jump", "increase")] == pytest.approx(2 * d, abs=0.5)
        assert rows[(tier, "jump", "decrease")] == pytest.approx(-2 * d, abs=0.5)


def test_clipping_and_silence_codes():
    from generation.recipe import load_recipe
    from generation.span import Span

    rec = load_recipe()
    x = speech_like(48000)
    span = Span(0, len(x), True)  # span includes the quiet padding at both ends
    codes = lv.source_warnings(x, span, 48000, "volume", rec.category("volume"))
    assert all("silence_padded" in c for c in codes.values())
    assert "clipping" in lv.clip_warnings("volume", "increase", 20.0, 0.01, [])
    assert lv.clip_warnings("volume", "increase", 20.0, 0.0, []) == []
    assert lv.clip_warnings("volume", "increase", -20.0, 0.0, []) == ["reversed_effect"]
    assert lv.clip_warnings("volume", "decrease", 0.1, 0.0, []) == ["weak_effect"]


def test_clips_rerender_identically_from_stored_sources(tmp_path):
    """A 16 kHz source is stored in sources/ as 48 kHz 16-bit; rendering from that file gives the same clips."""
    _write(tmp_path / "src", "narrowband", speech_like(16000, seed=3), 16000)
    cats = ["pitch", "speed", "noise", "clarity"]
    a = render(f"folder:{tmp_path / 'src'}", tmp_path / "a", categories=cats, jobs=1, progress=False)
    stored = tmp_path / "a" / "sources"
    info = sf.info(str(stored / "narrowband.flac"))
    assert (info.samplerate, info.subtype) == (48000, "PCM_16")
    b = render(f"folder:{stored}", tmp_path / "b", categories=cats, jobs=1, progress=False)
    assert a.clips_rendered == b.clips_rendered == 96
    clips = sorted((tmp_path / "a" / "clips").rglob("*.flac"))
    assert len(clips) == 96
    for path in clips:
        other = tmp_path / "b" / path.relative_to(tmp_path / "a")
        ya, _ = sf.read(str(path), dtype="int16")
        yb, _ = sf.read(str(other), dtype="int16")
        np.testing.assert_array_equal(ya, yb, err_msg=str(path.name))


def test_report_lists_label_warnings(narrow_and_full, tmp_path):
    from analysis.report import build_report
    from tests._report_helpers import clips, write_results

    out, _, _ = narrow_and_full["narrow"]
    md = lv.label_warnings_markdown(out)
    assert "## Label validity" in md and "band_limited" in md and "tel__clarity__jump__low__decrease" in md
    assert lv.label_warnings_markdown(tmp_path) == ""          # a render without label_checks.csv
    write_results(tmp_path / "res", "m", lambda d: "increase", docs=clips(sources=1, categories=("clarity",)))
    rep = build_report([tmp_path / "res"], tmp_path / "rep", draws=50, plots=False, render_dir=out)
    assert rep["label_validity"]["by_category"]["clarity"]["band_limited"] == 8
    assert "## Label validity" in (tmp_path / "rep" / "report.md").read_text()


def test_the_render_warning_says_which_codes_are_expected():
    """The demo's "clipping 28" is the paper's known +18 dB volume flaw: the warning says it is expected."""
    note = lv.expected_note({"clipping": 28, "weak_effect": 12})
    assert "+18 dB" in note and note.endswith("expected") and "weak_effect" not in note
    assert lv.expected_note({"weak_effect": 12}) == "" and lv.expected_note({"clipping": 0}) == ""
