"""vocalgrad-openai against loopback servers that behave as SGLang and vLLM do (tests/serving_servers.py):
the server told apart by ``/v1/models``, the audio part each takes, ``thinking`` reaching the chat
template, the reasoning budget of thinking checkpoints, and Gemma 4's channel markers kept."""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("openai")
pytest.importorskip("pydantic")

from serving_servers import THOUGHT_WORDS, SGLangServer, VLLMServer  # noqa: E402
from test_models_openai import PROMPT, Req, ramp_clip  # noqa: E402
from _timing import hang_guard  # noqa: E402

from harness_tasks.models.base import FatalAdapterError, ModelArgumentError  # noqa: E402
from harness_tasks.models.openai import OpenAIAudioLM  # noqa: E402
from harness_tasks.models.thinking import parse_thinking, split_reasoning  # noqa: E402
from harness_tasks.parsing import classify_answer, is_error_answer  # noqa: E402

DIRECTIONS = ["increase", "decrease", "decrease", "increase"]


@pytest.fixture
def servers():
    made = []

    def make(cls, model="Qwen/Qwen2-Audio-7B-Instruct", **kw):
        made.append(cls(model, **kw))
        return made[-1]

    yield make
    for s in made:
        s.close()


def _lm(server, **kw):
    args = dict(model=server.model, base_url=server.url, answer_log="none", timeout=hang_guard(10), max_retries=0, concurrency=1)
    return OpenAIAudioLM(**{**args, **kw})


def _answers(lm, prefix="c", retry=False):
    out = lm.generate_until([Req(PROMPT, ramp_clip(d, f"{prefix}{i}")) for i, d in enumerate(DIRECTIONS)],
                            disable_tqdm=True)
    return [classify_answer(lm.parser_text(a))[0] for a in out], out


def _parts(request) -> set[str]:
    return {p["type"] for m in request["body"]["messages"] for p in m["content"] if p["type"] != "text"}


# ----------------------------------------------------------------------------- A: the audio part
def test_sglang_is_asked_what_it_is_and_answers_every_clip_with_default_arguments(servers):
    sglang = servers(SGLangServer)
    lm = _lm(sglang, concurrency=4)
    answers, _ = _answers(lm)
    assert answers == DIRECTIONS and lm.n_errors == 0
    assert sglang.requests[0] == {"path": "/v1/models", "method": "GET"}
    assert [r.get("method") for r in sglang.requests].count("GET") == 1       # asked once
    assert all(_parts(r) == {"audio_url"} for r in sglang.posts) and len(sglang.posts) == len(DIRECTIONS)
    assert lm.provider.server == "sglang" and lm.model_card()["environment"]["owned_by"] == "sglang"
    assert "audio_url parts" in lm.model_card()["prompt_layout"]


def test_vllm_keeps_input_audio_and_an_explicit_part_is_kept(servers):
    vllm = servers(VLLMServer)
    lm = _lm(vllm)
    assert _answers(lm)[0] == DIRECTIONS and all(_parts(r) == {"input_audio"} for r in vllm.posts)
    assert lm.provider.server == "vllm"
    lm = _lm(vllm, audio_format="audio_url")
    assert _answers(lm, "u")[0] == DIRECTIONS and _parts(vllm.posts[-1]) == {"audio_url"}


def test_unknown_server_refusing_input_audio_is_switched_once_and_says_so(servers, caplog):
    hidden = servers(SGLangServer, models_list=False)          # a proxy in front of SGLang: no model list
    lm = _lm(hidden)
    with caplog.at_level(logging.WARNING, logger="vocalgrad"):
        answers, _ = _answers(lm)
    assert answers == DIRECTIONS and lm.n_errors == 0 and lm.provider.server is None
    assert [_parts(r) for r in hidden.posts] == [{"input_audio"}] + [{"audio_url"}] * len(DIRECTIONS)
    switched = [r.getMessage() for r in caplog.records if "refused input_audio parts" in r.getMessage()]
    assert len(switched) == 1 and "audio_format=audio_url" in switched[0]


