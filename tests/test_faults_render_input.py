"""Bad input on the rendering side: recipe values, source folders, command-line arguments, warnings.

Each test is one case that once went wrong (silent wrong data, a traceback, an error naming neither
file nor field, a half-written output folder) and checks what happens now.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import vocalgrad as vg
from generation import render as render_mod
from generation.cli_warnings import plain_warnings
from vocalgrad_commands.cli import main
from generation.recipe import RECIPE_DIR, RecipeError, available_recipes, load_recipe
from generation.sources import SourceSpecError, SourceWarning, read_sources, safe_id
from generation.transforms import TRANSFORMS
from generation.transforms.base import ValueRange

ROOT = Path(__file__).resolve().parents[1]
FAITHFUL = (RECIPE_DIR / "faithful-v1.toml").read_text()
SR = 48000


def variant(tmp_path, old: str, new: str, name: str = "bad.toml") -> Path:
    """A copy of faithful-v1 with one piece of text changed (it must occur)."""
    assert old in FAITHFUL, old
    path = tmp_path / name
    path.write_text(FAITHFUL.replace(old, new, 1))
    return path


def tone(seconds: float, f0: float = 180.0) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    y = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 6))
    return (0.2 * y / np.max(np.abs(y))).astype(np.float32)


# ------------------------------------------------------------------------------------------ recipes
VOL_LOW = "low = [-6.0, 6.0]"
RECIPE_CASES = [
    # (old, new, field named, what is said)
    (VOL_LOW, "low = [-6.0, nan]", "categories.volume.tiers.low", "end must be a finite number, got nan"),
    (VOL_LOW, "low = [-6.0, inf]", "categories.volume.tiers.low", "finite"),
    (VOL_LOW, "low = [-6.0, 600.0]", "categories.volume.tiers.low", "end 600 is outside the gain (dB) range [-40, 40]"),
    (VOL_LOW, "low = [6.0, 6.0]", "categories.volume.tiers.low", "must rise from start to end"),
    (VOL_LOW, "low = [6.0, -6.0]", "categories.volume.tiers.low", "must rise from start to end"),
    (VOL_LOW, 'low = ["a", 6.0]', "categories.volume.tiers.low", "start must be a number, got 'a'"),
    (VOL_LOW, "low = [true, 6.0]", "categories.volume.tiers.low", "start must be a number"),
    (VOL_LOW, "low = [-6.0]", "categories.volume.tiers.low", "must be [start, end]"),
    (VOL_LOW, "low = [-6.0, 6.0], extreme = [-30.0, 30.0]", "categories.volume.tiers", "unknown tier(s) extreme"),
    ("low = [-1.0, 1.0]", "low = [-100.0, 100.0]", "categories.pitch.tiers.low", "range [-24, 24]"),
    ("low = [0.80, 1.20]", "low = [0.0, 1.20]", "categories.speed.tiers.low", "start 0 is outside the rate range"),
    ("low = [0.80, 1.20]", "low = [-0.5, 1.20]", "categories.speed.tiers.low", "start -0.5 is outside"),
    ("low = [0.0, 0.03]", "low = [-0.1, 0.03]", "categories.noise.tiers.low", "noise/speech RMS ratio range [0, 10]"),
    ("low = [48000.0, 18000.0]", "low = [18000.0, 48000.0]", "categories.distortion.tiers.low", "must fall"),
    ("low = [48000.0, 18000.0]", "low = [48000.0, 500.0]", "categories.distortion.tiers.low", "[1000, 48000]"),
    # 47 kHz still holds each sample once: the clips would not change
    ("low = [48000.0, 18000.0]", "low = [48000.0, 47000.0]", "categories.distortion.tiers.low", "same setting"),
    ("low = [16.0, 8.0]", "low = [16.0, 7.5]", "categories.roughness.tiers.low", "not a whole number"),
    ("low = [16.0, 8.0]", "low = [16.0, 1.0]", "categories.roughness.tiers.low", "range [2, 16]"),
    ("low = [5000.0, 24000.0]", "low = [5000.0, 30000.0]", "categories.clarity.tiers.low", "(0, 24000]"),
    ("low = [5000.0, 24000.0]", "low = [0.0, 24000.0]", "categories.clarity.tiers.low", "(0, 24000]"),
    ("low = [0.0, 0.60]", "low = [0.0, 1.5]", "categories.vibration.tiers.low", "depth range [0, 1]"),
    ("low = [0.0, 0.28]", "low = [0.0, 1.28]", "categories.echo.tiers.low", "wet mix range [0, 1]"),
    ("covary = { rate_hz = [0.0, 20.0] }", "covary = { rate_hz = [0.0, nan] }", "categories.vibration.covary.rate_hz",
     "finite"),
    ("covary = { rate_hz = [0.0, 20.0] }", "covary = { rate_hz = [0.0, 20.0], depth2 = [0, 1] }",
     "categories.vibration.covary.depth2", "does not read it"),
    ("transition_hz = 800.0", "transition_hz = nan", "categories.clarity.transition_hz", "finite"),
    ("ir_sec = 1.5", "ir_sec = 1e6", "categories.echo.ir_sec", "(0, 10]"),
    ("processing_sample_rate = 48000", "processing_sample_rate = -48000", "processing_sample_rate", ">= 8000"),
    ("processing_sample_rate = 48000", "processing_sample_rate = 48000.5", "processing_sample_rate", "whole number"),
    ("size = 2400 ", "size = 0 ", "blocks.size", "must be >= 1"),
    ("size = 2400 ", "size = 2400.5 ", "blocks.size", "must be an integer"),
    ("crossfade = 240 ", "crossfade = 5000 ", "blocks.crossfade", "[0, size = 2400]"),
    ("context = 2400 ", "context = -1 ", "blocks.context", ">= 0"),
    ("preemphasis = 0.97", "preemphasis = 1.5", "span.preemphasis", "[0, 1)"),
    ("preemphasis = 0.97", "preemphasys = 0.97", "span.preemphasys", "unknown parameter"),
    ("min_frames = 10", "min_frames = 0", "span.min_frames", ">= 1"),
    ('description = "', 'descripton = "', "descripton", "unknown field(s)"),
    ('unit = "dB"', 'unit = 3', "categories.volume.unit", "non-empty string"),
]


@pytest.mark.parametrize("old,new,field,why", RECIPE_CASES, ids=[c[1][:40] for c in RECIPE_CASES])
def test_bad_recipe_value_fails_at_load_naming_file_and_field(tmp_path, old, new, field, why):
    path = variant(tmp_path, old, new)
    with pytest.raises(RecipeError) as info:
        load_recipe(str(path))
    msg = str(info.value)
    assert msg.startswith(f"{path}: ") and field in msg and why in msg, msg
    assert "\n" not in msg and isinstance(info.value, vg.VocalGradError)


@pytest.mark.parametrize("old,new,field", [
    (VOL_LOW, "low = [-6.0, nan]", "categories.volume.tiers.low"),  # rendered all-zero labelled clips, exit 0
    ("size = 2400 ", "size = 0 ", "blocks.size"),  # ZeroDivisionError traceback
    ("low = [0.80, 1.20]", "low = [0.0, 1.20]", "categories.speed.tiers.low"),  # numpy error, no file or field
])
def test_render_with_a_bad_recipe_writes_nothing(tmp_path, monkeypatch, capsys, old, new, field):
    """The render stops at load: no source is read, no folder is created, an existing one is unchanged."""
    def no_sources(*a, **k):
        raise AssertionError("sources were read before the recipe was checked")

    monkeypatch.setattr(render_mod, "read_sources", no_sources)
    path = variant(tmp_path, old, new)
    args = ["render", "--source", "tones", "--sources", "1", "--categories", "volume", "--jobs", "1", "--quiet",
            "--recipe", str(path)]
    fresh = tmp_path / "fresh"
    assert main([*args, "--out", str(fresh)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and field in err and "Traceback" not in err, err
    assert not fresh.exists()
    existing = tmp_path / "existing"
    (existing / "clips").mkdir(parents=True)
    (existing / "render.json").write_text("{}")
    before = sorted((p.relative_to(existing), p.stat().st_mtime_ns) for p in existing.rglob("*"))
    assert main([*args, "--out", str(existing)]) == 2
    assert sorted((p.relative_to(existing), p.stat().st_mtime_ns) for p in existing.rglob("*")) == before


def test_shipped_recipes_load_and_faithful_values_are_unchanged():
    """Every shipped recipe passes the checks; faithful-v1's numbers are read exactly as written."""
    for name in available_recipes():
        load_recipe(name)
    rec = load_recipe("faithful-v1")
    assert rec.categories["volume"].tiers == {"low": (-6.0, 6.0), "medium": (-12.0, 12.0), "high": (-18.0, 18.0)}
    assert rec.categories["distortion"].tiers["high"] == (48000.0, 6000.0)
    assert (rec.sample_rate, rec.block, rec.context, rec.crossfade) == (48000, 2400, 2400, 240)
    assert rec.span == {"preemphasis": 0.97, "frame_sec": 0.010, "hop_sec": 0.010, "floor_sec": 0.200,
                        "floor_factor": 1.8, "peak_factor": 0.003, "min_threshold": 5e-5, "min_frames": 10}
    assert type(rec.span["min_frames"]) is int


