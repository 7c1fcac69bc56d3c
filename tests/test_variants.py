"""Prompt variants and problem formats through lm-eval: audio order in every adapter, scoring with the
task's answer words, the sources config of yes/no and ternary, few-shot examples.

Covers the groups vocalgrad_audiofirst, vocalgrad_paraphrase, vocalgrad_yesno,
vocalgrad_ternary and vocalgrad_fewshot on a tiny local Hub folder (docs/variants.md). The prompt
text, answer words, label metrics and task files are checked in ``test_variants_prompts.py``.
"""

from __future__ import annotations

import numpy as np

import pytest

import vocalgrad
from _harness_helpers import hub_rows, make_hub_folder, offline_lm_eval, run_lm_eval, write_config
from test_variants_prompts import PAPER_PARAPHRASES

from harness_tasks import prompts, utils
from harness_tasks.clip_audio import AUDIO_MARKER, ClipAudio
from harness_tasks.models.base import Query, VocalGradLM, layout
from harness_tasks.models.baselines import ChanceLM, ConstantLM

N_SOURCES = 2  # test sources per category in the fixture (tone00, tone01): 4 clips per category


def source_rows(n: int) -> list[dict]:
    """Rows of the `sources` config as `vocalgrad hub --sources` writes them (Hub columns)."""
    rows = []
    for r in hub_rows("volume", sources=n):
        if r["direction"] != "increase":
            continue
        sid = r["source_id"]
        rows.append({**r, "id": f"{sid}__source", "category": "", "attribute": "", "direction": "constant",
                     "tier": "", "trajectory": "", "prompt": "", "label": "constant",
                     "value_start": None, "value_end": None})
    return rows


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = make_hub_folder(tmp_path_factory.mktemp("vhub"), sources=N_SOURCES)
    write_config(root, "sources", source_rows(N_SOURCES))
    # train pool: 4 sources, two of which (tone00, tone01) are also test sources -> leak check bites
    train = [dict(r, split="train") for c in vocalgrad.CATEGORY_NAMES
             for r in hub_rows(c, sources=4, config_split="train", tiers=("low", "high"))]
    write_config(root, "train", train, split="train")
    return root


@pytest.fixture
def env_hub(hub, monkeypatch):
    monkeypatch.setenv(utils.DATASET_ENV, str(hub))
    return hub


@pytest.fixture(autouse=True)
def _fast_lm_eval(monkeypatch):
    offline_lm_eval(monkeypatch)


evaluate = run_lm_eval


class RecordingLM(VocalGradLM):
    """Answers a fixed word and records, per request, the order of text and audio parts."""

    def __init__(self, word: str = "increase", **kw):
        super().__init__(**kw)
        self.word = word
        self.seen: list[Query] = []

    def answer(self, queries):
        self.seen += queries
        return [self.word] * len(queries)


def kinds(q: Query, default_audio_first: bool = False) -> list[str]:
    return [k for k, _ in q.parts(default_audio_first)]


# ----------------------------------------------------------------------------- audio order
def test_layout_orders_text_and_audio():
    a, b = "A", "B"
    assert layout("Q", [a]) == [("text", "Q"), ("audio", a)]
    assert layout("Q", [a], audio_first=True) == [("audio", a), ("text", "Q")]
    p = f"one\n{AUDIO_MARKER}\ntwo\n{AUDIO_MARKER}"
    assert layout(p, [a, b], audio_first=True) == [("text", "one"), ("audio", a), ("text", "two"), ("audio", b)]
    with pytest.raises(ValueError, match="2 audio markers but the request has 1"):
        layout(p, [a])


def test_audiofirst_task_puts_the_audio_first_in_every_adapter(env_hub):
    lm = RecordingLM()
    evaluate(lm, ["vocalgrad_audiofirst_pitch", "vocalgrad_pitch"])
    first = [q for q in lm.seen if q.audio_first is True]
    plain = [q for q in lm.seen if q.audio_first is None]
    assert len(first) == len(plain) == 2 * N_SOURCES
    assert all(kinds(q) == ["audio", "text"] for q in first)
    assert all(kinds(q) == ["text", "audio"] for q in plain)
    assert all(kinds(q, default_audio_first=True) == ["audio", "text"] for q in plain)  # model arg still works
    assert all("vocalgrad_audio_first" not in q.gen_kwargs for q in lm.seen)  # taken out of gen_kwargs
    assert {q.prompt for q in first} == {vocalgrad.default_prompt("pitch")}