def test_concurrent_requests_switch_once(servers, caplog):
    hidden = servers(SGLangServer, models_list=False)
    lm = _lm(hidden, concurrency=4)
    with caplog.at_level(logging.WARNING, logger="vocalgrad"):
        answers, _ = _answers(lm)
    assert answers == DIRECTIONS and lm.n_errors == 0
    assert sum("refused input_audio parts" in r.getMessage() for r in caplog.records) == 1
    assert sum(_parts(r) == {"audio_url"} for r in hidden.posts) == len(DIRECTIONS)


def test_a_chosen_part_the_server_refuses_stops_in_one_line_naming_the_setting(servers):
    sglang = servers(SGLangServer)
    lm = _lm(sglang, audio_format="input_audio")
    with pytest.raises(FatalAdapterError) as err:
        _answers(lm)
    msg = str(err.value)
    assert "\n" not in msg and "audio_format=audio_url" in msg and "HTTP 400" in msg
    assert len(sglang.posts) == 1                                  # stopped before the other clips


def test_a_400_that_names_no_audio_part_stays_a_per_clip_error(servers):
    vllm = servers(VLLMServer)
    vllm.validate = lambda body: (400, {"object": "error", "message": "prompt too long", "type": "Bad Request",
                                        "param": None, "code": 400})
    lm = _lm(vllm)
    _, raw = _answers(lm)
    assert all(is_error_answer(a) for a in raw) and not lm.provider._switched
    assert all(_parts(r) == {"input_audio"} for r in vllm.posts)


def test_audio_format_values_are_checked():
    with pytest.raises(ModelArgumentError, match="audio_format must be one of auto, input_audio, audio_url"):
        OpenAIAudioLM(model="m", base_url="http://127.0.0.1:9/v1", audio_format="wav", answer_log="none")
    with pytest.raises(ModelArgumentError, match="input_audio parts only"):
        OpenAIAudioLM(model="gpt-audio", provider="openai", audio_format="audio_url", answer_log="none")


# ----------------------------------------------------------------------------- B: thinking on servers
@pytest.mark.parametrize("value, mode", [(None, "auto"), ("", "auto"), ("AUTO", "auto"), (True, "on"), ("yes", "on"),
                                         ("off", "off"), (False, "off"), ("0", "off")])
def test_thinking_values(value, mode):
    assert parse_thinking(value) == mode


def test_thinking_refuses_other_words_and_hosted_providers():
    with pytest.raises(ModelArgumentError, match="thinking must be auto, on or off, got 'maybe'"):
        parse_thinking("maybe")
    with pytest.raises(ModelArgumentError, match="provider=openai-compatible.*reasoning_effort") as err:
        OpenAIAudioLM(model="gpt-audio", provider="openai", thinking="off", answer_log="none")
    assert "\n" not in str(err.value)
    OpenAIAudioLM(model="gpt-audio", provider="openai", thinking="auto", answer_log="none")   # the default passes


@pytest.mark.parametrize("cls, parser", [(SGLangServer, "qwen3"), (VLLMServer, "qwen3"), (VLLMServer, None)])
def test_a_thinking_checkpoint_gets_its_reasoning_budget_by_default(servers, cls, parser):
    server = servers(cls, model="Qwen/Qwen3-Omni-30B-A3B-Thinking", reasoning_parser=parser)
    lm = _lm(server)
    answers, raw = _answers(lm)
    assert answers == DIRECTIONS and lm.n_errors == 0 and lm.n_empty == 0
    assert all(r["body"]["max_tokens"] == 128 + 4096 for r in server.posts)
    assert all(split_reasoning(a)[0].startswith("it could increase") for a in raw)   # the reasoning kept in the log
    card = lm.model_card()["reasoning"]
    assert card["thinks"] and card["budget"] == 4096 and card["with_reasoning"] == len(DIRECTIONS)
    assert "chat_template_kwargs" not in server.posts[0]["body"]      # auto: the template's own default


