"""`vocalgrad hub`: folder layout, card header, parquet schema, loading every config, determinism."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import soundfile as sf
import yaml

import vocalgrad
from generation import hub
from vocalgrad_commands import cli

from _hub_helpers import make_render_dir, read_manifest, real_render, run_cli

datasets = pytest.importorskip("datasets")


def _header(hub_dir: Path) -> dict:
    text = (hub_dir / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text[4:].split("\n---\n", 1)[0])


def _config_split(header: dict, name: str) -> str:
    cfg = next(c for c in header["configs"] if c["config_name"] == name)
    return cfg["data_files"][0]["split"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A real complete test render (tones, 1 source, 9 categories: 216 clips) and its Hub folder
    (built with the defaults: the render has its sources/ folder, so the `sources` config is in)."""
    root = tmp_path_factory.mktemp("hub")
    render = real_render(tmp_path_factory)
    out = root / "hub"
    assert run_cli(["hub", str(render), "--out", str(out)]) == 0
    return render, out, root


def test_commands_registered():
    assert "generation.hub_cli" in cli.COMMAND_MODULES and "generation.publish" in cli.COMMAND_MODULES


def test_folder_layout(built):
    _, out, _ = built
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                   if p.is_file() and not p.name.startswith(".vocalgrad."))  # the hidden marker and lock aside
    assert json.loads((out / ".vocalgrad.json").read_text())["kind"] == "hub"
    expected = ["README.md", "build.json"] + [f"{c}/test-00000-of-00001.parquet" for c in vocalgrad.CATEGORY_NAMES]
    assert files == sorted(expected + ["sources/test-00000-of-00001.parquet"])
    assert not list(out.rglob("*.py"))


def test_card_header(built):
    render, out, _ = built
    header = _header(out)
    rows = read_manifest(render)
    assert header["license"] == "unknown"  # tones name no licence (a VCTK build: tests/test_card.py)
    assert header["pretty_name"] == "VocalGrad"
    assert header["language"] == ["en"] and header["size_categories"] == ["n<1K"]
    assert "audio-classification" in header["task_categories"] and header["tags"]
    names = [c["config_name"] for c in header["configs"]]
    assert names == list(vocalgrad.CATEGORY_NAMES) + ["all", "sources"]
    defaults = [c["config_name"] for c in header["configs"] if c.get("default")]
    assert defaults == ["all"]
    all_cfg = header["configs"][names.index("all")]
    assert all_cfg["data_files"] == [{"split": "test", "path": [f"{c}/test-*.parquet" for c in vocalgrad.CATEGORY_NAMES]}]
    infos = {d["config_name"]: d for d in header["dataset_info"]}
    assert set(infos) == set(names)
    for cat in vocalgrad.CATEGORY_NAMES:
        assert infos[cat]["splits"][0]["num_examples"] == sum(r["category"] == cat for r in rows) == 24
    assert infos["all"]["splits"][0]["num_examples"] == len(rows) == 216
    assert infos["sources"]["splits"][0]["num_examples"] == 1
    assert header["configs"][-1]["data_files"] == [{"split": "test", "path": ["sources/test-*.parquet"]}]
    assert infos["pitch"]["features"][0] == {"name": "audio", "dtype": {"audio": {"sampling_rate": 48000}}}
    assert infos["pitch"]["download_size"] == (out / "pitch/test-00000-of-00001.parquet").stat().st_size


def test_card_body_is_filled(built):
    _, out, _ = built
    text = (out / "README.md").read_text(encoding="utf-8")
    assert "{{" not in text and "}}" not in text
    assert "216 test clips from 1 source utterances" in text
    assert "| `clarity` | voice clarity | clearer (wider band) |" in text
    assert "| Human | 95.3 |" not in text  # not the paper's data: no paper table (tests/test_card.py)
    assert "Does the voice pitch increase or decrease over time?" in text
    assert "vocalgrad-eval" in text and "@inproceedings" in text
    assert "| `pitch` | test | 24 | voice pitch |" in text
    assert "| `sources` | test | 1 | unmodified source clips (label `constant`) |" in text


