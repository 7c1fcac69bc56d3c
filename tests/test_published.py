"""The authors' published AudioFolder layout: detection, ids, reading, and lm-eval on it."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest

import vocalgrad
from _harness_helpers import offline_lm_eval
from _hub_helpers import real_render
from _published_helpers import make_published_copy, read_copy_rows

from generation import published
from generation.published import PublishedLayoutError
from generation.render_dir import RenderDir
from harness_tasks import utils

CATS = ("volume", "pitch", "noise")


@pytest.fixture(scope="module")
def render_dir(tmp_path_factory):
    return real_render(tmp_path_factory, categories=CATS)


@pytest.fixture(scope="module")
def hub(render_dir, tmp_path_factory):
    from generation.hub import build_hub

    out = tmp_path_factory.mktemp("ourhub") / "hub"
    build_hub(render_dir, out, allow_partial=True, sources=False)
    return out


@pytest.fixture(scope="module")
def copy(render_dir, tmp_path_factory):
    return make_published_copy(render_dir, tmp_path_factory.mktemp("published") / "vocalgrad")


def test_clip_ids_map_both_ways():
    bid = "p226_01__p226_106__quad_first_flat__mid__down"
    cid = published.to_clip_id(bid, "voice_pitch")
    assert cid == "p226_01__pitch__quad_first_flat__medium__decrease"
    assert published.to_clip_id(bid, "pitch") == cid
    assert published.to_benchmark_clip_id(cid, source_clip_id="p226_106") == bid
    # without a corpus clip the source id stands for both (benchmark.md §4a)
    assert published.to_benchmark_clip_id("x_01__echo__jump__high__increase") == "x_01__x_01__jump__high__up"
    # the corpus clip of a VCTK render is its sentence id
    row = {"id": cid, "source_id": "p226_01", "speaker_id": "p226", "sentence_id": "p226_106"}
    assert published.benchmark_clip_id_of(row) == bid
    # ids whose parts hold "__" need the row's source clip
    odd = "a__b__c__linear__low__up"
    with pytest.raises(ValueError, match="source_clip_id"):
        published.parse_benchmark_clip_id(odd)
    assert published.parse_benchmark_clip_id(odd, source_clip_id="b__c")["source_id"] == "a"
    for bad in ("p226_01__p226_106__linear__medium__up", "p226_01__linear__mid__up", "x__y__spiral__low__up"):
        with pytest.raises(ValueError, match="not a published|cannot tell"):
            published.parse_benchmark_clip_id(bad)


def test_layout_is_detected_in_one_place(copy, hub, render_dir):
    assert published.is_published(copy) and published.is_published(str(copy))
    assert not published.is_published(hub) and not published.is_published(render_dir)
    assert published.card_is_published((copy / "README.md").read_text())
    assert not published.card_is_published((hub / "README.md").read_text())
    assert not published.card_is_published("no header")
    # offline, an unknown repo id is not detected (and is then read as a vocalgrad hub repo)
    assert not published.is_published("nobody/nothing")


def test_rows_map_their_columns_to_ours(copy, render_dir):
    theirs = {r["benchmark_clip_id"] + r["category"]: r for r in read_copy_rows(copy)}
    rows = published.load_published_rows(copy)
    assert len(rows) == len(theirs) == 24 * len(CATS)
    manifest = {r["clip_id"]: r for r in RenderDir(render_dir).rows()}
    assert [r["id"] for r in rows] == sorted(manifest)  # our ids: the same clips, the same names
    for r in rows:
        t = theirs[r["benchmark_clip_id"] + vocalgrad.category(r["category"]).id]
        m = manifest[r["id"]]
        assert (r["category"], r["direction"], r["tier"], r["trajectory"], r["source_id"]) == (
            m["category"], m["direction"], m["tier"], m["trajectory"], m["source_id"])
        assert r["label"] == t["label"] == m["direction"]
        assert r["prompt"] == vocalgrad.default_prompt(r["category"]) != t["prompt"]
        assert t["prompt"] == published.published_prompt(r["category"])
        assert Path(r["audio"]["path"]).name == t["file_name"].split("/")[-1]
    got = dict(published.iter_file_bytes(rows, ids=[rows[0]["id"], "nope"]))
    assert got == {rows[0]["id"]: Path(rows[0]["audio"]["path"]).read_bytes(), "nope": None}
    assert published.load_published_rows(copy, categories=["voice_pitch"]) == [
        r for r in rows if r["category"] == "pitch"]


def test_datasets_path_and_streaming_give_the_same_rows(copy):
    """The Hub-id path (``datasets``' AudioFolder reading of the card) equals the local reader."""
    local = published.load_published(copy, categories=["pitch"])
    feats = published.published_features(None, decode=False)
    via_ds = published._load_with_datasets(str(copy), feats, categories=["pitch"], split="test", streaming=False)
    streamed = list(published._load_with_datasets(str(copy), feats, categories=["pitch"], split="test",
                                                   streaming=True))
    key = lambda r: r["id"]  # noqa: E731
    meta = lambda rows: sorted(({k: v for k, v in r.items() if k != "audio"} for r in rows), key=key)  # noqa: E731
    assert meta(local) == meta(via_ds) == meta(streamed) == meta(published.load_published(
        copy, categories=["pitch"], streaming=True))
    assert len(local) == 24 and {r["sentence_id"] for r in via_ds} == {"00"}  # strings stay strings


def test_bad_copies_fail_with_the_row_and_field(copy, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(copy, broken)
    text = (broken / "metadata.csv").read_text().splitlines()
    text[3] = text[3].replace(",increase,up,", ",decrease,up,").replace(",decrease,down,", ",increase,down,")
    (broken / "metadata.csv").write_text("\n".join(text) + "\n")
    with pytest.raises(PublishedLayoutError, match=r"metadata.csv:4: clip .*label="):
        published.load_published_rows(broken)
    missing = tmp_path / "missing"
    shutil.copytree(copy, missing)
    victim = sorted((missing / "audio").iterdir())[0]
    victim.unlink()
    with pytest.raises(PublishedLayoutError, match="1 audio file"):
        published.load_published_rows(missing)
    with pytest.raises(FileNotFoundError, match="only the test split|no config 'train'"):
        utils.load_split("train", split="train", source=str(copy))


def _eval(tmp_path, dataset, name, monkeypatch):
    from harness_tasks.cli import main

    monkeypatch.setenv(utils.DATASET_ENV, str(dataset))
    out = tmp_path / name
    tasks = ",".join(f"vocalgrad_{c}" for c in CATS)
    assert main(["--model", "vocalgrad-oracle", "--tasks", tasks, "--output_path", str(out), "--log_samples"]) == 0
    (res,) = out.rglob("results_*.json")
    answers = {}
    for f in out.rglob("samples_*.jsonl"):
        for line in f.read_text().splitlines():
            s = json.loads(line)
            answers[s["doc"]["id"]] = (s["filtered_resps"][0], s["doc"]["label"])
    return json.loads(res.read_text())["results"], answers


def test_oracle_scores_the_published_copy_like_our_hub_folder(copy, hub, tmp_path, monkeypatch):
    offline_lm_eval(monkeypatch)
    ours, ours_answers = _eval(tmp_path, hub, "hub", monkeypatch)
    theirs, their_answers = _eval(tmp_path, copy, "published", monkeypatch)
    for c in CATS:
        assert theirs[f"vocalgrad_{c}"]["acc,none"] == ours[f"vocalgrad_{c}"]["acc,none"], c
    assert their_answers == ours_answers and len(ours_answers) == 24 * len(CATS)
    assert ours["vocalgrad_volume"]["acc,none"] == 1.0  # the oracle hears the tones' volume ramps


def test_from_published_round_trips_to_a_hub_folder(copy, tmp_path, capsys):
    import datasets
    import numpy as np
    import pyarrow.parquet as pq
    import soundfile as sf
    from _hub_helpers import run_cli

    out = tmp_path / "hub"
    assert run_cli(["hub", "--from-published", str(copy), "--out", str(out)]) == 0
    assert "all" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".vocalgrad.")) == sorted([*CATS, "README.md"])
    theirs = {(r["category"], r["benchmark_clip_id"]): r for r in published.read_metadata(copy)}
    seen = 0
    for cat in CATS:
        (shard,) = sorted((out / cat).glob("test-*.parquet"))
        for row in pq.read_table(shard).to_pylist():
            t = theirs[(vocalgrad.category(cat).id, row["benchmark_clip_id"])]
            assert published.published_row(row) == t  # every published column survives, their id too
            assert row["id"] == published.to_clip_id(row["benchmark_clip_id"], cat)
            wav, sr = sf.read(copy / t["file_name"], dtype="int16")
            flac, sr2 = sf.read(io.BytesIO(row["audio"]["bytes"]), dtype="int16")
            assert sr == sr2 == row["sample_rate"] and np.array_equal(wav, flac)
            assert row["sha256"] == hashlib.sha256((copy / t["file_name"]).read_bytes()).hexdigest()
            seen += 1
    assert seen == len(theirs)
    # the converted folder offers the per-category configs and `all`, and is read like any Hub folder
    pitch = datasets.load_dataset(str(out), "pitch", split="test")
    assert len(pitch) == 24 and set(pitch["category"]) == {"pitch"}
    assert len(datasets.load_dataset(str(out), split="test")) == len(theirs)
    assert not published.is_published(out)
    card = (out / "README.md").read_text()
    assert "Converted from the authors' release" in card and str(copy.parent) not in card
    # a second run replaces it; a foreign folder is refused; render folders and --from-published exclude each other
    assert run_cli(["hub", "--from-published", str(copy), "--out", str(out)]) == 0
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "x.txt").write_text("x")
    assert run_cli(["hub", "--from-published", str(copy), "--out", str(foreign)]) == 2
    assert run_cli(["hub", "--from-published", str(copy), "--out", str(copy / "hub")]) == 2
    assert "outside the published copy" in capsys.readouterr().err
    assert run_cli(["hub", "--from-published", str(tmp_path), "--out", str(tmp_path / "h2")]) == 2
    assert "not a published VocalGrad copy" in capsys.readouterr().err


