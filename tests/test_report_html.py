"""``vocalgrad report --html [--data]``: the page, its clips, its limits, and the page in headless Chromium."""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import vocalgrad
from analysis.listen.catalog import open_catalog
from analysis.report import build_report
from analysis.report.html_clips import select_clips
from analysis.report.html_page import HtmlOptions
from analysis.report.loading import load_all
from analysis.report.markdown import pct
from vocalgrad_commands.cli import main
from harness_tasks.logit_answers import logit_answer, split_logit_answer

from _html_helpers import column_values, load_page, widths_at
from _listen_helpers import chromium, make_render
from _report_helpers import write_results

pytestmark = pytest.mark.timeout(600)

CATS = ("pitch", "volume")
MAX_CLIPS = 16


def _flip(d: str) -> str:
    return "decrease" if d == "increase" else "increase"


def _results(root: Path, data: Path) -> Path:
    """Three runs on the clips of ``data``: a 90 % right one, a constant one, one answering by logits."""
    docs = [{"id": i.clip_id, "category": i.category, "direction": i.direction, "label": i.direction,
             "tier": i.tier, "trajectory": i.trajectory, "source_id": i.source_id}
            for i in open_catalog(data).clips.values()]
    rng = random.Random(7)

    def logits(doc):
        lab = doc["direction"] if rng.random() < 0.6 else _flip(doc["direction"])
        return logit_answer(lab, {lab: -1.0, _flip(lab): -1.0 - 3 * rng.random()}, text=lab)

    write_results(root, "good", lambda d: d["direction"] if rng.random() < 0.9 else _flip(d["direction"]), docs=docs)
    write_results(root, "always", lambda d: "The loudness increases.", docs=docs)
    write_results(root, "logity", logits, docs=docs)
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("html")
    data = make_render(root / "render", categories=CATS, n_sources=2)
    res = _results(root / "results", data)
    out = root / "report"
    rc = main(["report", str(res), "--out", str(out), "--draws", "100", "--html", "--data", str(data),
               "--max-clips", str(MAX_CLIPS)])
    assert rc == 0
    return {"root": root, "data": data, "results": res, "out": out}


def test_page_in_headless_chromium(site, tmp_path):
    """Opened from file://: no console error, no failed or remote request, every clip plays, sorting works."""
    from selenium.webdriver.common.keys import Keys

    index = site["out"] / "index.html"
    with chromium(tmp_path, logs=True) as driver:
        seen = load_page(driver, index)
        assert seen["severe"] == [] and seen["failed"] == [] and seen["remote"] == []
        assert any(u.endswith(".flac") for u in seen["requested"])  # the network log does see the clips
        assert len(seen["media"]) >= len(CATS) * 6
        for m in seen["media"]:
            assert m["error"] is None and m["ready"] >= 1 and m["duration"] > 0.2, m
        assert seen["images"] and all(i["width"] > 100 and i["alt"] for i in seen["images"])
        for cat in CATS:  # >= 1 playable clip with its picture per category
            gallery = driver.find_element("css selector", f"#listen-{cat} + .gallery")
            assert gallery.find_elements("css selector", "figure.clip audio")
            assert gallery.find_elements("css selector", "figure.clip img")

        board = "#leaderboard + p + div table"
        rows0 = column_values(driver, board, 0)
        assert any("paper" in r for r in rows0) and {"good", "always", "logity"} <= {r for r in rows0}
        acc_button = driver.find_element("xpath", "//table[1]//th/button[normalize-space()='acc\u00a0%']")
        acc_button.click()  # numbers: largest first
        accs = [float(v) for v in column_values(driver, board, 1)]
        assert accs == sorted(accs, reverse=True) and column_values(driver, board, 0) != rows0
        assert acc_button.find_element("xpath", "..").get_attribute("aria-sort") == "descending"
        acc_button.send_keys(Keys.ENTER)  # the keyboard works too (a real button)
        assert [float(v) for v in column_values(driver, board, 1)] == sorted(accs)
        model_button = driver.find_element("xpath", "//table[1]//th/button[normalize-space()='model']")
        model_button.send_keys(Keys.SPACE)
        names = column_values(driver, board, 0)
        assert names == sorted(names, key=str.lower)

        # accessibility: header cells carry a scope, sort controls are buttons, nothing clickable is a div
        assert driver.execute_script("return document.querySelectorAll('th:not([scope])').length") == 0
        assert driver.execute_script("return document.querySelectorAll('[onclick], div[role=button]').length") == 0
        assert driver.execute_script("return document.documentElement.lang") == "en"
        assert driver.execute_script("return document.querySelectorAll('th button.sort').length") > 10

        # three runs (one with an acc_logit column) and the paper's rows fit a 1,400-pixel window
        w = widths_at(driver, 1400, "table.leaderboard")
        assert w["inner"] >= 1380 and w["box_scroll"] <= w["box"] and w["page"] <= w["inner"], w


