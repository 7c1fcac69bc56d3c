"""The dataset card follows the build: licence from the sources, the user's repo id, whose results, citations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

import vocalgrad
from generation import card, hub, publish

from _hub_helpers import make_render_dir, run_cli

pytest.importorskip("datasets")


@pytest.fixture(scope="module")
def tiny_render(tmp_path_factory):
    return make_render_dir(tmp_path_factory.mktemp("card") / "render")


def _build(render: Path, tmp_path: Path, source: str, **kw) -> str:
    meta = json.loads((render / "render.json").read_text())
    (render / "render.json").write_text(json.dumps({**meta, "source": source}))
    out = tmp_path / "hub"
    hub.build_hub(render, out, verify_sha256=False, **kw)
    return (out / "README.md").read_text(encoding="utf-8")


def _license(text: str) -> str:
    return yaml.safe_load(text[4:].split("\n---\n", 1)[0])["license"]


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_vctk_build_is_cc_by_with_the_paper_table_and_vctk_citation(tiny_render, tmp_path):
    text = _build(tiny_render, tmp_path, "vctk:/data/VCTK-Corpus")
    assert _license(text) == "cc-by-4.0"
    assert "| Human | 95.3 | 84.7 | 100.0 | 86.0 | 99.3 | 100.0 | 94.7 | 90.7 | 99.3 | 94.4 |" in text
    assert "doi       = {10.7488/ds/2645}" in text and "@inproceedings{ryu2026vocalgrad" in text
    assert 'load_dataset("ynklab/vocalgrad", "pitch"' in text  # the paper's repo by default


def test_demo_build_shows_no_paper_results_and_its_own_licence(tiny_render, tmp_path):
    text = _build(tiny_render, tmp_path, "demo")
    assert _license(text) == "apache-2.0"
    results = _section(text, "Results in the paper")
    assert "| Human |" not in results and "not from the paper's VCTK sources" in results
    assert "10.7488/ds/2645" not in text  # no VCTK citation for synthetic voices
    assert 'load_dataset("ORG/NAME"' in text  # not the paper's repo, which holds other clips


def test_folder_licence_comes_from_its_metadata_or_is_unknown(tiny_render, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = _build(tiny_render, tmp_path, f"folder:{corpus}")
    assert _license(text) == "unknown"
    assert "--license" in _section(text, "Licence")
    (corpus / "LICENSE.txt").write_text("Released under the Creative Commons Attribution-ShareAlike 4.0 licence "
                                        "(CC BY-SA 4.0).\n")
    assert _license(_build(tiny_render, tmp_path, f"folder:{corpus}")) == "cc-by-sa-4.0"
    (corpus / "README.md").write_text("---\nlicense: cc0-1.0\n---\n# my corpus\n")  # a card header wins
    assert _license(_build(tiny_render, tmp_path, f"folder:{corpus}")) == "cc0-1.0"
    assert _license(_build(tiny_render, tmp_path, f"hf:{corpus}")) == "cc0-1.0"


def test_hub_cli_repo_and_license_options(tiny_render, tmp_path):
    meta = json.loads((tiny_render / "render.json").read_text())
    (tiny_render / "render.json").write_text(json.dumps({**meta, "source": "tones"}))
    out = tmp_path / "hub"
    assert run_cli(["hub", str(tiny_render), "--out", str(out), "--skip-sha256", "--repo", "me/my-vg",
                    "--license", "CC-BY-4.0"]) == 0
    text = (out / "README.md").read_text(encoding="utf-8")
    assert _license(text) == "cc-by-4.0" and "set with `--license`" in text
    assert 'load_dataset("me/my-vg", "pitch"' in text and "VOCALGRAD_DATASET=me/my-vg vocalgrad-eval" in text
    assert "ORG/NAME" not in text.split("## Licence")[0].split("## How to evaluate")[1]


def test_how_to_evaluate_installs_what_vocalgrad_hf_needs_and_prompt_is_the_real_one(tiny_render, tmp_path):
    text = _build(tiny_render, tmp_path, "demo")
    evaluate = _section(text, "How to evaluate")
    extras = re.search(r'pip install -e "\.\[([\w,]+)\]"', evaluate).group(1).split(",")
    assert {"eval", "hf"} <= set(extras) and "--output_path results/" in evaluate
    block = _section(text, "Prompt and answer parsing").split("```\n", 2)[1].split("```")[0]
    assert block.rstrip("\n") == vocalgrad.default_prompt("pitch")  # with its blank line


def test_publish_retargets_the_examples_to_the_published_repo(tiny_render, tmp_path):
    text = _build(tiny_render, tmp_path, "vctk:/data/VCTK-Corpus")
    new = card.retarget_repo_id(text, "me/vg-copy")
    assert 'load_dataset("me/vg-copy", "pitch"' in new and 'load_dataset("ynklab/vocalgrad"' not in new
    assert card.card_repo_id(new) == "me/vg-copy"
    assert card.retarget_repo_id(new, "me/vg-copy") == new
    demo = card.retarget_repo_id(_build(tiny_render, tmp_path, "demo"), "me/demo")
    assert "https://huggingface.co/datasets/ynklab/vocalgrad" in demo  # the paper's link is not an example
    assert publish.retarget_card(tmp_path / "hub", "me/demo") is True
    assert 'load_dataset("me/demo"' in (tmp_path / "hub" / "README.md").read_text(encoding="utf-8")
    assert publish.retarget_card(tmp_path / "hub", "me/demo") is False


def test_publish_on_a_render_folder_says_to_run_hub_first(tiny_render):
    with pytest.raises(publish.PublishError, match=r"is a render folder.*vocalgrad hub .* --out HUB"):
        publish.check_hub_folder(tiny_render)
