"""vocalgrad-openai as the makers serve their models today, against loopback servers that behave as theirs
do (tests/provider_servers.py): Gemini 3's thinking level at the maker's default temperature beside
Gemini 2.5's budget, blocked replies named blocked and asked once, a deadline that bounds a dripping
reply, and settings out of range refused in one line."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("openai")
pytest.importorskip("google.genai")

from _timing import hang_guard  # noqa: E402
from provider_servers import DripServer, GeminiServer, OpenAIServer, _snake  # noqa: E402
from test_models_openai import PROMPT, Req, ramp_clip  # noqa: E402

from harness_tasks import metrics  # noqa: E402
from harness_tasks.models.args import ModelArgumentError  # noqa: E402
from harness_tasks.models.openai import OpenAIAudioLM  # noqa: E402
from harness_tasks.models.providers.gemini import BLOCK_FINISH, THINKING_LEVELS, profile_of  # noqa: E402
from harness_tasks.parsing import classify_answer  # noqa: E402

DIRECTIONS = ["increase", "decrease"] * 2


@pytest.fixture(params=[(GeminiServer, "VG_GEMINI_KEY", "test-key")])
def gemini_server(request, monkeypatch):
    yield from _serve(request.param, monkeypatch)


@pytest.fixture(params=[(OpenAIServer, "VG_OPENAI_KEY", "sk-test")])
def openai_server(request, monkeypatch):
    yield from _serve(request.param, monkeypatch)


def _serve(param, monkeypatch):
    cls, env, key = param
    monkeypatch.setenv(env, key)
    server = cls()
    yield server
    server.close()


def _reqs(prefix: str, n: int = len(DIRECTIONS)):
    return [Req(PROMPT, ramp_clip(d, f"{prefix}{i}")) for i, d in enumerate(DIRECTIONS[:n])]


def _gemini(server, model, **kw):
    kw = {"concurrency": 2, "backoff": 0.01, "answer_log": "none", **kw}
    return OpenAIAudioLM(model=model, provider="gemini", base_url=server.url, api_key_env="VG_GEMINI_KEY", **kw)


def _config(body: dict) -> dict:
    """``generationConfig`` with its names as Google's proto JSON parser reads them (lowerCamel or snake_case
    alike: google-genai 3.6 sends ``thinkingConfig.thinking_level``, Google's REST docs ``thinkingLevel``)."""
    cfg = body.get("generationConfig") or body.get("generation_config") or {}
    return {_snake(k): ({_snake(a): b for a, b in v.items()} if isinstance(v, dict) else v) for k, v in cfg.items()}


def _thinking(body: dict) -> dict:
    return _config(body).get("thinking_config") or {}


# ----------------------------------------------------------------------------- Gemini profiles
def test_profiles_by_model_name_and_the_sdk_levels():
    """The level names are those of the installed SDK's ThinkingLevel; 2.x names keep the budget."""
    from google.genai import types

    assert set(THINKING_LEVELS) == {lv.value.lower() for lv in types.ThinkingLevel} - {"thinking_level_unspecified"}
    assert set(types.ThinkingConfig.model_fields) >= {"thinking_level", "thinking_budget"}
    assert {f.value for f in types.FinishReason} >= BLOCK_FINISH
    for name, want in [("gemini-2.5-flash", "budget"), ("gemini-2.5-pro", "budget"), ("models/gemini-2.0-flash", "budget"),
                       ("gemini-3-flash-preview", "level"), ("gemini-3.1-pro-preview", "level"),
                       ("gemini-3.5-flash", "level"), ("gemini-10-ultra", "level"), ("gemini-flash-latest", "level"),
                       ("gemini-25-flash", "level")]:       # 25 is a major version, not 2.5
        assert profile_of(name) == want, name


