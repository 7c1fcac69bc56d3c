"""`vocalgrad hub` on bad input: every problem is listed, nothing is written."""

from __future__ import annotations

import json
import shutil

import pytest

import vocalgrad
from generation import hub

from _hub_helpers import make_render_dir, read_manifest, run_cli, write_manifest


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return make_render_dir(tmp_path_factory.mktemp("pristine") / "render", seconds=0.02)


@pytest.fixture
def render(pristine, tmp_path):
    dst = tmp_path / "render"
    shutil.copytree(pristine, dst)
    return dst


def _fails(render, tmp_path, capsys, *extra) -> str:
    out = tmp_path / "hub"
    assert run_cli(["hub", str(render), *extra, "--out", str(out)]) == 2
    assert not out.exists()
    assert not list(tmp_path.glob(".hub.*"))  # no staging folder left behind
    return capsys.readouterr().err


def test_missing_clips_are_listed(render, tmp_path, capsys):
    rows = read_manifest(render)
    for r in rows[:2]:
        (render / r["path"]).unlink()
    err = _fails(render, tmp_path, capsys)
    assert "clip listed in manifest.parquet is missing" in err
    for r in rows[:2]:
        assert str(render / r["path"]) in err


def test_sha256_mismatch_is_listed(render, tmp_path, capsys):
    row = read_manifest(render)[5]
    data = bytearray((render / row["path"]).read_bytes())
    data[-1] ^= 0xFF
    (render / row["path"]).write_bytes(bytes(data))
    err = _fails(render, tmp_path, capsys)
    assert f"clip sha256 differs from manifest.parquet: {render / row['path']}" in err


def test_partial_render_needs_allow_partial(render, tmp_path, capsys):
    rows = [r for r in read_manifest(render) if r["category"] != "echo" and r["clip_id"] != read_manifest(render)[0]["clip_id"]]
    shutil.rmtree(render / "clips/echo")
    (render / read_manifest(render)[0]["path"]).unlink()
    write_manifest(render, rows)
    err = _fails(render, tmp_path, capsys)
    assert "render is partial" in err and "--allow-partial" in err
    assert "condition not rendered: tone00__echo__linear__low__increase" in err
    assert "... and" in err  # 25 missing conditions: the list is cut after 20
    out = tmp_path / "hub"
    summary = hub.build_hub(render, out, allow_partial=True)
    assert "echo" not in summary["configs"] and summary["configs"]["all"]["rows"] == len(rows)
    assert not (out / "echo").exists()
    assert "**Partial build:** render: 25 condition(s) missing." in (out / "README.md").read_text()


def test_missing_manifest_column(render, tmp_path, capsys):
    import pyarrow.parquet as pq

    table = pq.read_table(render / "manifest.parquet").drop_columns(["sha256", "tier"])
    pq.write_table(table, render / "manifest.parquet")
    err = _fails(render, tmp_path, capsys)
    assert "manifest.parquet: missing columns tier, sha256" in err


def test_unlisted_clip_and_bad_values(render, tmp_path, capsys):
    rows = read_manifest(render)
    shutil.copy(render / rows[0]["path"], render / "clips/pitch/stray.flac")
    rows[1]["tier"] = "extreme"
    rows[2]["split"] = "train"
    write_manifest(render, rows)
    err = _fails(render, tmp_path, capsys)
    assert f"clip on disk not in manifest.parquet (interrupted render? re-run it): {render / 'clips/pitch/stray.flac'}" in err
    assert f"unknown vocabulary value: {rows[1]['clip_id']} (tier='extreme')" in err
    assert f"clip_id does not match its columns: {rows[1]['clip_id']}" in err
    assert f"manifest split differs from render.json ('test'): {rows[2]['clip_id']}" in err


def test_missing_render_json_and_manifest(render, tmp_path, capsys):
    (render / "render.json").unlink()
    assert "render.json: missing" in _fails(render, tmp_path, capsys)
    (render / "render.json").write_text(json.dumps({"split": "test", "sample_rate": 48000}))
    (render / "manifest.parquet").unlink()
    assert "manifest.parquet: missing" in _fails(render, tmp_path, capsys)
    assert "no such render directory" in _fails(tmp_path / "nope", tmp_path, capsys)


def test_two_renders_of_one_split(render, tmp_path, capsys):
    err = _fails(render, tmp_path, capsys, str(render))
    assert "a second render with split 'test'" in err


def test_refuses_foreign_output_folder(render, tmp_path, capsys):
    out = tmp_path / "hub"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert run_cli(["hub", str(render), "--out", str(out)]) == 2
    assert "is not a Hub folder" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "mine"


def test_unknown_card_placeholder(render, tmp_path):
    card = tmp_path / "card.md"
    card.write_text("# x\n{{total_clips}} {{no_such_field}}\n")
    with pytest.raises(hub.HubBuildError, match="unknown placeholder.*no_such_field"):
        hub.build_hub(render, tmp_path / "hub", card_template=card, verify_sha256=False)


def test_builder_reports_sha_mismatch(render, tmp_path):
    pytest.importorskip("datasets")
    row, rows_missing = [r for r in read_manifest(render) if r["category"] == "noise"][:2]
    (render / row["path"]).write_bytes(b"not flac")
    b = vocalgrad.VocalGrad(config_name="noise", data_dir=str(render), cache_dir=str(tmp_path / "c"))
    (render / rows_missing["path"]).unlink()
    with pytest.raises(vocalgrad.RenderDirError, match="sha256 differs") as info:
        b.download_and_prepare()
    assert str(render / row["path"]) in str(info.value)
    assert f"missing: {render / rows_missing['path']}" in str(info.value)
