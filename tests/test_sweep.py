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


def test_the_html_page_shows_the_threshold_tables(pipeline):
    from analysis.report.html_page import write_html

    out = pipeline[4]
    write_html(out, [])
    page = (out / "index.html").read_text(encoding="utf-8")
    assert 'id="thresholds"' in page and "plots/sweep-noise.png" in page