def test_gemini3_request_carries_a_thinking_level_and_no_temperature(gemini_server):
    lm = _gemini(gemini_server, "gemini-3.5-flash")
    got = [classify_answer(a)[0] for a in lm.generate_until(_reqs("g3"), disable_tqdm=True)]
    assert got == DIRECTIONS and lm.n_errors == 0
    for r in gemini_server.requests:
        cfg = _config(r["body"])
        assert _thinking(r["body"]) == {"thinking_level": "LOW"}           # the SDK's value: upper case
        assert "temperature" not in cfg and "top_p" not in cfg and "thinking_budget" not in _thinking(r["body"])
        assert cfg["max_output_tokens"] == 128 + 4096                      # the answer + the reasoning room
    card = lm.model_card()
    assert card["decoding"]["sampling"].startswith("sampled at the maker's default")
    assert card["decoding"]["body"]["generation_config"]["thinking_config"] == {"thinking_level": "low"}
    assert card["reasoning"]["thinks"] is True and card["reasoning"]["budget"] == 4096


def test_gemini3_user_settings_are_sent_as_set(gemini_server):
    lm = _gemini(gemini_server, "gemini-3.1-pro-preview", temperature=0.5, thinking_level="high",
                 reasoning_budget=2000)
    lm.generate_until(_reqs("g3u", 1), disable_tqdm=True)
    body = gemini_server.requests[-1]["body"]
    assert _config(body)["temperature"] == 0.5 and _thinking(body) == {"thinking_level": "HIGH"}
    assert _config(body)["max_output_tokens"] == 128 + 2000
    assert lm.model_card()["decoding"]["sampling"] == "sampled at temperature 0.5"


def test_gemini3_refuses_a_budget_and_a_zero_reasoning_room(gemini_server):
    with pytest.raises(ModelArgumentError, match=r"thinking_budget: gemini-3.5-flash is a Gemini 3 .*thinking_level="):
        _gemini(gemini_server, "gemini-3.5-flash", thinking_budget=1024)
    with pytest.raises(ModelArgumentError, match="reasoning_budget=0 leaves gemini-3.5-flash no room"):
        _gemini(gemini_server, "gemini-3.5-flash", reasoning_budget=0)
    with pytest.raises(ModelArgumentError, match="thinking_level must be one of minimal, low"):
        _gemini(gemini_server, "gemini-3.5-flash", thinking_level="max")
    with pytest.raises(ModelArgumentError, match="thinking_level is a Gemini 3 setting; gemini-2.5-flash"):
        _gemini(gemini_server, "gemini-2.5-flash", thinking_level="low")
    lm = _gemini(gemini_server, "gemini-3.5-flash", thinking_budget="none", thinking_level="none")
    lm.generate_until(_reqs("g3n", 1), disable_tqdm=True)
    assert _thinking(gemini_server.requests[-1]["body"]) == {}           # the model's own thinking
    assert "temperature" not in _config(gemini_server.requests[-1]["body"])


def test_a_level_the_model_refuses_stops_in_one_line(gemini_server):
    from harness_tasks.models.base import FatalAdapterError

    lm = _gemini(gemini_server, "gemini-3.1-pro-preview", thinking_level="minimal")
    with pytest.raises(FatalAdapterError) as err:
        lm.generate_until(_reqs("g3m"), disable_tqdm=True)
    assert "\n" not in str(err.value) and "'thinking_level'" in str(err.value)
    assert len(gemini_server.requests) < len(DIRECTIONS) + 2            # stopped, not one error per clip


def test_gemini25_keeps_the_budget_and_greedy(gemini_server):
    lm = _gemini(gemini_server, "gemini-2.5-flash")
    lm.generate_until(_reqs("g25", 1), disable_tqdm=True)
    cfg = _config(gemini_server.requests[-1]["body"])
    assert cfg["thinking_config"] == {"thinking_budget": 1024} and cfg["temperature"] == 0 and cfg["top_p"] == 1
    assert lm.model_card()["decoding"]["sampling"] == "greedy (temperature 0)"