def test_every_transform_owns_its_value_range():
    """Each transform's parameter class declares the physical range of its step values; the loader only names."""
    for name, t in TRANSFORMS.items():
        allowed = t.params_type.value_range(SR)
        assert isinstance(allowed, ValueRange) and np.isfinite([allowed.low, allowed.high]).all(), name
    lowpass = TRANSFORMS["lowpass"].params_type
    assert lowpass.value_range(16000).high == 8000 and 0 not in lowpass.value_range(16000)
    assert TRANSFORMS["sample_hold"].params_type.check_tier([48000, 18000], sample_rate=SR) == (48000.0, 18000.0)


# ------------------------------------------------------------------------------------------ folders
def folder(tmp_path: Path, files: dict[str, float], metadata: str | bytes | None = None) -> Path:
    root = tmp_path / "src"
    root.mkdir(parents=True)
    for rel, seconds in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        sf.write(root / rel, tone(seconds), SR, subtype="PCM_16")
    if metadata is not None:
        (root / "metadata.csv").write_bytes(metadata if isinstance(metadata, bytes) else metadata.encode())
    return root


@pytest.mark.parametrize("name", ["../outside.wav", "sub/../../outside.wav", "ABSOLUTE"])
def test_folder_file_name_may_not_leave_the_folder(tmp_path, name):
    outside = tmp_path / "outside.wav"
    sf.write(outside, tone(1.0), SR)
    name = str(outside) if name == "ABSOLUTE" else name
    root = folder(tmp_path, {"a.wav": 1.0}, f"file_name\na.wav\n{name}\n")
    (root / "sub").mkdir()
    with pytest.raises(SourceSpecError, match=r"metadata\.csv, line 3: file_name .*must be a path relative to"):
        read_sources(f"folder:{root}")


