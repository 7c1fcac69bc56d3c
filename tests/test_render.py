"""The render command end to end: layout, manifest, determinism across jobs/shards, resume, bad input."""

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import soundfile as sf

import vocalgrad as vg
from generation.render import render as _render
from generation.sources import SourceOptions
from _timing import hang_guard

SMALL = ("--allow-small", "--min-duration", "0.5")


def render(source, out, min_duration=0.5, **kw):
    """The Python API with a selection that accepts these tiny fixture corpora."""
    opts = SourceOptions(split=kw.get("split", "test"), allow_small=True, min_duration=min_duration)
    return _render(source, out, source_options=opts, **kw)

SR = 48000
ROOT = Path(__file__).resolve().parents[1]


def speechlike(seconds, f0, seed, sr=SR):
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * sr)) / sr
    y = sum(np.sin(2 * np.pi * k * f0 * t + rng.uniform(0, 6)) / k for k in range(1, 10))
    y *= 0.5 * (1 + np.sin(2 * np.pi * 4 * t)) * 0.1      # 4-Hz syllable-like envelope
    pad = np.zeros(int(0.25 * sr))
    return np.concatenate([pad, y, pad]) + 1e-4 * rng.standard_normal(len(y) + 2 * len(pad))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    sf.write(d / "a.wav", speechlike(0.6, 150, 1), SR, subtype="PCM_16")
    sf.write(d / "b.flac", speechlike(0.8, 210, 2), SR, subtype="PCM_16")
    return d


def run_cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "vocalgrad_commands.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, **kw)


