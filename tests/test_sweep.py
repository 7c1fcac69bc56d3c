"""Magnitude sweeps end to end: declarations, ``render --sweep`` (tier points byte-identical to the
paper set), Hub configs, the ``vocalgrad_sweep`` tasks scored by the baselines, a scripted listener's
sweep study, and the report's threshold table (docs/sweep.md).

One module-scoped pipeline on 2 demo voices x (volume, noise), trajectories linear and jump: the
evaluation runs the oracle and a seeded coin in one ``vocalgrad-eval`` process.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vocalgrad
from generation import attributes
from generation.attributes.sweep import level_token, token_magnitude
from generation.sweep_plan import sweep_levels

ROOT = Path(__file__).resolve().parents[1]
CATS = ("volume", "noise")
TRAJS = ("linear", "jump")


# ---- declarations ---------------------------------------------------------------------------
def test_every_attribute_declares_a_sweep_with_the_tiers_as_points():
    for name, attr in attributes.installed().items():
        levels = sweep_levels(name)
        assert levels[0].magnitude == 0 and levels[0].start == levels[0].end, name  # the zero-change control
        assert 8 <= len(levels) <= 10, (name, len(levels))
        mags = [lv.magnitude for lv in levels]
        assert mags == sorted(mags) and len(set(mags)) == len(mags)
        tiers = {lv.tier: lv for lv in levels if lv.tier}
        assert set(tiers) == set(vocalgrad.TIERS), name
        for t, lv in tiers.items():
            assert (lv.start, lv.end) == tuple(attr.tiers[t])  # the tier's own pair, exactly
        assert any(0 < m < tiers["low"].magnitude for m in mags) and mags[-1] > tiers["high"].magnitude, name
        assert all(token_magnitude(lv.token) == pytest.approx(lv.magnitude, rel=1e-3) for lv in levels)


def test_level_tokens_carry_the_magnitude():
    assert level_token(1.5) == "m1p5" and level_token(0.0) == "m0" and level_token(36.0) == "m36"
    assert token_magnitude("m0p005") == 0.005 and token_magnitude("low") is None


def test_the_sweep_task_group_reads_the_sweep_configs_with_the_paper_template():
    from harness_tasks import TASK_DIR
    from harness_tasks.sweep_tasks import sweep_files

    files = sweep_files(("pitch", "brightness"))
    assert sorted(files) == ["_vocalgrad_sweep.yaml", "vocalgrad_sweep_brightness.yaml", "vocalgrad_sweep_pitch.yaml"]
    text = files["vocalgrad_sweep_pitch.yaml"]
    assert "dataset_name: sweep_pitch\n" in text and "  vocalgrad_config: sweep_pitch\n" in text
    assert "  vocalgrad_category: pitch\n" in text
    assert f"include: {Path(TASK_DIR).as_posix()}/_template_yaml" in text
    assert not list(Path(TASK_DIR).glob("*sweep*"))  # never among the paper's committed tasks


# ---- the pipeline -----------------------------------------------------------------------------
EVAL = """
import sys
from harness_tasks.cli import main
for model in (["--model", "vocalgrad-oracle"], ["--model", "vocalgrad-chance", "--model_args", "seed=1"]):
    rc = main(model + ["--tasks", "vocalgrad_sweep", "--output_path", sys.argv[1], "--log_samples"])
    if rc:
        sys.exit(rc)