def test_parquet_schema_carries_audio_feature(built):
    _, out, _ = built
    pf = pq.ParquetFile(out / "pitch/test-00000-of-00001.parquet")
    meta = json.loads(pf.schema_arrow.metadata[b"huggingface"])
    feats = datasets.Features.from_dict(meta["info"]["features"])
    assert feats == vocalgrad.features(48000)
    assert isinstance(feats["audio"], datasets.Audio) and feats["audio"].sampling_rate == 48000
    assert pf.schema_arrow.field("audio").type.names == ["bytes", "path"]
    assert pf.schema_arrow.names == ["audio"] + list(vocalgrad.hub_column_types())
    assert pf.metadata.num_row_groups == 1 and pf.metadata.num_rows == 24


def test_row_group_size_option(tmp_path, built):
    render, _, _ = built
    out = tmp_path / "hub"
    hub.build_hub(render, out, row_group_rows=10, verify_sha256=False)
    pf = pq.ParquetFile(out / "pitch/test-00000-of-00001.parquet")
    assert [pf.metadata.row_group(i).num_rows for i in range(pf.metadata.num_row_groups)] == [10, 10, 4]


def test_load_pitch_offline_rows_and_audio(built, tmp_path):
    render, out, _ = built
    ds = datasets.load_dataset(str(out), "pitch", split="test", cache_dir=str(tmp_path / "cache"))
    manifest = [r for r in read_manifest(render) if r["category"] == "pitch"]
    assert ds.num_rows == len(manifest) == 24
    assert list(ds["id"]) == [r["clip_id"] for r in manifest]
    assert ds.column_names == ["audio"] + list(vocalgrad.hub_column_types())
    for row, m in zip(ds.select_columns([c for c in ds.column_names if c != "audio"]), manifest):
        for name, value in m.items():
            if name != "path":
                assert row[vocalgrad.HUB_RENAMES.get(name, name)] == value, name
        assert row["prompt"] == vocalgrad.default_prompt("pitch") and row["label"] == m["direction"]
    for i in (0, 23):
        samples = ds[i]["audio"].get_all_samples()
        ref, sr = sf.read(render / manifest[i]["path"], dtype="float32")
        assert samples.sample_rate == sr == 48000
        np.testing.assert_allclose(samples.data.numpy()[0], ref, atol=1e-6)
    raw = ds.cast_column("audio", datasets.Audio(decode=False))[0]["audio"]
    assert raw["bytes"] == (render / manifest[0]["path"]).read_bytes()
    assert raw["path"] == manifest[0]["clip_id"] + ".flac"


def test_every_config_loads_and_matches_builder(built, tmp_path):
    """Equivalent of `datasets-cli test` for a parquet repo: each config loads, features match."""
    render, out, _ = built
    header = _header(out)
    infos = {d["config_name"]: d for d in header["dataset_info"]}
    for cfg in [c["config_name"] for c in header["configs"]]:
        split = _config_split(header, cfg)
        ds = datasets.load_dataset(str(out), cfg, split=split, cache_dir=str(tmp_path / "cache"),
                                   verification_mode="all_checks")  # checks the card's split sizes too
        assert ds.num_rows == infos[cfg]["splits"][0]["num_examples"], cfg
        assert ds.features == vocalgrad.features(48000), cfg
        builder = vocalgrad.VocalGrad(config_name=cfg, data_dir=str(render), cache_dir=str(tmp_path / "bcache"))
        builder.download_and_prepare()
        ref = builder.as_dataset(split=split)
        assert ref.features == ds.features
        assert sorted(ref["id"]) == sorted(ds["id"]), cfg
        first = ds[0]
        assert first["audio"].get_all_samples().data.shape[-1] == round(first["duration_sec"] * 48000)
    default = datasets.load_dataset(str(out), split="test", cache_dir=str(tmp_path / "cache"))
    assert default.num_rows == 216 and set(default["category"]) == set(vocalgrad.CATEGORY_NAMES)