def test_gemini_openai_endpoint_on_gemini3_leaves_the_temperature_out():
    lm = OpenAIAudioLM(model="gemini-3.5-flash", provider="gemini-openai", answer_log="none",
                       base_url="http://127.0.0.1:9/v1beta/openai")
    body = lm.provider.build([("text", "q")], system=None, budget=128)
    assert "temperature" not in body and "top_p" not in body
    lm25 = OpenAIAudioLM(model="gemini-2.5-flash", provider="gemini-openai", answer_log="none",
                         base_url="http://127.0.0.1:9/v1beta/openai")
    assert lm25.provider.build([("text", "q")], system=None, budget=128)["temperature"] == 0


def test_dry_run_prints_what_each_profile_sends(gemini_server, capsys):
    for model, want, absent in [("gemini-3.5-flash", '"thinking_level": "low"', '"temperature"'),
                                ("gemini-2.5-flash", '"thinking_budget": 1024', '"thinking_level"')]:
        lm = _gemini(gemini_server, model, dry_run="true")
        with pytest.raises(SystemExit) as done:
            lm.generate_until(_reqs("dry", 2), disable_tqdm=True)
        assert done.value.code == 0
        line = capsys.readouterr().out
        assert want in line and absent not in line and "nothing was sent" in line, line
    assert gemini_server.requests == []


# ----------------------------------------------------------------------------- blocked replies
@pytest.mark.parametrize("block", ["SAFETY", "SAFETY+text", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII",
                                   "prompt:SAFETY"])
def test_gemini_blocks_are_named_blocked_and_asked_once(gemini_server, block):
    gemini_server.block = block
    lm = _gemini(gemini_server, "gemini-3.5-flash", concurrency=1)
    answers = lm.generate_until(_reqs("b"), disable_tqdm=True)
    assert [classify_answer(a)[1] for a in answers] == ["blocked"] * len(DIRECTIONS)
    assert len(gemini_server.requests) == len(DIRECTIONS)              # no empty-reply re-ask, no 256-token retry
    assert lm.n_blocked == len(DIRECTIONS) and lm.n_errors == 0 and lm.n_empty == 0 and lm.n_retried == 0
    recs = [metrics.score_answer(a, d) for a, d in zip(answers, DIRECTIONS)]
    assert metrics.blocked_rate(recs) == 1.0 and metrics.error_rate(recs) == 0.0 and metrics.accuracy(recs) == 0.0


def test_a_gemini_max_tokens_reply_is_not_a_block(gemini_server):
    """The near miss: an empty MAX_TOKENS candidate is still re-asked with a larger budget, not named blocked."""
    lm = _gemini(gemini_server, "gemini-2.5-flash", thinking_budget="none", max_tokens=100, concurrency=1,
                 empty_retries=0)
    answers = lm.generate_until(_reqs("mt", 1), disable_tqdm=True)
    assert classify_answer(answers[0])[1] == "error" and lm.n_blocked == 0


@pytest.mark.parametrize("block", ["content_filter", "content_filter_text", "refusal"])
def test_openai_blocks_are_named_blocked_and_asked_once(openai_server, block):
    openai_server.block = block
    lm = OpenAIAudioLM(model="gpt-audio-1.5", provider="openai", base_url=openai_server.url,
                       api_key_env="VG_OPENAI_KEY", answer_log="none", concurrency=2)
    answers = lm.generate_until(_reqs("ob"), disable_tqdm=True)
    assert [classify_answer(a)[1] for a in answers] == ["blocked"] * len(DIRECTIONS)
    assert len(openai_server.requests) == len(DIRECTIONS) and lm.n_blocked == len(DIRECTIONS)
    assert all("increase" not in a and "decrease" not in a for a in answers)   # the blocked text is not kept


def test_a_blocked_answer_is_kept_in_the_answer_log_and_not_asked_again(openai_server, tmp_path):
    openai_server.block = "content_filter"
    args = dict(model="gpt-audio-1.5", provider="openai", base_url=openai_server.url, api_key_env="VG_OPENAI_KEY",
                answer_log=str(tmp_path / "log"), concurrency=1)
    OpenAIAudioLM(**args).generate_until(_reqs("lg", 2), disable_tqdm=True)
    again = OpenAIAudioLM(**args).generate_until(_reqs("lg", 2), disable_tqdm=True)
    assert len(openai_server.requests) == 2 and [classify_answer(a)[1] for a in again] == ["blocked"] * 2