"""


def _scripted_listener(render: Path, answers: Path) -> None:
    """A listener who hears volume changes of 18 dB and more and guesses below (seeded per clip)."""
    from analysis.listen import ListenApp, open_catalog

    app = ListenApp(open_catalog(render), "ann1", answers, categories=["volume"])
    while (st := app.state())["item"] is not None:
        clip = app.lookup(st["item"]["token"])[0]
        heard = token_magnitude(clip.tier) >= 18
        coin = hashlib.sha256(clip.clip_id.encode()).digest()[0] % 2
        answer = clip.direction if heard else vocalgrad.DIRECTIONS[coin]
        assert app.answer({"token": st["item"]["token"], "answer": answer, "rt_sec": 1.0, "plays": 1})[0] == 200


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    from analysis.report.command import build_report
    from generation.hub import build_hub
    from generation.render import render

    root = tmp_path_factory.mktemp("sweep")
    paper, sweep, hub = root / "paper", root / "sweep", root / "hub"
    render("demo", paper, categories=["noise", "volume"], n_sources=1, jobs=1, progress=False)
    render("demo", sweep, categories=list(CATS), n_sources=2, jobs=1, progress=False, sweep=True,
           trajectories=list(TRAJS))
    build_hub([sweep], hub)
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               VOCALGRAD_DATASET=str(hub), VOCALGRAD_ANSWER_LOG="none", VOCALGRAD_CACHE=str(root / "cache"))
    proc = subprocess.run([sys.executable, "-c", EVAL, str(root / "results")], env=env, cwd=root,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    _scripted_listener(sweep, root / "answers.jsonl")
    report = build_report([root / "results"], root / "report", draws=20, human=[root / "answers.jsonl"])
    return paper, sweep, hub, report, root / "report"


def _shas(folder: Path) -> dict[str, str]:
    import pyarrow.parquet as pq

    return {r["clip_id"]: r["sha256"] for r in pq.read_table(folder / "manifest.parquet").to_pylist()}


def test_the_paper_tiers_inside_the_sweep_are_byte_identical(pipeline):
    paper, sweep = pipeline[0], pipeline[1]
    ps, ss = _shas(paper), _shas(sweep)
    compared = 0
    for cat in CATS:
        for lv in sweep_levels(cat):
            for traj in TRAJS:
                for d in vocalgrad.DIRECTIONS:
                    sid = next(iter(ps)).split("__")[0]
                    cid = vocalgrad.clip_id(sid, cat, traj, lv.token, d)
                    assert cid in ss, cid  # every level, trajectory and direction rendered
                    if lv.tier:
                        assert ss[cid] == ps[vocalgrad.clip_id(sid, cat, traj, lv.tier, d)], cid
                        assert hashlib.sha256((sweep / "clips" / cat / f"{cid}.flac").read_bytes()).hexdigest() == ss[cid]
                        compared += 1
    assert compared == len(CATS) * 3 * len(TRAJS) * 2


def test_a_sweep_render_verifies_and_knows_its_levels(pipeline):
    from generation.render_dir import RenderDir

    sweep = pipeline[1]
    check = RenderDir(sweep).verify()
    assert check.problems == [] and check.missing == []
    meta = json.loads((sweep / "render.json").read_text())
    assert meta["sweep"]["trajectories"] == list(TRAJS)  # the folder records what it holds
    assert meta["sweep"]["levels"]["noise"] == [lv.token for lv in sweep_levels("noise")]
    assert "--sweep --trajectories linear,jump" in RenderDir(sweep).render_command()
    n_levels = sum(len(sweep_levels(c)) for c in CATS)
    assert len(_shas(sweep)) == 2 * n_levels * len(TRAJS) * 2


def test_the_hub_has_a_config_per_attribute_sweep_and_no_paper_config(pipeline):
    hub = pipeline[2]
    assert sorted(p.name for p in hub.iterdir() if p.is_dir()) == ["sweep_noise", "sweep_volume"]
    card = (hub / "README.md").read_text(encoding="utf-8")
    assert "## Magnitude sweeps (not part of the paper's benchmark)" in card and "config_name: all" not in card


def test_the_report_gives_thresholds_for_the_baselines_and_the_listener(pipeline):
    report, out = pipeline[3], pipeline[4]
    block = report["psychometric"]["attributes"]
    assert set(block) == set(CATS)
    for cat in CATS:
        rows = {o["label"]: o for o in block[cat]["observers"]}
        low = block[cat]["tiers"]["low"]
        oracle = rows["vocalgrad-oracle"]
        assert oracle["reached"] and oracle["threshold"] < low, (cat, oracle)  # the oracle hears below the low tier
        chance = next(o for label, o in rows.items() if "chance" in label)
        assert chance["reached"] is False and chance["threshold"] is None  # a coin: "> largest"
        assert chance["zero"]["n"] == 2 * len(TRAJS) * 2
    human = {o["label"]: o for o in block["volume"]["observers"]}["human"]
    assert human["kind"] == "human" and human["reached"] and 6 <= human["threshold"] <= 18, human
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Psychometric thresholds" in md and "| vocalgrad-oracle (oracle) |" in md and "| human |" in md
    assert f"> {block['volume']['largest']:.3g}" in md  # the coin, said plainly
    assert (out / "plots" / "sweep-volume.png").stat().st_size > 1000
    data = json.loads((out / "report.json").read_text())
    saved = {o["label"]: o for o in data["psychometric"]["attributes"]["noise"]["observers"]}
    assert saved["vocalgrad-oracle"]["threshold"] is not None and saved["vocalgrad-oracle"]["kind"] == "oracle"
    assert not data["models"]  # no paper table: the sweep is not the paper's benchmark
    assert math.isfinite(human["threshold"])
    # the clips' clipping reaches the report from the render's manifest through the Hub and the sample logs
    levels = {r["magnitude"]: r for r in block["volume"]["levels"]}
    assert levels[42.0]["clipped_share"] > 0 and levels[6.0]["clipped_share"] == 0.0 and levels[6.0]["clipped_of"] > 0
    assert levels[42.0]["realised"] < 42.0 and levels[6.0]["fit_magnitude"] == 6.0
    assert "clips that clipped" in block["volume"]["levels_note"] and block["volume"]["levels_note"] in md


def test_the_html_page_shows_the_threshold_tables(pipeline):
    from analysis.report.html_page import write_html

    out = pipeline[4]
    write_html(out, [])
    page = (out / "index.html").read_text(encoding="utf-8")
    assert 'id="thresholds"' in page and "plots/sweep-noise.png" in page


def test_the_page_lists_every_sweep_run_and_plays_clips_near_each_threshold(pipeline, tmp_path):
    """With --data on the sweep's Hub folder: a sortable row per run (and the listener) with each attribute's
    threshold or why none, and clips at the levels around each threshold, with every run's answers."""
    import re

    from analysis.listen.catalog import open_catalog
    from analysis.report.command import build_report
    from analysis.report.html_page import HtmlOptions
    from analysis.report.html_sweep import levels_around
    from generation.sweep_plan import magnitude_of

    _, _, hub, _, first = pipeline
    root = first.parent
    report = build_report([root / "results"], tmp_path / "page", draws=20, human=[root / "answers.jsonl"],
                          html=HtmlOptions(catalog=open_catalog(hub), pictures=False))
    assert report["html"]["clips"] > 0
    page = (tmp_path / "page" / "index.html").read_text(encoding="utf-8")
    table = page[page.index('<table class="sortable sweep-runs">'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', table)
    block = report["psychometric"]["attributes"]
    labels = [o["label"] for o in block["volume"]["observers"]]
    assert sorted(re.sub(r" <span.*", "", r[0]) for r in rows) == sorted(labels) and len(labels) == 3
    for label, cells in rows:
        if "chance" in label:
            assert f"\">&gt; {block['volume']['largest']:.3g} " in cells  # the coin's threshold, said plainly
    listen = page[page.index('id="listen-sweeps"'):page.index('id="missed"')]
    shown = dict.fromkeys(re.findall(r"<code>([^<]+__m[0-9p]+__(?:in|de)crease)</code>", listen))
    assert shown and all((tmp_path / "page" / "clips" / f"{cid}.flac").read_bytes() ==
                         open_catalog(hub).audio_bytes(cid) for cid in shown)
    for cat, e in block.items():
        for o in e["observers"]:
            part = listen[listen.index(f'id="listen-sweep-{cat}"'):]
            part = part[part.index(f"<p><strong>{o['label']}</strong>"):]
            part = re.split(r"<p><strong>|<h4", part[3:])[0]
            clips = re.findall(r"<code>([^<]+)</code>", part)
            want = levels_around(o, e)
            assert want and len(clips) == 2 * len(want), (cat, o["label"], clips)   # both directions per level
            assert sorted({magnitude_of(cat, c.split("__")[3]) for c in clips}) == want
            assert "vocalgrad-oracle</th>" in part   # the answers under each clip
    from _html_helpers import load_page
    from _listen_helpers import chromium

    with chromium(tmp_path, logs=True) as driver:  # the players play in a browser, offline
        seen = load_page(driver, tmp_path / "page" / "index.html")
        assert seen["severe"] == [] and seen["failed"] == [] and seen["remote"] == []
        assert len(seen["media"]) >= len(shown) and all(m["error"] is None and m["duration"] > 0.2
                                                        for m in seen["media"]), seen["media"]
        assert driver.execute_script("return document.querySelectorAll('table.sweep-runs th button.sort').length") \
            == 1 + len(block)


def test_the_levels_around_a_threshold():
    from analysis.report.html_sweep import levels_around

    e = {"magnitudes": [0.0, 6.0, 12.0, 18.0], "largest": 18.0, "smallest": 6.0}
    assert levels_around({"threshold": 9.0}, e) == [6.0, 12.0]
    assert levels_around({"threshold": 12.0}, e) == [12.0]         # on a level: that level alone
    assert levels_around({"threshold": 12.0001}, e) == [12.0, 18.0]
    assert levels_around({"threshold": 6.0}, e) == [6.0]
    assert levels_around({"threshold": 2.0}, e) == [6.0]           # "< 6": the smallest level, never the zero
    assert levels_around({"threshold": 18.0}, e) == [18.0]
    assert levels_around({"threshold": None}, e) == [18.0]         # "> 18": where it still fails
    assert levels_around({"threshold": None, "problem": "no parsed answer"}, e) == []


# ---- levels on the physical scale (issue 35) -----------------------------------------------------
def _clips(source: int, category: str, tokens, trajectory: str = "jump", direction: str = "increase"):
    """The sweep columns of ``tokens``' clips of one demo voice, rendered as ``render --sweep`` does."""
    import numpy as np

    from generation.recipe import load_recipe
    from generation.render_unit import prepare_source, render_clip
    from generation.sources import read_sources
    from generation.span import Span
    from generation.sweep_measures import sweep_columns
    from generation.sweep_plan import sweep_plan
    from generation.warmup import enable_numba_cache

    enable_numba_cache()  # librosa's kernels from the render's on-disk cache, as a render loads them
    rec = load_recipe("faithful-v1")
    item = read_sources("demo")[source]
    x, span = prepare_source(item, rec)
    plan = sweep_plan(rec, category, [trajectory])
    attr = attributes.get(category)
    out, zero = {}, None
    for tok in ("m0", *tokens):
        res, sch = render_clip(x, item, rec, span, category=category, tier=tok, trajectory=trajectory,
                               direction=direction, cat=plan.crec, clip_tier=plan.clip_tier(tok))
        effect = attr.paired(x, span, res.y, res.onset, res.offset, rec.sample_rate, sch, rec.crossfade)
        out[tok] = sweep_columns(attr, plan.level(tok), direction=direction, effect=effect, x=x, span=span,
                                 y=res.y, onset=res.onset, offset=res.offset, sr=rec.sample_rate, schedule=sch,
                                 fade=rec.crossfade, zero=zero)
        out[tok]["y"] = np.asarray(res.y)
        out[tok]["onset"], out[tok]["offset"] = res.onset, res.offset
        if tok == "m0":
            zero = (res.y, Span(res.onset, res.offset))
    return out


def test_distortion_levels_are_declared_by_the_samples_held():
    """The 18 kHz tier holds 3 samples at 48 kHz, as 16 kHz does: it is the level of log2(3) = 1.585 octaves."""
    import math

    from generation.transforms.distortion import hold_samples

    levels = sweep_levels("distortion")
    for lv in levels:  # every level's magnitude is log2 of what the effect holds at its end
        assert lv.magnitude == pytest.approx(math.log2(hold_samples(48000, lv.end)), abs=1e-12), lv
    low = next(lv for lv in levels if lv.tier == "low")
    assert (low.token, low.start, low.end) == ("m1p585", 48000.0, 18000.0)  # the tier's own pair, so its bytes
    assert [lv.token for lv in levels] == ["m0", "m1", "m1p585", "m2", "m2p322", "m2p585", "m3", "m3p585", "m4"]


def test_the_distortion_low_tier_clip_is_the_paper_clip():
    """The renamed level keeps the paper's clip: same tier key, same pair, same samples."""
    import numpy as np

    from generation.recipe import load_recipe
    from generation.render_unit import prepare_source, render_clip
    from generation.sources import read_sources

    rec = load_recipe("faithful-v1")
    item = read_sources("demo")[0]
    x, span = prepare_source(item, rec)
    paper, _ = render_clip(x, item, rec, span, category="distortion", tier="low", trajectory="linear",
                           direction="decrease")
    swept = _clips(0, "distortion", ["m1p585"], trajectory="linear", direction="decrease")["m1p585"]
    assert np.array_equal(paper.y, swept["y"])
    assert swept["magnitude"] == pytest.approx(1.585, abs=1e-3) and swept["magnitude_unit"] == "octaves"


def test_clarity_levels_above_a_band_limit_are_null_per_source():
    """Cut-offs above a voice's band limit change nothing in it (level_null, realised 0); the same level changes
    a voice with a wider band, and a cut-off inside the band is a change in both."""
    narrow = _clips(0, "clarity", ["m1", "m1p585", "m2p263"])   # awb_01: speech up to about 8 kHz
    wide = _clips(1, "clarity", ["m1", "m1p585", "m2p263"])     # esp_car_f1_01: some energy above 8 kHz
    assert narrow["m1"]["level_null"] and narrow["m1p585"]["level_null"] and wide["m1"]["level_null"]
    assert narrow["m1p585"]["diff_from_zero_db"] < -70 and narrow["m1p585"]["magnitude_realised"] == 0.0
    assert not wide["m1p585"]["level_null"] and wide["m1p585"]["diff_from_zero_db"] > -65
    for clips in (narrow, wide):
        assert not clips["m0"]["level_null"] and clips["m0"]["magnitude_realised"] == 0.0  # the control, never null
        assert not clips["m2p263"]["level_null"] and clips["m2p263"]["magnitude_realised"] > 0.5  # octaves of band


def test_realised_magnitudes_and_level_changes_are_measured():
    """Volume realises its declared dB; vibration and echo increases come with a fall in level (and their
    decrease twins with a rise), which level_change_db records; distortion realises octaves of hold."""
    vol = _clips(0, "volume", ["m6", "m18"])
    assert vol["m6"]["magnitude_realised"] == pytest.approx(6.0, abs=0.6)
    assert vol["m18"]["magnitude_realised"] == pytest.approx(18.0, abs=1.5)
    assert vol["m18"]["level_change_db"] == pytest.approx(vol["m18"]["magnitude_realised"], abs=0.1)
    up, down = _clips(0, "vibration", ["m1"]), _clips(0, "vibration", ["m1"], direction="decrease")
    assert up["m1"]["level_change_db"] < -2.5 and down["m1"]["level_change_db"] > 2.5
    assert up["m1"]["realised_unit"] == attributes.get("vibration").effect_unit and up["m1"]["magnitude_realised"] > 0.3
    echo = _clips(0, "echo", ["m0p28"])
    assert -2.0 < echo["m0p28"]["level_change_db"] < -0.3
    dist = _clips(0, "distortion", ["m1", "m4"])
    assert 0.6 < dist["m1"]["magnitude_realised"] < dist["m4"]["magnitude_realised"] <= 4.0
    assert abs(dist["m1"]["level_change_db"]) < 0.2  # RMS-matched: no level change


def test_the_realised_level_is_the_level_heard_after_clipping():
    """A volume clip that clips loses level at its loud end: it realises less than it declares (measured on the
    stored samples, not trusted from the gain asked for). An unclipped jump clip realises its declared dB; a
    linear one less (its eighths hold the ends on average)."""
    import numpy as np

    from generation import audio
    from generation.label_validity import ends_difference

    jump = _clips(0, "volume", ["m6", "m42"])
    heard = audio.quantize_int16(jump["m42"]["y"])  # the samples as stored
    assert audio.to_int16(jump["m42"]["y"])[1] > 0.01  # the loud end clips
    assert jump["m42"]["magnitude_realised"] < 42.0 - 1.0
    # measured again, independently, on the stored clip against its zero-change twin: the same shortfall
    zero = audio.quantize_int16(jump["m0"]["y"])
    n = min(len(heard), len(zero))
    stored = ends_difference(lambda a, b: 20 * np.log10(np.sqrt(np.mean(a ** 2)) / np.sqrt(np.mean(b ** 2))),
                             zero[:n], _span_of(jump["m0"]), heard[:n])
    assert jump["m42"]["magnitude_realised"] == pytest.approx(stored, abs=0.3)
    assert jump["m6"]["magnitude_realised"] == pytest.approx(6.0, abs=0.05) and audio.to_int16(jump["m6"]["y"])[1] == 0
    linear = _clips(0, "volume", ["m24"], trajectory="linear")["m24"]
    assert audio.to_int16(linear["y"])[1] == 0 and 19.0 < linear["magnitude_realised"] < 23.0


def _span_of(clip):
    from generation.span import Span

    return Span(clip["onset"], clip["offset"])


def test_distortion_realises_its_hold_where_it_survives_the_cross_fades():
    """The chunks' 5-ms cross-fades blend two held signals, which then hold nothing: counted in, they diluted a
    hold of 16 samples (4 octaves) to 2.6. Counted out, a jump clip realises its declared octaves."""
    dist = _clips(1, "distortion", ["m1", "m2", "m4"])
    for tok, octaves in (("m1", 1.0), ("m2", 2.0), ("m4", 4.0)):
        assert dist[tok]["magnitude_realised"] == pytest.approx(octaves, abs=0.05), tok


def test_the_cross_fade_mask_is_where_stitch_blends():
    import numpy as np

    from generation.sweep_measures import crossfade_mask
    from generation.transforms.base import stitch

    class Layout:  # cores of 50, 50, 7 (shorter than the fade) and 30 samples
        starts, ends = np.array([100, 150, 200, 207]), np.array([150, 200, 207, 237])

    class Schedule:
        layout = Layout()

    pieces = [np.full(n, v, np.float32) for n, v in zip((50, 50, 7, 30), (1.0, 2.0, 4.0, 8.0))]
    body, _ = stitch(pieces, 10)
    keep = crossfade_mask(5 + len(body) + 3, 5, Schedule(), 10)
    pure = np.isin(body, [1.0, 2.0, 4.0, 8.0])
    inside = keep[5:5 + len(body)]
    assert pure[inside].all() and not inside[~pure].any()  # kept: never a blend; every blend left out
    assert not keep[5 + 40] and keep[5 + 39] and keep[:5].all() and keep[-3:].all()
    # joins [40, 50), [83, 90) (the third piece, shorter than the fade, is all join) and [80, 90)
    assert np.flatnonzero(~keep).tolist() == [5 + i for i in [*range(40, 50), *range(80, 90)]]
    assert crossfade_mask(9, 2, object(), 10).all()  # no chunk layout: nothing to leave out


def test_the_sweep_columns_reach_the_manifest_the_hub_and_the_sample_logs(pipeline):
    import pyarrow as pa
    import pyarrow.parquet as pq

    _, sweep, hub = pipeline[:3]
    names = list(vocalgrad.SWEEP_COLUMN_NAMES)
    manifest = pq.read_table(sweep / "manifest.parquet")
    assert manifest.column_names[-len(names):] == names
    rows = manifest.to_pylist()
    vol = {r["tier"]: r for r in rows if r["category"] == "volume" and r["trajectory"] == "jump"
           and r["direction"] == "increase" and r["source_id"] == rows[0]["source_id"]}
    assert vol["m12"]["magnitude"] == 12.0 and vol["m12"]["magnitude_realised"] == pytest.approx(12.0, abs=1.0)
    assert not any(r["level_null"] for r in rows)  # volume and noise change every voice
    shard = next((hub / "sweep_volume").glob("*.parquet"))
    assert pq.read_schema(shard).names[-len(names):] == names
    card = (hub / "README.md").read_text()
    assert card.count("- name: level_null") == 2  # the two sweep configs' features
    logs = sorted((pipeline[4].parent / "results").rglob("samples_vocalgrad_sweep_volume_*.jsonl"))
    doc = json.loads(logs[0].read_text().splitlines()[0])["doc"]
    assert {"magnitude", "magnitude_realised", "level_null", "level_change_db"} <= set(doc)
    from analysis.report.loading import read_samples

    rec = read_samples(logs[0], "volume")
    assert all("level_null" in r and "magnitude_realised" in r for r in rec)
    from generation.hub import build_hub
    from generation.verify import NOT_RISING, verify

    assert verify(sweep, write_record=False).ok
    both = hub.parent / "hub_both"  # the paper's configs and the sweep's in one Hub folder: both checked
    build_hub([pipeline[0], sweep], both, allow_partial=True)  # the paper render holds noise and volume only
    assert NOT_RISING not in verify(both).problems
    shard = next((both / "sweep_volume").glob("*.parquet"))
    table = pq.read_table(shard)
    realised = [-r if m >= 30 else r for m, r in zip(table["magnitude"].to_pylist(),
                                                      table["magnitude_realised"].to_pylist())]
    pq.write_table(table.set_column(table.column_names.index("magnitude_realised"), "magnitude_realised",
                                    pa.array(realised, pa.float64())), shard)
    problems = verify(both).problems[NOT_RISING]
    assert problems and problems[0].startswith("volume: level 30 realised -"), problems


def test_the_docs_table_lists_the_declared_levels():
    """docs/sweep.md's table of levels (paper tiers in bold) is the declarations', to 4 significant digits."""
    import re

    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \| ([^|]+) \|", (ROOT / "docs" / "sweep.md").read_text(), re.M)
    assert len(rows) == len(attributes.installed())
    for name, text in rows:
        want = ", ".join(f"**{lv.magnitude:.4g}**" if lv.tier else f"{lv.magnitude:.4g}" for lv in sweep_levels(name))
        assert text.strip() == want, name