def test_openai_request_follows_the_task_audio_order(tmp_path):
    from harness_tasks.models.openai import OpenAIAudioLM

    lm = OpenAIAudioLM(model="m", base_url="http://127.0.0.1:9", cache="none")
    clip = ClipAudio("c", {"array": np.zeros(160, np.float32), "sampling_rate": 16000})
    def content(q):
        body = lm.provider.build(lm._parts(q), system=None, budget=q.max_new_tokens)
        return [p["type"] for p in body["messages"][0]["content"]]

    for flag, order in ((True, ["input_audio", "text"]), (None, ["text", "input_audio"])):
        assert content(Query("Q", [clip], audio_first=flag)) == order
    q = Query(f"ex {AUDIO_MARKER} ans\n\nnow {AUDIO_MARKER}", [clip, clip])
    assert content(q) == ["text", "input_audio", "text", "input_audio"]


def test_hf_adapter_honours_the_task_audio_order(tmp_path):
    pytest.importorskip("transformers")
    from _harness_helpers import build_tiny_qwen2_audio

    from harness_tasks.models.hf import HFAudioLM

    lm = HFAudioLM(pretrained=str(build_tiny_qwen2_audio(tmp_path / "m")), device="cpu", dtype="float32")
    y = np.zeros(16000, dtype=np.float32)

    def text(**kw):
        return lm.processor.apply_chat_template([lm.conversation("QUESTION", [y], **kw)], tokenize=False,
                                                add_generation_prompt=True)[0]

    assert text().index("QUESTION") < text().index("<|AUDIO|>")
    assert text(audio_first=True).index("<|AUDIO|>") < text(audio_first=True).index("QUESTION")
    few = lm.processor.apply_chat_template(
        [lm.conversation(f"EX {AUDIO_MARKER} ANS NOW {AUDIO_MARKER}", [y, y])], tokenize=False,
        add_generation_prompt=True)[0]
    assert few.count("<|AUDIO|>") == 2 and few.index("EX") < few.index("<|AUDIO|>") < few.index("NOW")
    c = ClipAudio("c", {"array": y, "sampling_rate": 16000})
    q = Query("QUESTION", [c], max_new_tokens=2, audio_first=True)
    two = Query(f"EX {AUDIO_MARKER} ANS NOW {AUDIO_MARKER}", [c, c], max_new_tokens=2)
    assert len(lm.answer([q, two])) == 2    # a few-shot query with two clips runs in a batch


# ----------------------------------------------------------------------------- paraphrase
def test_paraphrase_group_scores_with_the_synonym_parser(env_hub):
    res = evaluate(ConstantLM(direction="increase"), ["vocalgrad_paraphrase"], log_samples=True)
    r = res["results"]
    for p, (cat, _, (inc, _)) in PAPER_PARAPHRASES.items():
        t = r[f"vocalgrad_paraphrase_{p}"]
        assert t["acc,none"] == 0.5 and t["increase_ratio,none"] == 1.0, p
        assert t["exact_match_rate,none"] == 1.0 and t["unparsed_rate,none"] == 0.0, p
        s = res["samples"][f"vocalgrad_paraphrase_{p}"][0]
        assert s["resps"] == [[inc]] and s["doc"]["category"] == cat
        assert s["arguments"][0][0] == prompts.paraphrase_prompt(p)
    assert r["vocalgrad_paraphrase"]["acc,none"] == pytest.approx(0.5)
    assert not any(k.startswith("vocalgrad_paraphrase_speed") for k in r)
    # any word of the shared vocabulary parses; a word outside it does not
    res = evaluate(RecordingLM("it goes upward"), ["vocalgrad_paraphrase_rise_fall"])
    t = res["results"]["vocalgrad_paraphrase_rise_fall"]
    assert t["unparsed_rate,none"] == 0.0 and t["increase_ratio,none"] == 1.0 and t["exact_match_rate,none"] == 0.0
    res = evaluate(RecordingLM("louder"), ["vocalgrad_paraphrase_rise_fall"])
    assert res["results"]["vocalgrad_paraphrase_rise_fall"]["unparsed_rate,none"] == 1.0
    # the extra rewordings keep their own words
    res = evaluate(RecordingLM("increase"), ["vocalgrad_reword_speed"])
    assert res["results"]["vocalgrad_reword_speed"]["unparsed_rate,none"] == 1.0