def test_numbers_are_report_json(site):
    """The leaderboard prints report.json's figures with report.md's formatting."""
    report = json.loads((site["out"] / "report.json").read_text())
    page = (site["out"] / "index.html").read_text()
    md = (site["out"] / "report.md").read_text()
    for m in report["models"]:
        row = re.search(rf'<tr><th scope="row"><a href="#model-{m["label"]}">{m["label"]}</a></th>(.*?)</tr>', page)
        assert row, m["label"]
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))
        acc = pct(m["overall"]["acc"])
        assert cells[0] == acc and f"| {m['label']} | {m['overall']['n']} |" in md and f" {acc} |" in md
        lo, hi = m["overall"]["ci"]["acc"]["binomial"]
        assert cells[1] == f"[{100 * lo:.1f}, {100 * hi:.1f}]"
        assert cells[3] == cells[1] and "these voices" in cells[2]  # 2 sources: the headline is the clip bootstrap's
        assert cells[8].rstrip("†") == pct(m["by_category"]["pitch"]["acc"])
    logit_row = re.search(r'#model-logity">logity</a></th>(.*?)</tr>', page).group(1)
    logity = next(m for m in report["models"] if m["label"] == "logity")
    assert re.findall(r"<td[^>]*>(.*?)</td>", logit_row)[5] == pct(logity["logits"]["all"]["acc_logit"])


def test_page_lead_verdicts_and_shared_warnings(site):
    """A short lead with the definitions folded; a wrong answer reads "wrong" (the answer is in its own
    column); a warning every model carries (2 sources: no clustered interval) is said once."""
    page = (site["out"] / "index.html").read_text()
    head = page[page.index("<header>"):page.index("</header>")]
    assert '<p class="lead">' in head and '<details class="note"><summary>How the numbers are made</summary>' in head
    assert head.index("percentile bootstrap") > head.index("<details")
    assert '<span class="bad">✗ wrong</span>' in page and not re.search(r"✗ (increase|decrease)", page)
    assert page.count("no clustered intervals") == 1 and "warning (every model): only 2 source" in page


def test_html_leaves_the_markdown_report_byte_identical(site, tmp_path):
    for name, html in (("plain", None), ("html", HtmlOptions())):
        build_report([site["results"]], tmp_path / name, draws=100, plots=False, html=html)
    for f in ("report.md", "report.json"):
        assert (tmp_path / "plain" / f).read_bytes() == (tmp_path / "html" / f).read_bytes()
    assert not (tmp_path / "plain" / "index.html").exists() and (tmp_path / "html" / "index.html").is_file()
    # the CLI run with --html --data and plots: the same numbers (only the figure paths differ)
    with_data = json.loads((site["out"] / "report.json").read_text())
    plain = json.loads((tmp_path / "plain" / "report.json").read_text())
    assert with_data.pop("plots") and not plain.pop("plots")
    assert with_data == plain


