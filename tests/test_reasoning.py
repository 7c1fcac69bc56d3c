"""Reasoning blocks on every route (the package harness_tasks/models/thinking/, the hooks):
the parser reads after the block, the block stays in the answer log and the sample log's reply, the
reasoning budget is added to the task's, and cut-offs are counted."""

import json

import numpy as np
import pytest

from harness_tasks import hooks
from harness_tasks.clip_audio import ClipAudio
from harness_tasks.models.args import ModelArgumentError
from harness_tasks.models.base import VocalGradLM
from harness_tasks.models.thinking import (DEFAULT_REASONING_BUDGET, GEMMA4_CHANNEL, THINK, answer_text,
                                           split_reasoning)


@pytest.mark.parametrize("text, delims, opened, expected", [
    ("<think>up? down? decrease</think>\n\nincrease", THINK, False, ("up? down? decrease", "increase", False)),
    ("  <think>\nno close, it decreases", THINK, False, ("no close, it decreases", "", True)),
    ("rises, so decrease?</think>increase", THINK, False, ("rises, so decrease?", "increase", False)),  # template opened it
    ("hmm, increase or decrease", THINK, True, ("hmm, increase or decrease", "", True)),
    ("increase", THINK, False, ("", "increase", False)),
    ("<think></think>increase", THINK, True, ("", "increase", False)),
    ("<|channel>thought\nit decreases?<channel|>increase", GEMMA4_CHANNEL, False, ("it decreases?", "increase", False)),
    ("<|channel>thought\nstill thinking, decrease", None, False, ("", "<|channel>thought\nstill thinking, decrease",
                                                                  False)),
    ("<|channel>thought\nstill thinking, decrease", GEMMA4_CHANNEL, False, ("still thinking, decrease", "", True)),
    ("I think <think> is a tag; increase", THINK, False, ("", "I think <think> is a tag; increase", False)),
])
def test_split_reasoning(text, delims, opened, expected):
    assert split_reasoning(text, delims, opened=opened) == expected


def test_split_reasoning_defaults_know_both_formats_and_leave_non_text_alone():
    assert split_reasoning("<think>a</think>decrease") == ("a", "decrease", False)
    assert split_reasoning("<|channel>thought\na<channel|>decrease") == ("a", "decrease", False)
    assert split_reasoning(None) == ("", None, False)
    assert answer_text("<think>increase increase</think> decrease") == "decrease"
    with pytest.raises(ValueError, match="pairs"):
        split_reasoning("x", [("<think>", "")])


def _doc():
    return {"direction": "increase", "label": "increase", "category": "volume"}


def test_hooks_parse_after_the_block_on_every_scorer():
    # the reasoning names "decrease"; only the answer after the block counts
    out = hooks.process_results(_doc(), ["<think>it could decrease</think>increase"])
    assert out["acc"] == 1.0 and out["acc_parsed"].startswith("increase:increase:parsed:exact")
    cut = hooks.process_results(_doc(), ["<think>it could increase, or"])       # cut off: no answer
    assert cut["acc"] == 0.0 and ":none:unparsed:" in cut["acc_parsed"]
    src = hooks.process_results_sources(_doc(), ["<think>decrease</think>increase"])
    assert src["increase_ratio"].split(":")[1] == "increase"
    yn = hooks.process_results_yesno({"label": "yes"}, ["<think>no? yes?</think>yes"])
    assert yn["acc"] == 1.0


def test_analysis_scoring_of_raw_replies_reads_after_the_block_too():
    from harness_tasks import metrics

    rec = metrics.score_answer("<think>decrease? decrease.</think>Increase.", "increase")
    assert (rec["pred"], rec["status"], rec["exact"], rec["correct"]) == ("increase", "parsed", True, True)
    assert metrics.score_answer("<think>increase, surely", "increase")["status"] == "unparsed"


class _Scripted(VocalGradLM):
    """Answers from a script keyed by the budget it is given (a model that thinks for `think` tokens)."""

    RETRIES = True

    def __init__(self, *, think=10, thinks=True, opened=False, **kw):
        super().__init__(**kw)
        self.think, self.thinks, self.opened, self.budgets = int(think), thinks, opened, []

    def reasoning_format(self):
        return {"thinks": self.thinks, "delimiters": (THINK,), "opened": self.opened}

    def answer(self, queries):
        out = []
        for q in queries:
            self.budgets.append(q.max_new_tokens)
            head = "" if self.opened else "<think>"
            body = "decrease " * self.think
            out.append(f"{head}{body}</think>increase" if q.max_new_tokens > self.think
                       else f"{head}{body[:q.max_new_tokens]}")
        return out


def _ask(lm, n=4, toks=128):
    clip = ClipAudio("c", {"array": np.zeros(100, np.float32), "sampling_rate": 8000})
    return lm.generate_until([("p", {"until": [], "max_gen_toks": toks}, {"audio": [clip]})] * n, disable_tqdm=True)


def test_reasoning_budget_is_added_and_the_reply_keeps_the_block(tmp_path):
    lm = _Scripted(think=1000, answer_log=str(tmp_path / "log"))
    answers = _ask(lm)
    assert lm.budgets == [128 + DEFAULT_REASONING_BUDGET] * 4                  # the default budget on top
    assert all(a.startswith("<think>decrease") and a.endswith("</think>increase") for a in answers)
    assert [hooks.process_results(_doc(), [a])["acc"] for a in answers] == [1.0] * 4
    logged = [json.loads(line) for f in (tmp_path / "log").glob("*.jsonl") for line in f.read_text().splitlines()]
    assert logged and all("<think>" in rec["answer"] for rec in logged)       # the raw reply in the answer log
    card = lm.model_card()["reasoning"]
    assert card["budget"] == DEFAULT_REASONING_BUDGET and card["cut_off"] == 0 and card["with_reasoning"] == 4


def test_a_model_thinking_past_the_budget_is_counted_cut_off():
    lm = _Scripted(think=5000, reasoning_budget=100, answer_log="none")
    answers = _ask(lm, n=3)
    # first try 128 + 100, then the unparsed retry 256 + 100; both end inside the reasoning
    assert lm.budgets == [228] * 3 + [356] * 3
    assert all(a.retried and "</think>" not in a for a in answers)
    card = lm.model_card()["reasoning"]
    assert (card["answers"], card["cut_off"], card["cut_off_share"], card["budget"]) == (3, 3, 1.0, 100)
    assert [hooks.process_results(_doc(), [a])["acc"] for a in answers] == [0.0] * 3


def test_template_opened_block_is_restored_and_a_route_that_does_not_think_adds_nothing():
    lm = _Scripted(think=3, opened=True, answer_log="none")
    answers = _ask(lm, n=1)
    assert answers[0].startswith("<think>\n") and hooks.process_results(_doc(), answers)["acc"] == 1.0
    plain = _Scripted(think=3, thinks=False, answer_log="none")            # unknown model: no extra tokens,
    answers = _ask(plain, n=2)                                               # a leading block is still read past
    assert plain.budgets == [128, 128] and plain.model_card()["reasoning"]["with_reasoning"] == 2
    with pytest.raises(ModelArgumentError, match="reasoning_budget"):
        _Scripted(reasoning_budget="lots")