def test_retry_uses_the_task_answer_words():
    class Twice(VocalGradLM):
        RETRIES = True

        def __init__(self):
            super().__init__()
            self.calls = []

        def answer(self, queries):
            self.calls.append([q.max_new_tokens for q in queries])
            return ["it rises" if len(self.calls) == 1 else "increase" for _ in queries]

    clip = ClipAudio("c", {"array": np.zeros(10, np.float32), "sampling_rate": 16000})
    words = prompts.paraphrase_words("rise_fall")
    req = ("Q", {"until": [], "max_gen_toks": 128, "vocalgrad_answer_words": {k: list(v) for k, v in words.items()}},
           {"audio": [clip]})
    lm = Twice()
    assert list(lm.generate_until([req], disable_tqdm=True)) == ["it rises"] and lm.calls == [[128]]
    plain = Twice()   # without the task's words "it rises" would not parse and be retried
    assert list(plain.generate_until([("Q", {"until": [], "max_gen_toks": 128}, {"audio": [clip]})],
                                     disable_tqdm=True)) == ["increase"]
    assert plain.calls == [[128], [256]]


# ----------------------------------------------------------------------------- yes/no, ternary
def test_yesno_and_ternary_add_the_sources_and_score_macro_f1(env_hub):
    res = evaluate(ConstantLM(direction="constant"), ["vocalgrad_ternary_pitch"], log_samples=True)
    t = res["results"]["vocalgrad_ternary_pitch"]
    samples = res["samples"]["vocalgrad_ternary_pitch"]
    golds = sorted(s["doc"]["label"] for s in samples)
    assert golds == sorted(["increase", "decrease"] * N_SOURCES + ["constant"] * N_SOURCES)
    src = [s for s in samples if s["doc"]["label"] == "constant"]
    assert {s["doc"]["id"] for s in src} == {f"tone{i:02d}__pitch__source" for i in range(N_SOURCES)}
    assert all(s["doc"]["category"] == "pitch" for s in src)
    assert samples[0]["arguments"][0][0] == prompts.build_prompt("pitch", "ternary")
    # always "constant": F1(constant) = 2*2/(2+6) = 0.5, the others 0 -> macro 1/6
    assert t["acc,none"] == pytest.approx(1 / 3) and t["macro_f1,none"] == pytest.approx(1 / 6)
    assert t["pred_constant,none"] == 1.0 and t["pred_unparsed,none"] == 0.0

    res = evaluate(ConstantLM(direction="yes"), ["vocalgrad_yesno"], log_samples=True)
    y = res["results"]["vocalgrad_yesno_volume"]
    # gold: yes for increase (2), no for decrease (2) and sources (2); always yes -> F1 yes 2*2/(2+6)
    assert y["acc,none"] == pytest.approx(1 / 3) and y["macro_f1,none"] == pytest.approx((0.5 + 0) / 2)
    assert y["pred_yes,none"] == 1.0
    assert res["results"]["vocalgrad_yesno"]["macro_f1,none"] == pytest.approx(0.25)
    s = res["samples"]["vocalgrad_yesno_volume"][0]
    assert s["arguments"][0][0] == prompts.build_prompt("volume", "yesno") and s["resps"] == [["yes"]]
    # chance over three labels says each of them
    res = evaluate(ChanceLM(seed=5), ["vocalgrad_ternary"], log_samples=True)
    said = {s["resps"][0][0] for t in res["samples"].values() for s in t}
    assert said == {"increase", "decrease", "constant"}