def test_non_ascii_names_keep_distinct_ids_and_ascii_ids_do_not_change(tmp_path):
    root = folder(tmp_path, {"日本.wav": 1.0, "中国.wav": 1.0, "café.wav": 1.0, "p226_001.wav": 1.0})
    ids = sorted(i.source_id for i in read_sources(f"folder:{root}"))
    assert ids == ["cafe", "p226_001", "u4e2du56fd", "u65e5u672c"]
    for ascii_id in ("p226_01", "a-b.c_d", "loquaciousset_test_0001"):
        assert safe_id(ascii_id) == ascii_id
    assert safe_id("a b/c") == "a_b_c"


def test_duplicate_ids_name_both_files(tmp_path):
    root = tmp_path / "src"
    root.mkdir()
    for name in ("x.ogg", "x.mp3"):  # listed, not decoded, by the reader
        (root / name).write_bytes(b"")
    with pytest.raises(SourceSpecError, match=r"duplicate source ids \['x'\]") as info:
        read_sources(f"folder:{root}")
    assert str(root / "x.ogg") in str(info.value) and str(root / "x.mp3") in str(info.value)


def test_unknown_metadata_columns_are_reported(tmp_path):
    root = folder(tmp_path, {"a.wav": 1.0}, "file_name,speaker_id,mood,age\na.wav,s1,happy,30\n")
    with pytest.warns(SourceWarning, match=r"metadata\.csv: column\(s\) mood, age are not read") as rec:
        items = read_sources(f"folder:{root}")
    assert str(root / "metadata.csv") in str(rec[0].message)
    assert items[0].speaker_id == "s1"
    root2 = folder(tmp_path / "ok", {"a.wav": 1.0}, "file_name,speaker_id,text\na.wav,s1,hi\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_sources(f"folder:{root2}")  # known columns only: no warning


def test_metadata_row_with_more_fields_than_header(tmp_path):
    root = folder(tmp_path, {"a.wav": 1.0, "b.wav": 1.0}, "file_name,text\na.wav,hello\nb.wav,hello, world\n")
    with pytest.raises(SourceSpecError, match=r"metadata\.csv, line 3: 3 fields but the header has 2"):
        read_sources(f"folder:{root}")


def test_metadata_not_utf8_names_the_file(tmp_path):
    root = folder(tmp_path, {"a.wav": 1.0}, "file_name,text\na.wav,caf\xe9\n".encode("latin-1"))
    with pytest.raises(SourceSpecError, match=r"metadata\.csv: not UTF-8 text") as info:
        read_sources(f"folder:{root}")
    assert str(root / "metadata.csv") in str(info.value)


def test_cv_spontaneous_tsv_not_utf8_names_the_file(tmp_path):
    from generation.sources import CV_LOCALES, CV_RELEASE

    for loc in CV_LOCALES:
        (tmp_path / f"{CV_RELEASE}-{loc}" / "audios").mkdir(parents=True)
    tsv = tmp_path / f"{CV_RELEASE}-{CV_LOCALES[0]}" / f"ss-corpus-{CV_LOCALES[0]}.tsv"
    tsv.write_bytes("audio_file\ttranscription\nx.mp3\tcaf\xe9\n".encode("latin-1"))
    with pytest.raises(SourceSpecError, match=r"not UTF-8 text") as info:
        read_sources(f"cv-spontaneous:{tmp_path}")
    assert str(tsv) in str(info.value)


def test_long_source_warns(tmp_path, monkeypatch):
    """A source whose clips run past LONG_CLIP_SEC is rendered, with a warning naming it and its length."""
    root = folder(tmp_path, {"short.wav": 1.0, "long.wav": 3.0})
    monkeypatch.setattr(render_mod, "LONG_CLIP_SEC", 2.0)  # stands for 30 s: a 10-minute test source is too slow
    with pytest.warns(render_mod.LongSourceWarning, match=r"1 source\(s\) gave clips longer than 2 s \(longest: long, 3.0 s\)"):
        s = render_mod.render(f"folder:{root}", tmp_path / "out", categories=["volume"], jobs=1, progress=False)
    assert s.clips_rendered == 48 and list(s.long_sources) == ["long"]
    assert render_mod.LONG_CLIP_SEC == 2.0 and abs(s.long_sources["long"] - 3.0) < 1e-6


# --------------------------------------------------------------------------------------------- CLI
@pytest.mark.parametrize("args,says", [
    (["--jobs", "0"], "argument --jobs: must be >= 1, got 0"),
    (["--jobs", "-1"], "argument --jobs: must be >= 1, got -1"),
    (["--jobs", "two"], "argument --jobs: must be a whole number"),
    (["--sources", "0"], "argument --sources: must be >= 1"),
    (["--categories", ""], "argument --categories: names no category"),
    (["--categories", " , "], "argument --categories: names no category"),
    (["--categories", "volume,volum"], "argument --categories: unknown category 'volum'"),
])
def test_render_arguments_are_checked_by_the_parser(tmp_path, capsys, args, says):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as info:
        main(["render", "--source", "tones", "--out", str(out), "--quiet", *args])
    assert info.value.code == 2 and says in capsys.readouterr().err
    assert not out.exists()


def test_demo_jobs_checked_too(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--out", "unused", "--jobs", "0"])
    assert "argument --jobs: must be >= 1" in capsys.readouterr().err


def test_api_refuses_jobs_below_one_and_repeats(tmp_path):
    with pytest.raises(ValueError, match="--jobs must be >= 1"):
        render_mod.render("tones", tmp_path / "o", categories=["volume"], jobs=0, progress=False)
    assert not (tmp_path / "o").exists()
    s = render_mod.render("tones", tmp_path / "o", categories=["volume", "volume"], n_sources=1, jobs=1,
                          progress=False)
    assert s.clips_total == s.clips_rendered == vg.CONDITIONS_PER_CATEGORY


# ---------------------------------------------------------------------------------------- warnings
def test_toolkit_warnings_print_as_one_line(tmp_path):
    """`vocalgrad render` prints its warnings as `vocalgrad: warning: ...`, no Python source line under them."""
    root = folder(tmp_path, {"a.wav": 1.0}, "file_name,mood\na.wav,happy\n")
    r = subprocess.run([sys.executable, "-m", "vocalgrad_commands.cli", "render", "--source", f"folder:{root}", "--out",
                        str(tmp_path / "out"), "--categories", "volume", "--jobs", "1", "--quiet"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert any(ln.startswith("vocalgrad: warning: ") and "mood" in ln for ln in lines), r.stderr
    assert all(ln.startswith("vocalgrad: warning: ") for ln in lines), r.stderr  # label warning too, one line each
    assert "warnings.warn" not in r.stderr and "_render_into" not in r.stderr


def test_plain_warnings_keep_pytest_warns_and_other_libraries_format(monkeypatch):
    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # restored after the test
    plain_warnings("vocalgrad")
    plain_warnings("vocalgrad")  # idempotent: does not wrap itself
    assert warnings.formatwarning(SourceWarning("x.csv: odd"), SourceWarning, __file__, 1) == \
        "vocalgrad: warning: x.csv: odd\n"
    other = warnings.formatwarning("old API", DeprecationWarning, "/usr/lib/python3/somelib.py", 7, "call()")
    assert "DeprecationWarning" in other and "somelib.py:7" in other
    with pytest.warns(SourceWarning, match="unused"):
        warnings.warn(SourceWarning("unused columns"))