def test_the_sdk_types_carry_the_openai_block_signals():
    from openai.types.chat import ChatCompletionMessage
    from openai.types.chat.chat_completion import Choice

    assert "content_filter" in str(Choice.model_fields["finish_reason"].annotation)
    assert "refusal" in ChatCompletionMessage.model_fields


def test_the_stale_re_ask_line_is_gone(gemini_server, caplog):
    """An empty reply re-asked once logs one re-ask (4x), never a 16x one that is not sent."""
    import logging

    caplog.set_level(logging.INFO, logger="vocalgrad")
    lm = _gemini(gemini_server, "gemini-2.5-flash", thinking_budget="none", max_tokens=100, concurrency=1)
    lm.generate_until(_reqs("x", 1), disable_tqdm=True)
    lines = [r.getMessage() for r in caplog.records if "asking again" in r.getMessage()]
    assert len(lines) == 1 and "4x" in lines[0] and len(gemini_server.requests) == 2
    assert not any("16x" in r.getMessage() for r in caplog.records)


# ----------------------------------------------------------------------------- deadlines and arguments
@pytest.mark.parametrize("provider", ["openai-compatible", "gemini"])
def test_a_dripping_server_ends_by_the_deadline(provider, monkeypatch):
    """One byte every 0.5 s never trips a per-read timeout; timeout=3 still ends each attempt, and the run.
    Margins are generous: a behaviour, not a speed (the reply would take 2000 s to drip)."""
    monkeypatch.setenv("VG_GEMINI_KEY", "k")
    server = DripServer(0.5)
    try:
        lm = OpenAIAudioLM(model="gemini-3.5-flash" if provider == "gemini" else "tiny", provider=provider,
                           base_url=server.root if provider == "gemini" else server.url, api_key_env="VG_GEMINI_KEY",
                           answer_log="none", timeout=3, max_retries=1, backoff=0.01, concurrency=2)
        out: list = []
        worker = threading.Thread(target=lambda: out.extend(lm.generate_until(_reqs("d", 2), disable_tqdm=True)),
                                  daemon=True)
        worker.start()
        worker.join(hang_guard(120))  # the drip takes 2000 s: ending at all is the deadline at work
        assert not worker.is_alive(), "the run did not end"
        assert [classify_answer(a)[1] for a in out] == ["error", "error"]
        assert server.connections >= 2                                 # each clip was sent, then cut off
    finally:
        server.close()


@pytest.mark.parametrize("arg, value, words", [
    ("timeout", -1, "timeout must be a finite number > 0"), ("timeout", 0, "timeout must be a finite number > 0"),
    ("timeout", "inf", "timeout must be a finite number > 0"), ("concurrency", "1.5", "concurrency must be a whole"),
    ("concurrency", 0, "concurrency must be a whole number >= 1"),
    ("max_retries", -1, "max_retries must be a whole number >= 0"),
    ("backoff", "nan", "backoff must be a finite number >= 0, got 'nan'"),
    ("backoff", -0.5, "backoff must be a finite number >= 0"),
    ("empty_budget_factor", 0.5, "empty_budget_factor must be a finite number >= 1"),
    ("empty_retries", -1, "empty_retries must be a whole number >= 0"),
])
def test_out_of_range_settings_are_refused_in_one_line(arg, value, words):
    with pytest.raises(ModelArgumentError) as err:
        OpenAIAudioLM(model="m", base_url="http://127.0.0.1:9/v1", answer_log="none", **{arg: value})
    assert words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("arg", ["concurrency=1.5", "max_retries=2.5", "empty_retries=0.5", "concurrency=true",
                                 "max_retries=inf"])