def test_missing_sources_config_is_a_clear_error(tmp_path, monkeypatch):
    root = make_hub_folder(tmp_path / "h", categories=("pitch",))
    with pytest.raises(FileNotFoundError, match="no config folder 'sources'"):
        utils.load_task_dataset(vocalgrad_config="pitch", vocalgrad_category="pitch",
                                vocalgrad_dataset=str(root), vocalgrad_format="ternary")
    with pytest.raises(ValueError, match="vocalgrad_format"):
        utils.load_task_dataset(vocalgrad_config="pitch", vocalgrad_dataset=str(root), vocalgrad_format="quaternary")


# ----------------------------------------------------------------------------- few-shot
def test_choose_fewshot_never_shares_the_query_source_and_is_balanced():
    pool_sources = [f"s{i % 5}" for i in range(200)]
    pool_labels = ["increase" if i % 2 else "decrease" for i in range(200)]
    qids = [f"q{i}" for i in range(300)]
    qsrc = [f"s{i % 5}" for i in range(300)]
    for k in (1, 3, 4):
        rows = utils.choose_fewshot(qids, qsrc, pool_labels, pool_sources, k=k, seed=7)
        for src, r in zip(qsrc, rows):
            assert len(r) == len(set(r)) == k
            assert all(pool_sources[i] != src for i in r)
            labs = [pool_labels[i] for i in r]
            assert abs(labs.count("increase") - labs.count("decrease")) <= 1
    a = utils.choose_fewshot(qids, qsrc, pool_labels, pool_sources, k=4, seed=7)
    b = utils.choose_fewshot(qids[::-1], qsrc[::-1], pool_labels, pool_sources, k=4, seed=7)[::-1]
    assert a == b  # independent of query order
    assert a != utils.choose_fewshot(qids, qsrc, pool_labels, pool_sources, k=4, seed=8)
    with pytest.raises(ValueError, match="from sources other than 's0'"):
        utils.choose_fewshot(["q"], ["s0"], ["increase", "decrease"], ["s0", "s1"], k=2)


def test_fewshot_group_sends_k_labelled_examples_before_the_query(env_hub):
    lm = RecordingLM()
    res = evaluate(lm, ["vocalgrad_fewshot_noise"], metadata={"vocalgrad_fewshot_k": 3}, log_samples=True)
    assert len(lm.seen) == 2 * N_SOURCES
    question = prompts.build_prompt("noise", "audioref")      # the explicit audio-reference prompt
    for q, s in zip(lm.seen, res["samples"]["vocalgrad_fewshot_noise"]):
        doc = s["doc"]
        assert len(q.audios) == 4 and q.clip_id == doc["id"]          # 3 examples, then the query
        ex_ids = [a.clip_id for a in q.audios[:3]]
        assert ex_ids == doc["fewshot_ids"]
        assert all(vocalgrad.parse_clip_id(e)["source_id"] != doc["source_id"] for e in ex_ids)  # no leak
        assert all(vocalgrad.parse_clip_id(e)["category"] == "noise" for e in ex_ids)
        assert [vocalgrad.parse_clip_id(e)["direction"] for e in ex_ids] == doc["fewshot_labels"]
        assert kinds(q) == ["text", "audio"] * 4 + ["text"]
        assert q.prompt.startswith("You will receive 3 labeled audio examples for background noise, "
                                   "followed by one query audio clip.")
        assert q.prompt.endswith("Query audio:\n" + AUDIO_MARKER + "\nFor the query audio, answer the same question:\n"
                                 + question)
        assert q.prompt.count(AUDIO_MARKER) == 4 and q.prompt.count(question) == 1
        for n, lab in enumerate(doc["fewshot_labels"], 1):
            assert f"Example {n} audio:\n{AUDIO_MARKER}\nExample {n} label: {lab}\n" in q.prompt
        y = q.audios[0]["array"]
        assert y.dtype == np.float32 and y.size > 1000
    assert res["results"]["vocalgrad_fewshot_noise"]["acc,none"] == 0.5
    # the examples are in the per-sample log by id (auditable), not as audio
    assert "fewshot_refs" in res["samples"]["vocalgrad_fewshot_noise"][0]["doc"]


