"""Sources through the render command: selection.csv and ids as the render writes them."""

from __future__ import annotations

import csv

import pytest

render_mod = pytest.importorskip("generation.render")

from vocalgrad_commands.cli import main  # noqa: E402
from tests._sources_helpers import make_vctk  # noqa: E402


def _selection(out):
    with open(out / "selection.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_render_vctk_records_layout_and_reference_ids(tmp_path):
    corpus = make_vctk(tmp_path / "vctk", "0.92")
    out = tmp_path / "out"
    rc = main(["render", "--source", f"vctk:{corpus}", "--out", str(out), "--sources", "1",
               "--categories", "volume", "--jobs", "1", "--allow-small", "--vctk-mic", "2", "--quiet",
               "--selection", "sample"])
    assert rc == 0
    rows = _selection(out)
    assert len(rows) == 1
    row = rows[0]
    assert row["vctk_layout"] == "0.92" and row["vctk_mic"] == "2" and row["audio"].endswith("_mic2.flac")
    assert row["source_id"] == f"{row['speaker_id']}_01" and row["reference_clip_id"] == row["sentence_id"]
    clips = sorted((out / "clips" / "volume").glob("*.flac"))
    assert len(clips) == 24 and all(c.name.startswith(row["source_id"] + "__") for c in clips)


def test_render_too_small_corpus_is_a_clean_cli_error(tmp_path, capsys):
    corpus = make_vctk(tmp_path / "vctk", "0.80")
    rc = main(["render", "--source", f"vctk:{corpus}", "--out", str(tmp_path / "out"), "--sources", "1",
               "--categories", "volume", "--jobs", "1", "--quiet", "--selection", "sample"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "found 8 eligible speakers" in err and "--allow-small" in err


def test_render_demo_train_split(tmp_path):
    out = tmp_path / "out"
    rc = main(["render", "--source", "demo", "--split", "train", "--out", str(out), "--sources", "2",
               "--categories", "volume", "--jobs", "1", "--quiet"])
    assert rc == 0
    rows = _selection(out)
    assert [r["speaker_id"] for r in rows] == ["esp_gb_linda", "esp_lan_f5"]
    assert {r["engine"] for r in rows} == {"espeak-ng"}