def test_clips_are_the_data_bytes_and_chosen_by_the_rules(site):
    data, out = site["data"], site["out"]
    sha = {r["clip_id"]: r["sha256"] for r in pq.read_table(data / "manifest.parquet").to_pylist()}
    flacs = sorted((out / "clips").glob("*.flac"))
    assert 0 < len(flacs) <= MAX_CLIPS
    for f in flacs:  # copied unchanged: the bytes the models heard
        assert hashlib.sha256(f.read_bytes()).hexdigest() == sha[f.stem]
        png = f.with_suffix(".png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[16:24] == (1040).to_bytes(4, "big") + (520).to_bytes(4, "big")
    page = (out / "index.html").read_text()
    assert not re.search(r'(src|href)="(https?:|//)', page)  # every path is relative

    evaluations, _ = load_all([str(site["results"])])
    catalog = open_catalog(data)
    lists, _ = select_clips(catalog, evaluations, seed=1234)
    again, _ = select_clips(catalog, evaluations, seed=1234)
    ids = {c: [k.clip_id for k in cards] for c, cards in lists.gallery.items()}
    assert ids == {c: [k.clip_id for k in cards] for c, cards in again.gallery.items()}  # fixed seed
    for cat, cards in lists.gallery.items():  # one clip per direction x tier
        assert sorted((k.direction, k.tier) for k in cards) == sorted(
            (d, t) for d in vocalgrad.DIRECTIONS for t in vocalgrad.TIERS)
        assert all(k.category == cat and len(k.answers) == 3 for k in cards)
    for card in lists.missed:  # every model wrong
        assert card.answers and not any(a[3] for a in card.answers)
    logity = lists.confident["logity"]
    margins = [a[4] for k in logity for a in k.answers if a[0] == "logity"]
    assert margins == sorted(margins, reverse=True) and "logit margin" in lists.confident_rule["logity"]
    for k in logity:
        rec = next(r for ev in evaluations if ev.label == "logity" for r in ev.records if r["id"] == k.clip_id)
        assert split_logit_answer(rec["raw"])[1] != rec["direction"]  # the logit choice is wrong
    assert all(not a[3] for k in lists.confident["always"] for a in k.answers if a[0] == "always")


def test_budget_and_max_clips(site, tmp_path):
    catalog = open_catalog(site["data"])
    rep = build_report([site["results"]], tmp_path / "r", draws=50, plots=False,
                       html=HtmlOptions(catalog=catalog, max_clips=3, pictures=False))
    assert rep["html"]["clips"] == 3 and len(list((tmp_path / "r" / "clips").glob("*"))) == 3
    page = (tmp_path / "r" / "index.html").read_text()
    assert "more clips were left out by --max-clips or the size budget" in page
    size = (tmp_path / "r" / "index.html").stat().st_size
    budget = size + sum(f.stat().st_size for f in (tmp_path / "r" / "clips").glob("*"))
    assert rep["html"]["bytes"] == budget  # the page and its clips, measured
    # a budget that fits the page with 3 clips but not the room kept for the cards: no clip written
    rep = build_report([site["results"]], tmp_path / "r", draws=50, plots=False,
                       html=HtmlOptions(catalog=catalog, max_mb=budget / 1e6, max_clips=3, pictures=False))
    assert rep["html"]["clips"] == 0 and not list((tmp_path / "r" / "clips").glob("*"))  # old clips removed
    assert rep["html"]["bytes"] == (tmp_path / "r" / "index.html").stat().st_size <= budget
    assert "more clips were left out" in (tmp_path / "r" / "index.html").read_text()


def test_cli_errors_before_writing(site, tmp_path, capsys):
    out = tmp_path / "never"
    assert main(["report", str(site["results"]), "--out", str(out), "--data", str(site["data"])]) == 2
    assert "--data is for the HTML page: add --html" in capsys.readouterr().err
    assert main(["report", str(site["results"]), "--out", str(out), "--html", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vocalgrad report: error:") and "Hub folder" in err
    assert not out.exists()


def test_human_listeners_beside_the_models(site, tmp_path):
    """--human: the annotators are a leaderboard row, their agreement a section, their answers on the clips."""
    catalog = open_catalog(site["data"])
    pitch = [i for i in catalog.clips.values() if i.category == "pitch"]
    lines = []
    for k, info in enumerate(pitch):
        for ann in ("ann1", "ann2"):
            wrong = ann == "ann2" and k % 4 == 0
            lines.append({"annotator": ann, "clip_id": info.clip_id, "direction": info.direction,
                          "answer": _flip(info.direction) if wrong else info.direction, "rt_sec": 1.0})
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(x) + "\n" for x in lines))
    rep = build_report([site["results"]], tmp_path / "r", draws=50, plots=False, human=[answers],
                       html=HtmlOptions(catalog=catalog, max_clips=6, pictures=False))
    page = (tmp_path / "r" / "index.html").read_text()
    agr = rep["human_agreement"]
    # by hand: ann1 is always right, ann2 wrong on every 4th pitch clip
    n = len(pitch)
    per = agr["per_annotator"]
    assert (per["ann1"]["n"], per["ann1"]["acc"]) == (n, 1.0)
    assert per["ann2"]["n"] == n and per["ann2"]["acc"] == pytest.approx(1 - len(range(0, n, 4)) / n)
    assert '<h2 id="human">Human listeners</h2>' in page and 'href="#model-human">human</a>' in page
    for name, a in agr["per_annotator"].items():
        assert re.search(rf'<th scope="row">{name}</th><td[^>]*>{a["n"]}</td><td[^>]*>{pct(a["acc"])}</td>', page)
    assert f"Fleiss' kappa: {agr['fleiss_kappa']:.3f}" in page
    assert "<th scope=\"row\">human (ann1)</th>" in page and "<th scope=\"row\">human (ann2)</th>" in page


def test_data_folder_the_runs_did_not_answer(site, tmp_path):
    """--data of another folder: the clips still play, and the page says no run answered them."""
    other = make_render(tmp_path / "other", categories=("echo",), n_sources=1)
    rep = build_report([site["results"]], tmp_path / "r", draws=50, plots=False,
                       html=HtmlOptions(catalog=open_catalog(other), max_clips=2, pictures=False))
    page = (tmp_path / "r" / "index.html").read_text()
    assert rep["html"]["clips"] == 2 and "was answered by these runs" in page
    assert page.count("No model answered this clip.") == 2


def test_no_clustered_interval_reads_as_in_report_md():
    """Too few sources for a clustered interval ([nan, nan] / null): "n/a (k sources)", no clustered verdict."""
    from analysis.report.html_tables import comparisons_section, leaderboard
    from analysis.report.verdicts import headline

    pair = {"n": 48, "acc_a": 0.9, "acc_b": 0.5, "diff": 0.4, "only_a": 20, "only_b": 1, "mcnemar_p": 1e-5,
            "n_sources": 4, "ci": {"binomial": [0.3, 0.5], "clustered": [None, None]}}
    html = comparisons_section({"comparisons": [{"a": "x", "b": "y", "overall": pair, "by_category": {}}]})
    assert "<td>n/a (4 sources)</td>" in html and "<td data-v=\"0.3\">[30.0, 50.0]</td>" in html
    model = {"label": "x", "has_samples": True, "by_category": {}, "overall": {
        "n": 48, "acc": 0.9, "ci": {"acc": {"binomial": [0.8, 0.95]}}, "increase_ratio": 0.5, "parse_rate": 1.0,
        "verdict": "above chance", "verdict_clustered": "n/a (4 sources)", "n_sources": 4}}
    model["overall"]["headline"] = headline(model["overall"])
    board = leaderboard({"models": [model], "paper": {}})
    assert ('title="above chance on these voices; no claim over voices (4 sources; a claim about voices in general '
            'needs at least 20)">above (these voices)</td>') in board and "clustered" not in board