def test_listen_show_probe_and_builder_read_the_copy(copy, render_dir, tmp_path):
    import datasets
    import numpy as np
    import soundfile as sf

    from analysis.listen.catalog import open_catalog
    from analysis.probe.data import load_clips
    from analysis.show import show_clip

    cat = open_catalog(copy)
    ours = open_catalog(render_dir)
    assert cat.kind == "published" and list(cat.clips) == list(ours.clips)
    cid = next(iter(cat.clips))
    a = sf.read(io.BytesIO(cat.audio_bytes(cid)), dtype="int16")[0]  # FLAC, as the listening page expects
    b = sf.read(io.BytesIO(ours.audio_bytes(cid)), dtype="int16")[0]
    assert cat.audio_bytes(cid)[:4] == b"fLaC" and np.array_equal(a, b)
    assert cat.clips[cid].direction == ours.clips[cid].direction and cat.source_path("x") is None
    assert len(open_catalog(copy, config="pitch")) == 24
    png = show_clip(cid, copy, tmp_path / "clip.png")
    assert png.read_bytes()[:4] == b"\x89PNG"

    clips = load_clips(str(copy), "test", "pitch")
    mine = load_clips(str(copy), "test", "voice_pitch")
    assert clips.ids == mine.ids == sorted(c for c in ours.clips if "__pitch__" in c)
    assert clips.labels.tolist() == [int(ours.clips[c].direction == "increase") for c in clips.ids]
    y, sr = clips.audio(0)
    assert sr == 48000 and len(y) > 0
    with pytest.raises(FileNotFoundError, match="train"):
        load_clips(str(copy), "train", "pitch")

    builder = vocalgrad.VocalGrad(config_name="pitch", data_dir=str(copy), cache_dir=str(tmp_path / "bc"))
    builder.download_and_prepare()
    ds = builder.as_dataset(split="test").cast_column("audio", datasets.Audio(decode=False))
    rows = {r["id"]: r for r in published.load_published_rows(copy, categories=["pitch"])}
    assert sorted(ds["id"]) == sorted(rows)
    assert set(ds["benchmark_clip_id"]) == {r["benchmark_clip_id"] for r in rows.values()}
    assert ds[0]["audio"]["bytes"][:4] == b"fLaC"
    with pytest.raises(vocalgrad.RenderDirError, match="test set only"):
        vocalgrad.VocalGrad(config_name="train", data_dir=str(copy),
                            cache_dir=str(tmp_path / "bc2")).download_and_prepare()


