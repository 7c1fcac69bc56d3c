"""generation.builder_steps: the steps the datasets builder vocalgrad.VocalGrad runs on a render folder."""

from __future__ import annotations

import dataclasses

import pytest

import vocalgrad
from generation import builder_steps
from generation.render_dir import RenderDir

from _hub_helpers import make_render_dir, read_manifest, write_manifest


@pytest.fixture
def render(tmp_path):
    return make_render_dir(tmp_path / "render", categories=("pitch", "volume"), seconds=0.02, sample_rate=16000)


def config(name: str, data_dir):
    by_name = {c.name: c for c in vocalgrad.VocalGrad.BUILDER_CONFIGS}
    return dataclasses.replace(by_name[name], data_dir=None if data_dir is None else str(data_dir))


def test_cache_key_follows_the_render(render, tmp_path):
    key = builder_steps.cache_hash(render, "pitch")
    assert key == RenderDir(render).content_hash()
    assert builder_steps.cache_hash(render, vocalgrad.SOURCES_CONFIG) == RenderDir(render).content_hash(with_sources=True)
    rows = read_manifest(render)
    rows[0]["text"] = "changed"
    write_manifest(render, rows)
    assert builder_steps.cache_hash(render, "pitch") != key
    assert builder_steps.cache_hash(None, "pitch") is None
    assert builder_steps.cache_hash(tmp_path, "pitch") is None  # no manifest: the datasets default
    # the builder takes that key unless one is given
    assert vocalgrad.VocalGrad(config_name="pitch", data_dir=str(render), cache_dir=str(tmp_path / "c")).hash == \
        builder_steps.cache_hash(render, "pitch")


def test_rows_examples_and_info_of_a_render(render):
    rows, split = builder_steps.split_rows(config("pitch", render))
    assert split == "test" and len(rows) == vocalgrad.CONDITIONS_PER_CATEGORY
    assert {r["category"] for r in rows} == {"pitch"}
    pairs = list(builder_steps.examples(config("pitch", render), str(render), rows))
    assert [key for key, _ in pairs] == [r["clip_id"] for r in rows]
    rec = pairs[0][1]
    assert list(rec) == ["audio", *vocalgrad.hub_column_types()]
    assert rec["prompt"] == vocalgrad.default_prompt("pitch") and rec["label"] == rec["direction"]
    assert rec["audio"]["bytes"] == (render / rows[0]["path"]).read_bytes()
    assert builder_steps.dataset_info(str(render)).features["audio"].sampling_rate == 16000
    assert builder_steps.dataset_info(None).features["audio"].sampling_rate == 48000


def test_rows_are_refused_with_the_reason(render):
    with pytest.raises(vocalgrad.RenderDirError, match="needs data_dir"):
        builder_steps.split_rows(config("pitch", None))
    with pytest.raises(vocalgrad.RenderDirError, match="split is 'test' but config 'train'"):
        builder_steps.split_rows(config("train", render))
    rows, _ = builder_steps.split_rows(config("pitch", render))
    (render / rows[0]["path"]).unlink()
    with pytest.raises(vocalgrad.RenderDirError, match=r"1 clip\(s\) missing"):
        builder_steps.split_rows(config("pitch", render))