def test_datasets_cli_test_all_configs(built, tmp_path):
    _, out, _ = built
    proc = subprocess.run(
        [sys.executable, "-m", "datasets.commands.datasets_cli", "test", str(out), "--all_configs",
         "--cache_dir", str(tmp_path / "cli")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Test successful." in proc.stdout + proc.stderr
    assert "Testing builder 'sources' (11/11)" in proc.stdout + proc.stderr


def test_streaming(built):
    render, out, _ = built
    ds = datasets.load_dataset(str(out), "volume", split="test", streaming=True)
    rows = list(ds)
    assert [r["id"] for r in rows] == [r["clip_id"] for r in read_manifest(render) if r["category"] == "volume"]
    assert rows[0]["audio"].get_all_samples().data.shape == (1, round(rows[0]["duration_sec"] * 48000))
    assert ds.features == vocalgrad.features(48000)


def test_rerun_is_byte_identical(built, tmp_path):
    render, out, _ = built
    again = tmp_path / "hub2"
    assert run_cli(["hub", str(render), "--out", str(again)]) == 0
    for path in out.rglob("*"):
        if path.is_file() and not path.name.startswith(".vocalgrad."):  # the marker records when it was made
            assert (again / path.relative_to(out)).read_bytes() == path.read_bytes(), path
    # Rebuilding into an existing Hub folder replaces it in place, with the same bytes (the marker too).
    before = {p: p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert run_cli(["hub", str(render), "--out", str(again)]) == 0
    assert {p: p.read_bytes() for p in again.rglob("*") if p.is_file()} == before


def test_sharding(built, tmp_path):
    render, _, _ = built
    out = tmp_path / "hub"
    sizes = [(render / r["path"]).stat().st_size for r in read_manifest(render) if r["category"] == "pitch"]
    summary = hub.build_hub(render, out, max_shard_bytes=sum(sizes) // 3 + 1, verify_sha256=False)
    shards = sorted(p.name for p in (out / "pitch").iterdir())
    assert len(shards) >= 3 and shards[0] == f"test-00000-of-{len(shards):05d}.parquet"
    assert shards[-1] == f"test-{len(shards) - 1:05d}-of-{len(shards):05d}.parquet"
    ds = datasets.load_dataset(str(out), "pitch", split="test", cache_dir=str(tmp_path / "cache"))
    assert list(ds["id"]) == sorted(ds["id"]) and ds.num_rows == 24 == summary["configs"]["pitch"]["rows"]


def test_beep_and_train_configs(built, tmp_path, tmp_path_factory):
    test, _, _ = built
    beep = real_render(tmp_path_factory, split="beep")  # pitch, volume, noise, vibration on tones
    train = real_render(tmp_path_factory, split="train", categories=("volume",))
    out = tmp_path / "hub"
    assert run_cli(["hub", str(train), str(test), str(beep), "--out", str(out)]) == 2  # train is partial
    assert run_cli(["hub", str(train), str(test), str(beep), "--out", str(out), "--allow-partial"]) == 0
    header = _header(out)
    names = [c["config_name"] for c in header["configs"]]
    assert names == list(vocalgrad.CATEGORY_NAMES) + ["all", "beep", "train", "sources"]
    assert _config_split(header, "beep") == "test" and _config_split(header, "train") == "train"
    assert (out / "beep/test-00000-of-00001.parquet").is_file()
    assert (out / "train/train-00000-of-00001.parquet").is_file()
    text = (out / "README.md").read_text()
    assert "**Partial build:** render: 192 condition(s) missing." in text  # train: 8 of 9 categories absent
    cache = str(tmp_path / "cache")
    b = datasets.load_dataset(str(out), "beep", split="test", cache_dir=cache)
    assert b.num_rows == len(read_manifest(beep)) and set(b["split"]) == {"beep"}
    assert set(b["category"]) == set(vocalgrad.BEEP_CATEGORIES)
    t = datasets.load_dataset(str(out), "train", split="train", cache_dir=cache)
    assert t.num_rows == 24 and set(t["split"]) == {"train"} and set(t["category"]) == {"volume"}
    a = datasets.load_dataset(str(out), "all", split="test", cache_dir=cache)
    assert a.num_rows == 216  # beep/train shards are not part of `all`
    bb = vocalgrad.VocalGrad(config_name="beep", data_dir=str(beep), cache_dir=str(tmp_path / "bc"))
    bb.download_and_prepare()
    assert sorted(bb.as_dataset(split="test")["id"]) == sorted(b["id"])


def test_builder_from_render_dir(built, tmp_path):
    render, _, _ = built
    b = vocalgrad.VocalGrad(config_name="pitch", data_dir=str(render), cache_dir=str(tmp_path / "c"))
    b.download_and_prepare()
    ds = b.as_dataset(split="test")
    assert ds.num_rows == 24 and set(ds["category"]) == {"pitch"}
    assert ds.features == vocalgrad.features(48000)
    assert b.info.license == "cc-by-4.0"
    with pytest.raises(vocalgrad.RenderDirError, match="split is 'test' but config 'train'"):
        vocalgrad.VocalGrad(config_name="train", data_dir=str(render),
                            cache_dir=str(tmp_path / "c")).download_and_prepare()
    with pytest.raises(vocalgrad.RenderDirError, match="needs data_dir"):
        vocalgrad.VocalGrad(config_name="pitch", cache_dir=str(tmp_path / "c")).download_and_prepare()


def test_builder_configs():
    names = [c.name for c in vocalgrad.VocalGrad.BUILDER_CONFIGS]
    assert names == list(vocalgrad.CATEGORY_NAMES) + ["all", "beep", "train", "sources"]
    assert vocalgrad.VocalGrad.DEFAULT_CONFIG_NAME == "all"
    by_name = {c.name: c for c in vocalgrad.VocalGrad.BUILDER_CONFIGS}
    assert by_name["beep"].categories == vocalgrad.BEEP_CATEGORIES and by_name["train"].hub_split == "train"
    assert isinstance(by_name["pitch"], vocalgrad.VocalGradConfig)
    assert by_name["sources"].categories == () and by_name["sources"].render_split == "test"
    assert "unmodified source clips" in by_name["sources"].description


def test_import_vocalgrad_stays_light():
    code = ("import sys, vocalgrad; vocalgrad.hub_column_types(); "
            "bad = [m for m in ('datasets', 'pyarrow', 'numpy', 'huggingface_hub') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(vocalgrad.__file__).parent)


def test_hub_record_maps_every_manifest_column(built):
    render, _, _ = built
    row = read_manifest(render)[0]
    rec = vocalgrad.hub_record(row, b"FLAC")
    assert list(rec) == ["audio"] + list(vocalgrad.hub_column_types())
    assert rec["audio"] == {"bytes": b"FLAC", "path": row["clip_id"] + ".flac"}
    assert rec["id"] == row["clip_id"] and rec["unit"] == row["value_unit"]
    hub_names = set(rec)
    for name in vocalgrad.MANIFEST_COLUMN_NAMES:
        if name != "path":
            assert vocalgrad.HUB_RENAMES.get(name, name) in hub_names
    assert sf.read(io.BytesIO((render / row["path"]).read_bytes()))[1] == 48000


def test_sample_rate_follows_the_render(tmp_path):
    render = make_render_dir(tmp_path / "render", categories=("volume",), seconds=0.05, sample_rate=16000)
    out = tmp_path / "hub"
    hub.build_hub(render, out, allow_partial=True)
    infos = {d["config_name"]: d for d in _header(out)["dataset_info"]}
    assert infos["volume"]["features"][0]["dtype"] == {"audio": {"sampling_rate": 16000}}
    ds = datasets.load_dataset(str(out), "volume", split="test", cache_dir=str(tmp_path / "c"))
    assert ds.features["audio"].sampling_rate == 16000
    assert ds[0]["audio"].get_all_samples().sample_rate == 16000
    b = vocalgrad.VocalGrad(config_name="volume", data_dir=str(render), cache_dir=str(tmp_path / "b"))
    assert b.info.features["audio"].sampling_rate == 16000
    assert "VocalGrad" in dir(vocalgrad)