def test_a_repo_id_with_the_authors_card_is_read_through_datasets(copy, monkeypatch):
    """The Hub-id path end to end, with the Hub replaced by the local replica (offline)."""
    import datasets

    card = (copy / "README.md").read_text()
    monkeypatch.setattr(published, "_hub_card", lambda repo: card if repo == "someone/vocalgrad" else None)
    real = datasets.load_dataset
    asked = []

    def fake_load(path, *args, **kw):
        asked.append((path, kw.get("streaming")))
        return real(str(copy) if path == "someone/vocalgrad" else path, *args, **kw)

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    assert published.is_published("someone/vocalgrad") and not published.is_published("other/vocalgrad")
    ds = utils.load_split("pitch", source="someone/vocalgrad")
    assert asked == [("someone/vocalgrad", False)]
    local = {r["id"]: r for r in published.load_published_rows(copy, categories=["pitch"])}
    assert sorted(ds["id"]) == sorted(local)
    row = ds[0]
    assert {k: v for k, v in row.items() if k != "audio"} == {k: v for k, v in local[row["id"]].items() if k != "audio"}
    streamed = published.load_published("someone/vocalgrad", categories=["volume"], streaming=True)
    assert asked[-1] == ("someone/vocalgrad", True) and sum(1 for _ in streamed) == 24
    with pytest.raises(PublishedLayoutError, match="cannot fetch"):
        published.local_copy("nobody/nothing")  # offline


def test_verify_against_the_published_layout(render_dir, copy):
    """`vocalgrad verify BUILD --against PUBLISHED`: the release is read by the one reader; the
    same clips (WAV there, FLAC here) compare sample-exact per category."""
    from generation.verify import load_side, verify

    side = load_side(copy)
    assert side.kind == "published" and all(r["sha256"] is None for r in side.rows)
    res = verify(render_dir, against=copy, write_record=False)
    n = {c: sum(r["category"] == c for r in side.rows) for c in CATS}
    assert set(res.against) == set(CATS)
    assert all(res.against[c]["exact"] == n[c] > 0 for c in CATS), res.summary()