@pytest.fixture(scope="module")
def rendered(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("r") / "jobs2"
    r = run_cli("render", "--source", f"folder:{corpus}", "--out", str(out), "--jobs", "2", "--quiet", *SMALL)
    assert r.returncode == 0, r.stderr
    return out


def manifest(out):
    return pq.read_table(out / "manifest.parquet").to_pandas()


def test_layout_and_manifest(rendered):
    m = manifest(rendered)
    assert list(m.columns) == list(vg.MANIFEST_COLUMN_NAMES)
    assert len(m) == 2 * 216 and m.clip_id.is_unique
    assert sorted(m.category.unique()) == sorted(vg.CATEGORY_NAMES)
    assert set(m.groupby("category").size()) == {48}
    row = m.iloc[0]
    assert row.clip_id == vg.clip_id(row.source_id, row.category, row.trajectory, row.tier, row.direction)
    for r in m.sample(20, random_state=0).itertuples():
        data = (rendered / r.path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == r.sha256
        info = sf.info(rendered / r.path)
        assert info.samplerate == SR and info.channels == 1 and info.subtype == "PCM_16"
        assert abs(info.frames / SR - r.duration_sec) < 1e-9
        assert 0 <= r.onset_sec < r.offset_sec <= r.duration_sec
    assert (rendered / "sources" / "a.flac").exists() and (rendered / "selection.csv").exists()
    assert m[m.category == "volume"].clipped_ratio.max() >= 0
    assert set(m.recipe) == {"faithful-v1"} and m.speech_found.all()
    spd = m[(m.category == "speed") & (m.tier == "high") & (m.trajectory == "jump")]
    assert set(spd.value_start) == {0.6, 1.4} and (spd.value_unit == "rate").all()
    # speed changes the length, volume does not
    vol = m[m.category == "volume"].groupby("source_id").duration_sec.nunique()
    spd = m[m.category == "speed"].groupby("source_id").duration_sec.nunique()
    assert (vol == 1).all() and (spd > 1).all()


def test_same_bytes_whatever_jobs_or_shards(rendered, corpus, tmp_path):
    a = manifest(rendered).set_index("clip_id").sha256
    one = tmp_path / "jobs1"
    assert render(f"folder:{corpus}", one, jobs=1, progress=False).clips_rendered == 432
    assert manifest(one).set_index("clip_id").sha256.equals(a)
    sh = tmp_path / "shards"
    n0 = render(f"folder:{corpus}", sh, jobs=1, shard=(0, 2), progress=False).clips_rendered
    n1 = render(f"folder:{corpus}", sh, jobs=2, shard=(1, 2), progress=False).clips_rendered
    assert n0 + n1 == 432 and n0 > 0 and n1 > 0
    assert manifest(sh).set_index("clip_id").sha256.sort_index().equals(a.sort_index())
    # a rerun renders nothing and keeps every file
    again = render(f"folder:{corpus}", one, jobs=2, progress=False)
    assert again.clips_rendered == 0 and again.units_done_before == 18


def test_resume_after_kill(corpus, rendered, tmp_path):
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "vocalgrad_commands.cli", "render", "--source", f"folder:{corpus}",
                             "--out", str(out), "--jobs", "2", "--quiet", *SMALL], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 600  # generous: a loaded machine starts slowly (numba compile)
    while time.time() < deadline and len(list((out / ".parts").glob("*.json"))) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    parts = len(list((out / ".parts").glob("*.json")))
    assert 3 <= parts < 18, "the render must be interrupted midway"
    r = run_cli("render", "--source", f"folder:{corpus}", "--out", str(out), "--jobs", "2", "--quiet", *SMALL)
    assert r.returncode == 0, r.stderr
    assert f"{parts * 24} already complete" in r.stdout
    m = manifest(out).set_index("clip_id").sha256.sort_index()
    assert m.equals(manifest(rendered).set_index("clip_id").sha256.sort_index())
    assert not list(out.rglob("*.tmp"))
    files = sorted(p.relative_to(out).as_posix() for p in (out / "clips").rglob("*.flac"))
    assert files == sorted(manifest(out).path)


def test_bad_inputs_are_skipped_with_reasons(tmp_path):
    d = tmp_path / "bad"
    d.mkdir()
    (d / "corrupt.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunk")
    sf.write(d / "short.wav", 0.1 * np.ones(int(0.3 * 16000)), 16000)
    sf.write(d / "silent.wav", np.zeros(SR), SR)
    stereo = np.stack([speechlike(1.0, 180, 3, 22050), speechlike(1.0, 180, 3, 22050)], axis=1)
    sf.write(d / "stereo.ogg", stereo, 22050)
    # min_duration=0: the selection keeps everything, so the render's own checks must catch them
    s = render(f"folder:{d}", tmp_path / "out", categories=["volume"], jobs=1, progress=False, min_duration=0.0)
    reasons = dict(s.skipped)
    assert set(reasons) == {"corrupt", "short", "silent"}
    assert "corrupt.wav" in reasons["corrupt"] and "decode" in reasons["corrupt"]
    assert "too short" in reasons["short"] and "silent" in reasons["silent"]
    assert s.clips_rendered == 24
    skipped_csv = (tmp_path / "out" / "skipped.csv").read_text()
    assert skipped_csv.count("\n") == 4
    info = sf.info(tmp_path / "out" / "sources" / "stereo.flac")
    assert info.channels == 1 and info.samplerate == SR
    r = run_cli("render", "--source", f"folder:{d}", "--out", str(tmp_path / "strict"), "--strict",
                "--categories", "volume", "--jobs", "1", "--quiet", "--allow-small")
    assert r.returncode == 2 and "corrupt" in r.stderr and "--strict" in r.stderr


def test_refuses_to_mix_recipes_or_settings(corpus, tmp_path):
    out = tmp_path / "o"
    render(f"folder:{corpus}", out, categories=["volume"], n_sources=1, jobs=1, progress=False)
    before = sorted(p.name for p in out.rglob("*"))
    other = tmp_path / "other-v2.toml"
    other.write_text((ROOT / "generation/recipes/faithful-v1.toml").read_text().replace(
        'name = "faithful-v1"', 'name = "other-v2"'))
    r = run_cli("render", "--source", f"folder:{corpus}", "--out", str(out), "--recipe", str(other), "--quiet", *SMALL)
    assert r.returncode == 2 and "recipe='faithful-v1'" in r.stderr and "another --out" in r.stderr
    r = run_cli("render", "--source", f"folder:{corpus}", "--out", str(out), "--sample-rate", "16000", "--quiet", *SMALL)
    assert r.returncode == 2 and "sample_rate" in r.stderr
    assert sorted(p.name for p in out.rglob("*")) == before


def test_output_sample_rate_option(corpus, tmp_path):
    s = render(f"folder:{corpus}", tmp_path / "o", categories=["pitch"], n_sources=1, sample_rate=16000,
               jobs=1, progress=False)
    m = manifest(tmp_path / "o")
    assert s.clips_rendered == 24 and set(m.sample_rate) == {16000}
    info = sf.info(tmp_path / "o" / m.path.iloc[0])
    assert info.samplerate == 16000 and abs(info.frames / 16000 - m.duration_sec.iloc[0]) < 1e-9


def test_cli_errors_are_clear(corpus, tmp_path):
    r = run_cli("render", "--source", "nowhere:x", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "unknown source" in r.stderr
    r = run_cli("render", "--source", "tones", "--out", str(tmp_path / "x"), "--shard", "3/2")
    assert r.returncode == 2 and "--shard" in r.stderr
    r = run_cli("render", "--source", "tones", "--out", str(tmp_path / "x"), "--categories", "loudness")
    assert r.returncode == 2 and "unknown category" in r.stderr


def test_tones_beep_split(tmp_path):
    s = render("tones", tmp_path / "beep", split="beep", n_sources=1, categories=["volume", "noise"], jobs=1,
               progress=False)
    m = manifest(tmp_path / "beep")
    assert s.clips_rendered == 48 and set(m.split) == {"beep"}
    assert m.source_id.iloc[0].startswith("tone00_pure")


def test_stale_temp_of_a_zombie_is_removed(tmp_path):
    """A killed worker that nobody reaped (a zombie) cannot write: its temp file is stale."""
    from generation import audio as aio
    from generation.render_files import clean_stale_temps, pid_alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.time() + hang_guard(30)
    while time.time() < deadline and Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.05)  # exited, not yet waited for: a zombie
    assert pid_alive(os.getpid()) and not pid_alive(child.pid)
    zombie = tmp_path / f".a.flac.{aio.HOST_TAG}.{child.pid}.tmp"
    mine = tmp_path / f".b.flac.{aio.HOST_TAG}.{os.getpid()}.tmp"
    zombie.write_bytes(b"x")
    mine.write_bytes(b"x")
    clean_stale_temps(tmp_path)
    child.wait()
    assert not zombie.exists() and mine.exists()


def test_every_file_of_a_render_folder_is_named_by_render_dir(corpus, tmp_path):
    # the render writes, and verify records, only what RenderDir names (its one owner)
    from generation.render_files import PARTS_DIR
    from generation.ownership import MARKER
    from generation.render_dir import RenderDir
    from generation.verify import verify

    d = tmp_path / "corpus"
    d.mkdir()
    for p in corpus.iterdir():
        (d / p.name).write_bytes(p.read_bytes())
    (d / "corrupt.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunk")  # gives skipped.csv
    out = tmp_path / "out"
    render(f"folder:{d}", out, categories=["volume"], jobs=1, progress=False)
    rd = RenderDir(out)
    assert rd.verify_record() is None
    res = verify(out)
    written = {p.name for p in out.iterdir()}
    named = {rd.meta_path, rd.manifest_path, rd.selection_path, rd.skipped_path, rd.label_checks_path,
             rd.span_check_path, rd.verify_path, rd.clips_dir, rd.sources_dir, out / PARTS_DIR,
             out / MARKER}  # the folder's owner marker (generation.ownership)
    assert written <= {p.name for p in named}, written - {p.name for p in named}
    assert {rd.META, rd.MANIFEST, rd.SKIPPED, rd.LABEL_CHECKS, rd.VERIFY, "clips", "sources"} <= written
    assert "corrupt" in rd.skipped()
    record = rd.verify_record()
    assert record["ok"] == res.ok and record["manifest_sha256"] == rd.manifest_sha256()