@pytest.mark.parametrize("cls", [SGLangServer, VLLMServer])
def test_reasoning_past_the_budget_is_a_cut_off_not_an_error(servers, cls):
    server = servers(cls, model="Qwen/Qwen3-Omni-30B-A3B-Thinking", reasoning_parser="qwen3")
    lm = _lm(server, reasoning_budget=0, retry_unparsed=False)
    _, raw = _answers(lm)
    assert server.posts[0]["body"]["max_tokens"] == 128 < THOUGHT_WORDS
    assert not any(is_error_answer(a) for a in raw) and lm.n_empty == 0       # not re-asked as empty, not errors
    card = lm.model_card()["reasoning"]
    assert (card["cut_off"], card["answers"]) == (len(DIRECTIONS), len(DIRECTIONS))


def test_an_empty_reply_names_the_reasoning_budget(servers):
    vllm = servers(VLLMServer)
    vllm.model_output = lambda body, wav: ""
    lm = _lm(vllm, empty_retries=0)
    _, raw = _answers(lm)
    assert all(is_error_answer(a) and "raise reasoning_budget" in a and "thinking_budget" not in a for a in raw)


def test_gemma4_through_vllm_keeps_its_markers_and_parses(servers):
    vllm = servers(VLLMServer, model="google/gemma-4-E4B-it")
    lm = _lm(vllm, thinking="on")
    answers, raw = _answers(lm)
    body = vllm.posts[0]["body"]
    assert body["chat_template_kwargs"] == {"enable_thinking": True} and body["skip_special_tokens"] is False
    assert answers == DIRECTIONS and all(a.startswith("<|channel>thought\n") and "<channel|>" in a for a in raw)
    assert body["max_tokens"] == 128 + 4096 and lm.model_card()["reasoning"]["template_kwargs"] == {"enable_thinking": True}
    # the near miss: the same request with vLLM's default skip_special_tokens leaves the thought glued on
    plain = _lm(vllm, thinking="on", extra_body={"skip_special_tokens": True}, retry_unparsed=False)
    labels, raw = _answers(plain, "p")
    assert set(labels) == {None} and {classify_answer(plain.parser_text(a))[1] for a in raw} == {"ambiguous"}


def test_gemma4_through_vllms_reasoning_parser_is_put_back_together(servers):
    vllm = servers(VLLMServer, model="google/gemma-4-E4B-it", reasoning_parser="gemma4")
    lm = _lm(vllm, thinking="on")
    answers, raw = _answers(lm)
    assert answers == DIRECTIONS and all(split_reasoning(a)[0].startswith("it could increase") for a in raw)


def test_thinking_off_and_auto_reach_the_template_as_documented(servers):
    vllm = servers(VLLMServer, model="google/gemma-4-E4B-it")
    off = _lm(vllm, thinking="off")
    assert _answers(off)[0] == DIRECTIONS
    assert vllm.posts[-1]["body"]["chat_template_kwargs"] == {"enable_thinking": False}
    assert off.reasoning_budget == 0 and vllm.posts[-1]["body"]["max_tokens"] == 128
    auto = _lm(vllm, extra_body={"chat_template_kwargs": {"custom": 1}})
    assert _answers(auto, "a")[0] == DIRECTIONS
    body = vllm.posts[-1]["body"]
    assert body["chat_template_kwargs"] == {"custom": 1} and body["skip_special_tokens"] is False
    user = _lm(vllm, thinking="on", extra_body={"chat_template_kwargs": {"enable_thinking": False}})
    assert user.provider.fields["chat_template_kwargs"] == {"enable_thinking": False}      # the user's own wins
    plain = _lm(servers(VLLMServer))                                   # a family without special markers
    assert "skip_special_tokens" not in plain.provider.fields and "chat_template_kwargs" not in plain.provider.fields


def test_a_dry_run_counts_the_reasoning_budget_and_sends_nothing(servers, capsys):
    server = servers(VLLMServer, model="Qwen/Qwen3-Omni-30B-A3B-Thinking")
    lm = _lm(server, dry_run=True)
    with pytest.raises(SystemExit) as ended:
        _answers(lm)
    assert ended.value.code == 0 and server.requests == []
    assert f"at most {len(DIRECTIONS) * (128 + 4096):,} output tokens" in capsys.readouterr().out
