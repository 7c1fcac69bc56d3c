"""Prompt variants and problem formats, as definitions: the prompt text of every variant (the paper's
paraphrase patterns), the answer words and the parser's vocabulary, the label metrics (macro F1,
distribution), and the generated task files of each group (docs/variants.md).

Runs through lm-eval on a tiny Hub folder are in ``test_variants.py``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

import vocalgrad

import harness_tasks
from harness_tasks import label_metrics, metrics, prompts, task_configs, utils
from harness_tasks.parsing import classify_answer

NEW_GROUPS = ("vocalgrad_audiofirst", "vocalgrad_reword", "vocalgrad_fewshot", "vocalgrad_yesno",
              "vocalgrad_ternary")


# ----------------------------------------------------------------------------- prompt text
# paper Tables 12-13, one row per pattern: pattern, category, words asked for increase/decrease, question
_PAPER_TABLE = """
rise_fall         volume rise/fall             Does the loudness rise or fall as the audio progresses?
intensity_inc_dec volume increase/decrease     Does the sound intensity increase or decrease throughout the recording?
intensity_ing     volume increasing/decreasing Is the audio intensity increasing or decreasing over time?
tone_rise_fall    pitch  rise/fall             Does the tone rise or fall over time?
freq_up_down      pitch  upward/downward       Does the sound frequency change upward or downward over time?
freq_rise_decline pitch  rise/decline          Over time, does the frequency of the voice rise or decline?
"""
PAPER_PARAPHRASES = {  # pattern -> (category, question, asked words), the shape of prompts.PARAPHRASES
    p: (cat, question, tuple(words.split("/")))
    for p, cat, words, question in (row.split(None, 3) for row in _PAPER_TABLE.strip().splitlines())
}


def test_prompt_text_of_every_variant():
    assert prompts.paraphrase_prompt("rise_fall") == (
        "Does the loudness rise or fall as the audio progresses?\n\n"
        'Answer with only one word: "rise" or "fall".')
    assert prompts.build_prompt("pitch", "yesno") == (
        'Does the voice pitch increase over time?\n\nAnswer with only one word: "yes" or "no".')
    assert prompts.build_prompt("echo", "ternary") == (
        "Does the echo increase, decrease, or stay constant over time?\n\n"
        'Answer with only one word: "increase", "decrease" or "constant".')
    assert set(prompts.REWORDINGS) == set(vocalgrad.CATEGORY_NAMES)
    assert set(prompts.prompt_variant_names()) >= {"default", "swap", "audioref", "reword", "yesno", "ternary"}
    with pytest.raises(ValueError, match="reword"):
        prompts.build_prompt("pitch", "poetic")
    with pytest.raises(ValueError, match="needs the category"):
        prompts.answer_words("reword")
    with pytest.raises(ValueError, match="rise_fall"):
        prompts.paraphrase_prompt("volume")


def test_the_default_prompt_is_vocalgrads():
    # one owner of the benchmark's prompt (benchmark.md §7): prompts builds "default" from vocalgrad's text
    assert prompts.PROMPT_VARIANTS["default"] == (vocalgrad.DEFAULT_QUESTION, vocalgrad.DEFAULT_INSTRUCTION)
    for c in vocalgrad.CATEGORIES:
        assert prompts.build_prompt(c.name) == prompts.build_prompt(c.id, "default") == vocalgrad.default_prompt(c.id)
    assert vocalgrad.default_prompt("pitch") == (
        'Does the voice pitch increase or decrease over time?\n\nAnswer with only one word: "increase" or "decrease".')
    source = Path(prompts.__file__).read_text(encoding="utf-8")
    assert vocalgrad.DEFAULT_QUESTION not in source and vocalgrad.DEFAULT_INSTRUCTION not in source
    # the rewordings ask for the first word of each label, in the paraphrases' instruction
    assert prompts.build_prompt("speed", "reword") == (
        "Does the person speak faster or slower as the audio progresses?\n\n"
        'Answer with only one word: "faster" or "slower".')


def test_the_paraphrase_group_is_the_papers_six_patterns():
    assert prompts.PARAPHRASES == PAPER_PARAPHRASES
    files = task_configs.expected_files()
    group = files["_vocalgrad_paraphrase.yaml"]
    assert [line.strip("- ") for line in group.splitlines() if line.startswith("  - vocalgrad_")] == [
        f"vocalgrad_paraphrase_{p}" for p in PAPER_PARAPHRASES]
    for p, (cat, question, (inc, dec)) in PAPER_PARAPHRASES.items():
        text = files[f"vocalgrad_paraphrase_{p}.yaml"]
        assert f"dataset_name: {cat}" in text and "process_results_paraphrase" in text
        prompt = prompts.paraphrase_prompt(p)
        assert prompt == f'{question}\n\nAnswer with only one word: "{inc}" or "{dec}".'
        words = prompts.paraphrase_words(p)
        assert words["increase"][0] == inc and words["decrease"][0] == dec
        assert {k: set(v) for k, v in words.items()} == {k: set(v) for k, v in prompts.SYNONYM_WORDS.items()}
        assert classify_answer(inc.capitalize() + ".", words) == ("increase", "parsed")
        assert classify_answer(dec, words) == ("decrease", "parsed")
    assert prompts.SYNONYM_PARSER == "synonym-unique-direction-v1"
    # the rewordings are a separately named extra group
    assert "vocalgrad_reword_speed" in files["_vocalgrad_reword.yaml"]


@pytest.mark.parametrize("category", vocalgrad.CATEGORY_NAMES)
def test_rewording_asks_for_its_own_answer_words(category):
    prompt = prompts.build_prompt(category, "reword")
    words = prompts.answer_words("reword", category)
    assert set(words) == set(vocalgrad.DIRECTIONS)
    question, instruction = prompt.split("\n\n")
    asked = re.findall(r'"(\w+)"', instruction)
    assert asked == [words["increase"][0], words["decrease"][0]]
    assert "increase" not in prompt.lower() and "decrease" not in prompt.lower()
    for label, ws in words.items():
        assert re.search(rf"\b{ws[0]}\b", question, re.IGNORECASE), (category, ws[0])
        for w in ws:
            assert classify_answer(w.upper() + ".", words) == (label, "parsed")


# ----------------------------------------------------------------------------- parser vocabulary
def test_synonym_parser_keeps_the_unique_direction_rule():
    w = prompts.answer_words("paraphrase")
    assert w == prompts.SYNONYM_WORDS
    assert classify_answer("It rises, and rises again.", w) == ("increase", "parsed")
    assert classify_answer("The loudness falls", w) == ("decrease", "parsed")
    assert classify_answer("It is Increasing upwards", w) == ("increase", "parsed")
    assert classify_answer("rise or fall", w) == (None, "ambiguous")
    assert classify_answer("it rises then declines", w) == (None, "ambiguous")
    assert classify_answer("It rose", w) == (None, "unparsed")        # forms not listed are unparsed
    assert classify_answer("It increased", w) == (None, "unparsed")
    assert classify_answer("sunrise", w) == (None, "unparsed")        # whole words only
    assert classify_answer("does not rise", w) == ("increase", "parsed")  # no negation handling
    assert classify_answer("slower", w) == ("decrease", "parsed")
    assert sum(len(v) for v in w.values()) == 27
    yn = prompts.answer_words("yesno")
    assert classify_answer("Yes.", yn) == ("yes", "parsed") and classify_answer("no", yn) == ("no", "parsed")
    assert classify_answer("yes and no", yn) == (None, "ambiguous")
    assert classify_answer("nope", yn) == (None, "unparsed")
    t3 = prompts.answer_words("ternary")
    assert classify_answer("It stays constant", t3) == ("constant", "parsed")
    assert classify_answer("constant, then increases", t3) == (None, "ambiguous")
    assert classify_answer("decreases", t3) == ("decrease", "parsed")
    with pytest.raises(ValueError, match="names two labels"):
        classify_answer("x", {"a": ("up",), "b": ("UP",)})
    with pytest.raises(ValueError, match="one word"):
        classify_answer("x", {"a": ("go up",), "b": ("down",)})


# ----------------------------------------------------------------------------- metrics
def test_macro_f1_and_distribution_on_hand_made_predictions():
    # gold x pred for ternary; one unparsed answer on a constant clip
    recs = [
        {"direction": "increase", "pred": "increase", "status": "parsed"},
        {"direction": "increase", "pred": "constant", "status": "parsed"},
        {"direction": "decrease", "pred": "decrease", "status": "parsed"},
        {"direction": "decrease", "pred": "increase", "status": "parsed"},
        {"direction": "constant", "pred": "constant", "status": "parsed"},
        {"direction": "constant", "pred": None, "status": "unparsed"},
    ]
    # F1: increase 2*1/(2+2)=0.5, decrease 2*1/(2+1)=2/3, constant 2*1/(2+2)=0.5
    assert label_metrics.f1_per_label(recs, "ternary") == pytest.approx(
        {"increase": 0.5, "decrease": 2 / 3, "constant": 0.5})
    assert label_metrics.macro_f1(recs, "ternary") == pytest.approx((0.5 + 2 / 3 + 0.5) / 3)
    dist = label_metrics.prediction_distribution(recs, "ternary")
    assert dist["constant"] == {"increase": 0.0, "decrease": 0.0, "constant": 0.5, "unparsed": 0.5}
    assert dist["all"]["increase"] == pytest.approx(2 / 6) and dist["all"]["unparsed"] == pytest.approx(1 / 6)
    s = label_metrics.summarize_labels(recs, "ternary")
    assert s["acc"] == pytest.approx(0.5) and s["unparsed_rate"] == pytest.approx(1 / 6) and s["n"] == 6
    # yes/no: always "yes" -> F1(yes) = 2*1/(1+3) = 0.5, F1(no) = 0
    yn = [metrics.record_code({"direction": g, "pred": "yes", "status": "parsed"}) for g in ("yes", "no", "no")]
    assert label_metrics.macro_f1(yn, "yesno") == pytest.approx(0.25)
    assert label_metrics.macro_f1(["yes:yes:parsed:exact"] * 3, "yesno") == 1.0  # "no" absent everywhere: left out
    assert math.isnan(label_metrics.macro_f1([], "yesno"))
    with pytest.raises(ValueError, match="gold label 'increase'"):
        label_metrics.confusion(["increase:yes:parsed:exact"], "yesno")


def test_format_labels():
    assert [utils.format_label(d, "yesno") for d in ("increase", "decrease", "constant")] == ["yes", "no", "no"]
    assert [utils.format_label(d, "ternary") for d in ("increase", "decrease", "constant")] == [
        "increase", "decrease", "constant"]
    with pytest.raises(ValueError, match="no 'binary' label"):
        utils.format_label("constant", "binary")


# ----------------------------------------------------------------------------- task files
def test_groups_are_generated_and_indexed():
    from lm_eval.tasks import TaskManager

    files = task_configs.expected_files()
    tm = TaskManager(include_path=harness_tasks.TASK_DIR, include_defaults=False)
    for g in NEW_GROUPS:
        assert g in tm.all_groups and f"_{g}.yaml" in files
        for c in vocalgrad.CATEGORY_NAMES:
            assert f"{g}_{c}" in tm.all_subtasks
    assert "vocalgrad_audio_first: true" in files["vocalgrad_audiofirst_pitch.yaml"]
    assert "vocalgrad_audio_first" not in files["vocalgrad_pitch.yaml"]
    # yes/no stay strings in YAML (YAML 1.1 would read a bare yes/no as a boolean)
    assert '{"yes": ["yes"], "no": ["no"]}' in files["_template_yesno_yaml"]
    assert "agg_macro_f1_ternary" in files["_template_ternary_yaml"]
    # two-level templates: a yes/no or ternary task file only says which task it is
    for fmt in ("yesno", "ternary"):
        assert files[f"_template_{fmt}_yaml"].count("include: _template_yaml") == 1
        for c in vocalgrad.CATEGORY_NAMES:
            text = files[f"vocalgrad_{fmt}_{c}.yaml"]
            assert f"include: _template_{fmt}_yaml" in text and "metric_list" not in text
            assert len(text.splitlines()) <= 9
    # ... and lm-eval resolves it to the full task (both includes merged)
    from lm_eval.tasks._yaml_loader import load_yaml

    cfg = load_yaml(Path(harness_tasks.TASK_DIR) / "vocalgrad_ternary_echo.yaml", resolve_func=False)
    assert cfg["task"] == "vocalgrad_ternary_echo" and cfg["dataset_kwargs"]["vocalgrad_format"] == "ternary"
    assert [m["metric"] for m in cfg["metric_list"]][:2] == ["acc", "macro_f1"]
    assert cfg["generation_kwargs"]["max_gen_toks"] == 128 and cfg["output_type"] == "generate_until"
    assert "macro_f1" in files["_vocalgrad_ternary.yaml"] and "balanced_acc" not in files["_vocalgrad_ternary.yaml"]
