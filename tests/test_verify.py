"""`vocalgrad verify`: passes on a complete build, fails naming what on broken ones, compares builds."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import soundfile as sf

import vocalgrad as vg
from generation.verify import load_side, sdr_db, verify
from tests._hub_helpers import make_render_dir, read_manifest, write_manifest


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return make_render_dir(tmp_path_factory.mktemp("b") / "render", n_sources=2)


def _copy(build, tmp_path, name="copy"):
    dst = tmp_path / name
    shutil.copytree(build, dst)
    return dst


def _cli(argv, capsys):
    from vocalgrad_commands.cli import main

    rc = main(["verify", *argv])
    return rc, capsys.readouterr().out


def test_complete_build_passes(build, capsys):
    rc, out = _cli([str(build)], capsys)
    assert rc == 0, out
    assert "PASS -- 432 clips, 2 sources" in out
    assert "per direction: " in out and "increase 216" in out
    rec = json.loads((build / "verify.json").read_text())
    assert rec["ok"] is True and rec["counts"]["category"]["pitch"] == 48


def test_deleted_clip_is_named(build, tmp_path, capsys):
    d = _copy(build, tmp_path)
    victim = read_manifest(d)[5]
    (d / victim["path"]).unlink()
    rc, out = _cli([str(d)], capsys)
    assert rc == 1 and "FAIL clip file missing: 1" in out and victim["path"] in out


def test_flipped_label_is_named(build, tmp_path, capsys):
    d = _copy(build, tmp_path)
    rows = read_manifest(d)
    victim = next(r for r in rows if r["category"] == "echo" and r["direction"] == "increase")
    victim["direction"] = "decrease"
    write_manifest(d, rows)
    rc, out = _cli([str(d)], capsys)
    assert rc == 1
    assert "clip id does not match its columns" in out and victim["clip_id"] in out
    assert "label balance (increase != decrease): 1" in out and "echo: increase 23, decrease 25" in out


def test_reencoded_clip_is_named_and_equal_audio_against_the_original(build, tmp_path, capsys):
    d = _copy(build, tmp_path)
    victim = read_manifest(d)[17]
    path = d / victim["path"]
    y, sr = sf.read(path, dtype="int16")
    sf.write(path, y, sr, format="FLAC", subtype="PCM_24")  # same samples, other bytes
    rc, out = _cli([str(d)], capsys)
    assert rc == 1 and "sha256 differs from the manifest" in out and victim["path"] in out
    res = verify(d, against=build, write_record=False)
    assert res.against[victim["category"]]["worst_sdr"] == float("inf")  # the audio itself is unchanged


def test_against_reports_sdr_and_length_per_category(build, tmp_path):
    d = _copy(build, tmp_path)
    rows = read_manifest(d)
    noisy = next(r for r in rows if r["category"] == "noise")
    short = next(r for r in rows if r["category"] == "pitch")
    for r, change in ((noisy, "noise"), (short, "short")):
        p = d / r["path"]
        y, sr = sf.read(p, dtype="float64")
        y = y + 0.01 * np.random.default_rng(0).standard_normal(len(y)) if change == "noise" else y[:-100]
        sf.write(p, y, sr, format="FLAC", subtype="PCM_16")
        import hashlib

        r["sha256"] = hashlib.sha256(p.read_bytes()).hexdigest()
    write_manifest(d, rows)
    assert verify(d, write_record=False).ok  # consistent on its own
    res = verify(d, against=build, write_record=False)
    assert not res.ok
    assert res.against["noise"]["worst_clip"] == noisy["clip_id"] and res.against["noise"]["worst_sdr"] < 40
    assert res.against["pitch"]["length_diff"] == 1 and res.against["volume"]["exact"] == 48
    text = res.summary()
    assert noisy["clip_id"] in text and short["clip_id"] in text and "SDR below 60 dB" in text


def test_against_a_hub_folder(build, tmp_path, capsys):
    from generation.hub import build_hub

    hub = tmp_path / "hub"
    build_hub([build], hub, sources=False)
    side = load_side(hub)
    assert side.kind == "hub" and len(side.rows) == 432
    rc, out = _cli([str(build), "--against", str(hub)], capsys)
    assert rc == 0, out
    assert all(s["exact"] == 48 for s in verify(build, against=hub, write_record=False).against.values())
    rc, out = _cli([str(hub)], capsys)  # a Hub folder verifies on its own too
    assert rc == 0, out


def test_frozen_ids_of_a_partial_frozen_build(tmp_path, capsys):
    d = make_render_dir(tmp_path / "r", n_sources=1, categories=("volume",))
    meta = json.loads((d / "render.json").read_text())
    meta.update(selection="frozen", domain="vctk", source="vctk:/data/VCTK", categories=["volume"])
    (d / "render.json").write_text(json.dumps(meta))
    rc, out = _cli([str(d)], capsys)
    assert rc == 1
    assert "frozen vctk test item absent (a partial build, e.g. --sources N): 100" in out  # no selection.csv
    assert "source id not in the frozen selection: 1" in out and "tone00" in out
    # the categories the render was not asked for make it partial, not failed
    assert "partial: 1 of 9 categories, as asked (rendered with --categories volume); not rendered: speed" in out
    assert "category not in the build" not in out
    # with the render's selection.csv (what --sources N asked for) the frozen items it left out are partial too
    (d / "selection.csv").write_text("source_id\np226_01\n")
    rc, out = _cli([str(d)], capsys)
    assert "partial: 1 of the 100 frozen vctk test items, as asked (selection.csv; --sources N)" in out
    assert "frozen vctk test item absent (a partial build, e.g. --sources N): 1\n    p226_01" in out  # asked, absent


def test_unreadable_input_is_exit_2(tmp_path, capsys):
    from vocalgrad_commands.cli import main

    assert main(["verify", str(tmp_path)]) == 2
    assert "neither a render folder" in capsys.readouterr().err


def test_sdr():
    x = np.sin(np.arange(1000) / 10)
    assert sdr_db(x, x) == float("inf")
    assert sdr_db(x, 1.1 * x) == pytest.approx(20.0, abs=1e-9)
    assert vg.clip_id("a", "pitch", "linear", "low", "increase") == "a__pitch__linear__low__increase"


def test_hub_card_reports_selection_and_verification(tmp_path):
    from generation.hub import build_hub

    d = make_render_dir(tmp_path / "r", n_sources=1)
    meta = json.loads((d / "render.json").read_text())
    meta["selection_note"] = "a new seeded selection (--selection sample): a new dataset instance, not the paper's"
    (d / "render.json").write_text(json.dumps(meta))
    assert verify(d).ok
    build_hub([d], tmp_path / "hub", sources=False)
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "**Selection (test):** a new seeded selection" in card
    assert "**Verified (test):** `vocalgrad verify` passed on" in card
    rows = read_manifest(d)
    rows[0]["text"] = "changed after verification"
    write_manifest(d, rows)
    build_hub([d], tmp_path / "hub2", sources=False)
    assert "Verified" not in (tmp_path / "hub2" / "README.md").read_text()  # stale record: not claimed


def test_hub_partial_by_choice_gets_the_right_hint(tmp_path):
    from generation.hub import HubBuildError, build_hub

    d = make_render_dir(tmp_path / "r", n_sources=1, categories=("volume", "pitch"))
    meta = json.loads((d / "render.json").read_text())
    meta["categories"] = ["pitch", "volume"]
    (d / "render.json").write_text(json.dumps(meta))
    with pytest.raises(HubBuildError) as err:
        build_hub([d], tmp_path / "hub", sources=False)
    msg = str(err.value)
    assert "rendered with --categories pitch,volume" in msg and "--categories clarity,distortion" in msg
    assert "re-run the same render command" not in msg


# ---- sweep renders: realised magnitudes rise with the declared ones --------------------------------
def _sweep_rows(realised: dict[float, list[float]], null: set = frozenset(), category: str = "clarity") -> list[dict]:
    return [{"category": category, "magnitude": m, "magnitude_realised": v, "realised_unit": "octaves",
             "level_null": (m, i) in null} for m, vs in realised.items() for i, v in enumerate(vs)]


def test_realised_magnitudes_that_fall_are_named():
    from generation.verify import realised_out_of_order

    rising = {0.0: [0.0, 0.0], 1.0: [0.4, 0.6], 2.0: [1.1, 0.9], 3.0: [2.0, 2.2]}
    assert realised_out_of_order(_sweep_rows(rising)) == []
    fallen = {**rising, 2.0: [0.1, 0.3]}  # level 2 realises less than level 1 (by more than 5 % of the range)
    problems = realised_out_of_order(_sweep_rows(fallen))
    assert problems == ["clarity: level 2 realised 0.2 octaves, below level 1's 0.5 (medians over the clips not "
                        "level_null)"]
    wobble = {**rising, 2.0: [0.45, 0.47]}  # a fall within 5 % of the range of medians (0.04 of 2.1): measurement noise
    assert realised_out_of_order(_sweep_rows(wobble)) == []
    # a null level (a cut-off above the voice's band) is no change: its clips are not held against the others
    nulls = {**rising, 2.0: [0.0, 0.0, 0.9]}
    assert realised_out_of_order(_sweep_rows(nulls)) != []
    assert realised_out_of_order(_sweep_rows(nulls, null={(2.0, 0), (2.0, 1)})) == []


def test_verify_fails_a_sweep_render_whose_realised_magnitudes_fall(tmp_path, monkeypatch):
    """The check is reached from verify() for a sweep render (render.json ``sweep``), not for the paper set."""
    import generation.verify as vmod

    rows = _sweep_rows({0.0: [0.0], 1.0: [1.0], 2.0: [0.2]})
    side = vmod.Side(tmp_path, "render", {"sweep": {"levels": {}}}, rows, lambda ids=None: iter(()))
    res = vmod.Verification(tmp_path, "render")
    vmod._check_sweep(side, res)
    assert res.problems == {vmod.NOT_RISING: ["clarity: level 2 realised 0.2 octaves, below level 1's 1 (medians "
                                              "over the clips not level_null)"]}
    paper = vmod.Verification(tmp_path, "render")
    vmod._check_sweep(vmod.Side(tmp_path, "render", {}, rows, lambda ids=None: iter(())), paper)
    assert paper.ok