def test_a_fraction_lm_eval_parsed_is_not_cut_to_a_whole_number(arg):
    """lm-eval reads ``concurrency=1.5`` as the float 1.5 (and ``true`` as a bool), not the string the test above
    passes: it is refused, never silently cut to 1 (and ``inf``, a float too, is refused in one line, not an
    OverflowError)."""
    name = arg.split("=")[0]
    with pytest.raises(ModelArgumentError, match=rf"{name} must be a whole number"):
        OpenAIAudioLM.create_from_arg_string(f"model=m,base_url=http://127.0.0.1:9/v1,answer_log=none,{arg}")
    lm = OpenAIAudioLM.create_from_arg_string("model=m,base_url=http://127.0.0.1:9/v1,answer_log=none,concurrency=2.0")
    assert lm.concurrency == 2 and isinstance(lm.concurrency, int)   # a whole number written with a point


def test_reasoning_budget_none_on_the_command_line_is_none():
    """lm-eval reads ``reasoning_budget=none`` as Python's None, not the string the error message offers: it is
    no reasoning room (0), as ``"none"`` is, never the 4096 of ``auto``; fractions and ``inf`` are refused in
    one line."""
    base = "model=google/gemma-4-E4B-it,base_url=http://127.0.0.1:9/v1,answer_log=none,thinking=on,"
    for value in ("none", '"none"', "0"):
        assert OpenAIAudioLM.create_from_arg_string(base + f"reasoning_budget={value}").reasoning_budget == 0, value
    assert OpenAIAudioLM.create_from_arg_string(base + "reasoning_budget=auto").reasoning_budget == 4096
    for value in ("1.5", "inf"):
        with pytest.raises(ModelArgumentError, match="reasoning_budget must be"):
            OpenAIAudioLM.create_from_arg_string(base + f"reasoning_budget={value}")


def test_greedy_none_on_the_command_line_sends_nothing():
    """``greedy=none`` reaches the adapter as Python's None (lm-eval's reading): no greedy fields, as documented,
    not the provider's default set."""
    base = "base_url=http://127.0.0.1:9/v1,answer_log=none,"
    for route in ("model=m", "model=gpt-audio-1.5,provider=openai"):
        lm = OpenAIAudioLM.create_from_arg_string(base + route + ",greedy=none")
        assert lm.greedy == "none" and not set(lm.provider.fields) & {"top_p", "frequency_penalty"}, route
    assert OpenAIAudioLM.create_from_arg_string(base + "model=m").greedy == "full"   # unset: the route's default


def test_the_range_edges_are_accepted():
    lm = OpenAIAudioLM(model="m", base_url="http://127.0.0.1:9/v1", answer_log="none", timeout=0.001,
                       concurrency=1, max_retries=0, backoff=0, empty_retries=0, empty_budget_factor=1)
    assert (lm.timeout, lm.concurrency, lm.max_retries, lm.backoff) == (0.001, 1, 0, 0.0)


def test_unknown_model_arguments_are_refused_in_one_line():
    with pytest.raises(ModelArgumentError) as err:
        OpenAIAudioLM(model="m", base_url="http://127.0.0.1:9/v1", api_key="sk-x")
    assert "api_key is not a model argument" in str(err.value) and "api_key_env" in str(err.value)
    with pytest.raises(ModelArgumentError) as err:
        OpenAIAudioLM(model="m", base_url="http://127.0.0.1:9/v1", temprature=0)
    msg = str(err.value)
    assert "unknown model argument(s) temprature" in msg and "temperature" in msg and "\n" not in msg
    assert isinstance(err.value, TypeError)                             # as Python names a wrong keyword


@pytest.mark.parametrize("args, said", [
    ({"timeout": -1}, "--model_args timeout must be a finite number > 0, got -1"),
    ({"concurrency": 0}, "--model_args concurrency must be a whole number >= 1, got 0"),
    ({"api_key": "sk-x"}, "api_key is not a model argument"),
    ({"temprature": 0}, "unknown model argument(s) temprature"),
])
def test_a_refusal_reaches_the_command_line_as_one_line(args, said, capsys):
    """vocalgrad-eval's error path: exit status 2 and one line, no traceback."""
    from generation.cli_errors import run_command

    assert run_command("vocalgrad-eval", lambda: OpenAIAudioLM(model="m", base_url="http://127.0.0.1:9/v1",
                                                               answer_log="none", **args)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err