def test_fewshot_default_is_two_examples_per_label_with_seed_1234(env_hub):
    lm = RecordingLM()
    res = evaluate(lm, ["vocalgrad_fewshot_pitch"], log_samples=True)
    assert utils.DEFAULT_FEWSHOT_K == 2 * prompts.FEWSHOT_PER_LABEL == 4
    for s in res["samples"]["vocalgrad_fewshot_pitch"]:
        labs = s["doc"]["fewshot_labels"]
        assert sorted(labs) == ["decrease", "decrease", "increase", "increase"]
    docs = [s["doc"] for s in res["samples"]["vocalgrad_fewshot_pitch"]]
    again = utils.load_task_dataset(vocalgrad_config="pitch", vocalgrad_category="pitch", vocalgrad_fewshot=True,
                                    vocalgrad_fewshot_seed=prompts.FEWSHOT_SEED)["test"]
    assert {d["id"]: d["fewshot_ids"] for d in docs} == dict(zip(again["id"], again["fewshot_ids"]))


def test_fewshot_k_zero_is_the_plain_prompt(env_hub):
    lm = RecordingLM()
    evaluate(lm, ["vocalgrad_fewshot_echo"], metadata={"vocalgrad_fewshot_k": 0})
    q = lm.seen[0]
    assert len(q.audios) == 1 and kinds(q) == ["text", "audio"]
    assert q.parts()[0][1] == vocalgrad.default_prompt("echo")


def test_oracle_answers_in_the_task_words_and_judges_the_query_clip(env_hub):
    from harness_tasks.models.oracle import OracleLM

    tasks = ["vocalgrad_paraphrase_rise_fall", "vocalgrad_paraphrase_freq_up_down", "vocalgrad_yesno_volume", "vocalgrad_fewshot_volume",
             "vocalgrad_audiofirst_volume"]
    res = evaluate(OracleLM(), tasks, metadata={"vocalgrad_fewshot_k": 2}, log_samples=True)
    r = res["results"]
    assert r["vocalgrad_paraphrase_rise_fall"]["acc,none"] == 1.0 and r["vocalgrad_paraphrase_freq_up_down"]["acc,none"] == 1.0
    assert {s["resps"][0][0] for s in res["samples"]["vocalgrad_paraphrase_rise_fall"]} == {"rise", "fall"}
    assert {s["resps"][0][0] for s in res["samples"]["vocalgrad_paraphrase_freq_up_down"]} == {"upward", "downward"}
    assert r["vocalgrad_fewshot_volume"]["acc,none"] == 1.0   # the last clip is the query
    assert r["vocalgrad_audiofirst_volume"]["acc,none"] == 1.0
    # yes/no: increase clips -> yes, decrease -> no; the source clips are steady tones
    samples = res["samples"]["vocalgrad_yesno_volume"]
    assert all(s["resps"][0][0] == "yes" for s in samples if s["doc"]["direction"] == "increase")
    assert all(s["resps"][0][0] == "no" for s in samples if s["doc"]["direction"] == "decrease")


def test_num_fewshot_flag_becomes_the_example_count(env_hub, tmp_path):
    import json

    from harness_tasks.cli import _fewshot_to_metadata, main

    assert _fewshot_to_metadata(["--num_fewshot", "3", "--tasks", "x"], ["vocalgrad_fewshot"]) == [
        "--tasks", "x", "--metadata", '{"vocalgrad_fewshot_k": 3}']
    merged = _fewshot_to_metadata(["--metadata", '{"vocalgrad_dataset": "d"}', "--num_fewshot=1"], ["vocalgrad"])
    assert json.loads(merged[1]) == {"vocalgrad_dataset": "d", "vocalgrad_fewshot_k": 1}
    assert _fewshot_to_metadata(["--num_fewshot", "3"], ["mmlu"]) == ["--num_fewshot", "3"]  # not ours: untouched
    out = tmp_path / "out"
    assert main(["--model", "vocalgrad-constant", "--tasks", "vocalgrad_fewshot_pitch", "--num_fewshot", "1",
                 "--output_path", str(out), "--log_samples"]) == 0
    (samples,) = out.rglob("samples_vocalgrad_fewshot_pitch_*.jsonl")
    docs = [json.loads(line)["doc"] for line in samples.read_text().splitlines()]
    assert len(docs) == 2 * N_SOURCES and all(len(d["fewshot_ids"]) == 1 for d in docs)
