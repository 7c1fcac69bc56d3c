"""The `sources` config of unmodified source clips (`vocalgrad hub`, default when the render has
its sources/ folder; the `VocalGrad` builder), and the ternary task reading it from a Hub folder."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import soundfile as sf
import yaml

import vocalgrad
from _hub_helpers import make_render_dir, run_cli
from generation import hub

datasets = pytest.importorskip("datasets")

N_SOURCES = 2


def _with_sources(root):
    (root / "sources").mkdir()
    for i in range(N_SOURCES):
        t = np.arange(24000) / 48000
        y = 0.2 * np.sin(2 * np.pi * (200 + 50 * i) * t)
        sf.write(root / "sources" / f"tone{i:02d}.flac", y, 48000, subtype="PCM_16")
    return root


@pytest.fixture(scope="module")
def render(tmp_path_factory):
    return _with_sources(make_render_dir(tmp_path_factory.mktemp("r") / "render", n_sources=N_SOURCES))


@pytest.fixture(scope="module")
def built(render, tmp_path_factory):
    out = tmp_path_factory.mktemp("h") / "hub"
    assert run_cli(["hub", str(render), "--out", str(out), "--sources"]) == 0
    return out


def test_sources_config_rows_and_card(built, render, tmp_path):
    text = (built / "README.md").read_text()
    header = yaml.safe_load(text[4:].split("\n---\n", 1)[0])
    cfg = next(c for c in header["configs"] if c["config_name"] == "sources")
    assert cfg["data_files"] == [{"split": "test", "path": ["sources/test-*.parquet"]}]
    assert "unmodified source clips" in text
    ds = datasets.load_dataset(str(built), "sources", split="test", cache_dir=str(tmp_path / "c"))
    ds = ds.cast_column("audio", datasets.Audio(decode=False))
    assert ds.num_rows == N_SOURCES and ds["id"] == [f"tone{i:02d}__source" for i in range(N_SOURCES)]
    assert set(ds["direction"]) == set(ds["label"]) == {vocalgrad.CONSTANT}
    assert set(ds["category"]) == {""} and ds["value_start"] == [None] * N_SOURCES
    for row in ds:
        data = (render / "sources" / f"{row['source_id']}.flac").read_bytes()
        assert row["audio"]["bytes"] == data and row["sha256"] == hashlib.sha256(data).hexdigest()
        assert row["duration_sec"] == pytest.approx(0.5) and row["sample_rate"] == 48000
    expected = vocalgrad.features(48000)
    assert list(ds.features) == list(expected)
    assert all(ds.features[k] == expected[k] for k in expected if k != "audio")


def test_sources_by_default_and_no_sources(render, built, tmp_path):
    out = tmp_path / "default"
    summary = hub.build_hub(render, out)  # the render has its sources/ folder: config added
    assert summary["configs"]["sources"]["rows"] == N_SOURCES
    for name in ("README.md", "sources/test-00000-of-00001.parquet"):
        assert (out / name).read_bytes() == (built / name).read_bytes(), name  # same as --sources
    plain = tmp_path / "plain"
    assert run_cli(["hub", str(render), "--out", str(plain), "--no-sources"]) == 0
    header = yaml.safe_load((plain / "README.md").read_text()[4:].split("\n---\n", 1)[0])
    assert not (plain / "sources").exists()
    assert "sources" not in [c["config_name"] for c in header["configs"]]
    assert "sources" not in [c["config_name"] for c in header["dataset_info"]]


def test_sources_checked(render, tmp_path, capsys):
    bare = make_render_dir(tmp_path / "bare", categories=("pitch",), n_sources=2)  # no sources/ folder
    assert "sources" not in hub.build_hub(bare, tmp_path / "h1", allow_partial=True)["configs"]
    with pytest.raises(hub.HubBuildError, match=r"source clip missing.*tone00\.flac"):
        hub.build_hub(bare, tmp_path / "h2", allow_partial=True, sources=True)
    (bare / "sources").mkdir()  # folder present, files missing: an error by default too
    sf.write(bare / "sources" / "tone01.flac", np.zeros(4800), 48000, subtype="PCM_16")
    assert run_cli(["hub", str(bare), "--out", str(tmp_path / "h3"), "--allow-partial"]) == 2
    err = capsys.readouterr().err
    assert "tone00.flac" in err and "tone01.flac" not in err and "--no-sources" in err
    assert run_cli(["hub", str(bare), "--out", str(tmp_path / "h3"), "--allow-partial", "--no-sources"]) == 0
    beep = make_render_dir(tmp_path / "beep", split="beep", categories=vocalgrad.BEEP_CATEGORIES)
    with pytest.raises(hub.HubBuildError, match="needs the test render"):
        hub.build_hub(beep, tmp_path / "h4", sources=True)
    assert "sources" not in hub.build_hub(beep, tmp_path / "h5")["configs"]


def test_builder_sources_config(render, built, tmp_path):
    b = vocalgrad.VocalGrad(config_name="sources", data_dir=str(render), cache_dir=str(tmp_path / "b"))
    b.download_and_prepare()
    ref = b.as_dataset(split="test").cast_column("audio", datasets.Audio(decode=False))
    ds = datasets.load_dataset(str(built), "sources", split="test", cache_dir=str(tmp_path / "c"))
    ds = ds.cast_column("audio", datasets.Audio(decode=False))
    assert ref.features == ds.features == vocalgrad.features(48000).copy() | {"audio": datasets.Audio(decode=False)}
    assert ref.to_list() == ds.to_list()  # every column, audio bytes included
    broken = make_render_dir(tmp_path / "broken", categories=("pitch",), n_sources=1)
    with pytest.raises(vocalgrad.RenderDirError, match=r"sources/<source_id>\.flac.*\n.*tone00\.flac"):
        vocalgrad.VocalGrad(config_name="sources", data_dir=str(broken),
                            cache_dir=str(tmp_path / "b2")).download_and_prepare()


def test_ternary_task_on_the_built_folder(built, monkeypatch):
    import lm_eval
    import lm_eval.evaluator
    from lm_eval.tasks import TaskManager

    import harness_tasks
    from harness_tasks.models.baselines import ConstantLM

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(lm_eval.evaluator, "add_env_info", lambda results: None)
    tm = TaskManager(include_path=harness_tasks.TASK_DIR, include_defaults=False,
                     metadata={"vocalgrad_dataset": str(built)})
    res = lm_eval.simple_evaluate(model=ConstantLM(direction="constant"), tasks=["vocalgrad_ternary_echo"],
                                  task_manager=tm, bootstrap_iters=0)
    t = res["results"]["vocalgrad_ternary_echo"]
    n_clips = N_SOURCES * vocalgrad.CONDITIONS_PER_CATEGORY
    assert t["acc,none"] == pytest.approx(N_SOURCES / (n_clips + N_SOURCES))
    assert t["pred_constant,none"] == 1.0
    # F1(constant) = 2*2 / (2 + 50); increase/decrease 0
    assert t["macro_f1,none"] == pytest.approx(2 * N_SOURCES / (N_SOURCES + n_clips + N_SOURCES) / 3)
