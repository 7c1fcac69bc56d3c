"""vocalgrad-openai's provider adapters against loopback servers that enforce each provider's documented
request schema (tests/provider_servers.py): OpenAI's chat completions with ``input_audio``, Gemini's
native generateContent with inline audio, and vLLM-style servers; a refused field stops the run in one line."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openai")
pytest.importorskip("google.genai")

from provider_servers import GeminiServer, OpenAIServer  # noqa: E402
from test_models_openai import PROMPT, Req, Server, ramp_clip  # noqa: E402

from harness_tasks.models.base import FatalAdapterError, ModelArgumentError  # noqa: E402
from harness_tasks.models.openai import OpenAIAudioLM  # noqa: E402
from harness_tasks.models.providers import detect  # noqa: E402
from harness_tasks.parsing import classify_answer  # noqa: E402

DIRECTIONS = ["increase", "decrease"] * 3


@pytest.fixture
def openai_server():
    s = OpenAIServer()
    yield s
    s.close()


@pytest.fixture
def gemini_server():
    s = GeminiServer()
    yield s
    s.close()


def _requests(prefix: str):
    return [Req(PROMPT, ramp_clip(d, f"{prefix}{i}")) for i, d in enumerate(DIRECTIONS)]


def _answers(lm, reqs):
    return [classify_answer(a)[0] for a in lm.generate_until(reqs, disable_tqdm=True)]


def test_provider_is_read_from_the_base_url():
    assert detect("https://api.openai.com/v1") == "openai"
    assert detect("https://generativelanguage.googleapis.com") == "gemini"
    assert detect("https://generativelanguage.googleapis.com/v1beta/openai/") == "gemini-openai"
    assert detect("http://localhost:8000/v1") == "openai-compatible"
    assert OpenAIAudioLM(model="gpt-audio-1.5", answer_log="none").provider_name == "openai"   # the default URL


def test_openai_default_request_is_accepted_and_answers_every_clip(openai_server, monkeypatch):
    monkeypatch.setenv("VG_OPENAI_KEY", "sk-test")
    openai_server.script = ["429", "429"]                     # rate limited twice: the SDK waits and retries
    lm = OpenAIAudioLM(model="gpt-audio-1.5", provider="openai", base_url=openai_server.url,
                       api_key_env="VG_OPENAI_KEY", answer_log="none", concurrency=2)
    assert _answers(lm, _requests("o")) == DIRECTIONS and lm.n_errors == 0
    bodies = [r["body"] for r in openai_server.requests if r["body"]]
    assert len(bodies) == len(DIRECTIONS) + 2
    body = bodies[-1]
    assert body["max_completion_tokens"] == 128 and "max_tokens" not in body and body["temperature"] == 0
    assert "repetition_penalty" not in body and "min_p" not in body
    assert [p["type"] for p in body["messages"][0]["content"]] == ["text", "input_audio"]
    assert lm.usage["prompt_tokens"] > 0 and lm.usage["completion_tokens"] == len(DIRECTIONS)
    assert lm.model_card()["decoding"]["provider"] == "openai"


def test_a_refused_field_stops_the_run_in_one_line(openai_server, monkeypatch):
    """vLLM's greedy fields sent to OpenAI's API: one line naming the field, not one error answer per clip."""
    monkeypatch.setenv("VG_OPENAI_KEY", "sk-test")
    lm = OpenAIAudioLM(model="gpt-audio-1.5", provider="openai-compatible", base_url=openai_server.url,
                       api_key_env="VG_OPENAI_KEY", answer_log="none", concurrency=2)
    reqs = [Req(PROMPT, ramp_clip("increase", f"s{i}")) for i in range(20)]
    with pytest.raises(FatalAdapterError) as err:
        lm.generate_until(reqs, disable_tqdm=True)
    message = str(err.value)
    assert "\n" not in message and "'repetition_penalty'" in message and "HTTP 400" in message
    assert "greedy=standard" in message
    assert len(openai_server.requests) <= 2                     # the requests already on the wire, no more


def test_fields_a_provider_refuses_are_refused_before_any_request():
    with pytest.raises(ModelArgumentError, match="repetition_penalty, min_p"):
        OpenAIAudioLM(model="gpt-audio-1.5", provider="openai", greedy="full", answer_log="none")
    with pytest.raises(ModelArgumentError, match="frequency_penalty"):
        OpenAIAudioLM(model="gemini-2.5-flash", provider="gemini", greedy="standard", answer_log="none")
    with pytest.raises(ModelArgumentError, match="input_audio"):
        OpenAIAudioLM(model="gpt-audio-1.5", provider="openai", audio_format="audio_url", answer_log="none")
    with pytest.raises(ModelArgumentError, match="provider must be"):
        OpenAIAudioLM(model="m", provider="azure", answer_log="none")


def test_bad_key_or_model_stops_the_run(openai_server, monkeypatch):
    monkeypatch.setenv("VG_OPENAI_KEY", "sk-test")
    lm = OpenAIAudioLM(model="gpt-4o", provider="openai", base_url=openai_server.url, api_key_env="VG_OPENAI_KEY",
                       answer_log="none", concurrency=1)
    with pytest.raises(FatalAdapterError, match="HTTP 404.*model"):
        lm.generate_until(_requests("m")[:3], disable_tqdm=True)
    assert len(openai_server.requests) == 1


def test_gemini_native_request_answers_every_clip(gemini_server, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "g-test")
    gemini_server.script = ["429"]                              # RESOURCE_EXHAUSTED once: the SDK retries
    lm = OpenAIAudioLM(model="gemini-2.5-flash", provider="gemini", base_url=gemini_server.url, backoff=0.01,
                       answer_log="none", concurrency=2, system_prompt="Be brief.")
    assert _answers(lm, _requests("g")) == DIRECTIONS and lm.n_errors == 0 and lm.n_empty == 0
    req = gemini_server.requests[-1]
    assert req["headers"]["x-goog-api-key"] == "g-test"
    body = req["body"]
    cfg = body["generationConfig"]
    assert cfg["temperature"] == 0 and cfg["maxOutputTokens"] == 128 + 1024
    assert json.dumps(cfg["thinkingConfig"]) in ('{"thinking_budget": 1024}', '{"thinkingBudget": 1024}')
    parts = body["contents"][0]["parts"]
    assert parts[0] == {"text": PROMPT} and parts[1]["inlineData"]["mime_type"] == "audio/wav"
    assert body["systemInstruction"]["parts"][0]["text"] == "Be brief."
    assert lm.usage["thoughts_token_count"] > 0


def test_gemini_thinking_eats_a_bare_budget(gemini_server, monkeypatch):
    """Without a thinking budget the model's own thinking fills 128 tokens: empty, then asked with 4x."""
    monkeypatch.setenv("GEMINI_API_KEY", "g-test")
    lm = OpenAIAudioLM(model="gemini-2.5-flash", provider="gemini", base_url=gemini_server.url, backoff=0.01,
                       answer_log="none", concurrency=1, thinking_budget="none")
    assert _answers(lm, _requests("t")[:2]) == DIRECTIONS[:2]
    assert lm.n_empty == 2 and lm.n_cut == 2
    assert [r["body"]["generationConfig"]["maxOutputTokens"] for r in gemini_server.requests[:2]] == [128, 512]


@pytest.mark.parametrize("args,field", [({"model": "gemini-2.5-pro", "thinking_budget": 0}, "thinking_budget"),
                                        ({"model": "gemini-2.5-flash", "extra_body": {"cachedContents": "x"}},
                                         "cachedContents")])
def test_gemini_refused_field_stops_the_run(gemini_server, monkeypatch, args, field):
    monkeypatch.setenv("GEMINI_API_KEY", "g-test")
    lm = OpenAIAudioLM(provider="gemini", base_url=gemini_server.url, backoff=0.01, answer_log="none",
                       concurrency=1, **args)
    with pytest.raises(FatalAdapterError) as err:
        lm.generate_until(_requests("r"), disable_tqdm=True)
    assert f"refused the request field '{field}'" in str(err.value) and "\n" not in str(err.value)
    assert len(gemini_server.requests) == 1


def test_vllm_style_server_still_gets_the_full_greedy_fields(tmp_path):
    server = Server()
    try:
        lm = OpenAIAudioLM(model="Qwen/Qwen2-Audio-7B-Instruct", base_url=server.url, answer_log="none")
        assert lm.provider_name == "openai-compatible"
        assert _answers(lm, _requests("v")[:2]) == DIRECTIONS[:2]
        body = server.requests[0]["body"]
        assert body["max_tokens"] == 128 and body["temperature"] == 0
        assert {k: body[k] for k in ("top_p", "frequency_penalty", "presence_penalty", "repetition_penalty",
                                     "min_p")} == {"top_p": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0,
                                                   "repetition_penalty": 1.0, "min_p": 0.0}
        assert "provider" not in lm.identity()["endpoint"]          # answer-log keys of such runs are unchanged
    finally:
        server.close()


def test_dry_run_counts_what_a_paid_run_would_send_and_sends_nothing(gemini_server, capsys, tmp_path):
    lm = OpenAIAudioLM(model="gemini-2.5-flash", provider="gemini", base_url=gemini_server.url,
                       answer_log=str(tmp_path / "log"), dry_run="true")
    with pytest.raises(SystemExit) as done:
        lm.generate_until(_requests("d"), disable_tqdm=True)
    assert done.value.code == 0 and gemini_server.requests == []
    line = capsys.readouterr().out.strip()
    assert "6 requests" in line and "6.0 s of audio" in line and "192 audio tokens" in line   # 32 per second
    assert f"at most {6 * (128 + 1024):,} output tokens" in line and "nothing was sent" in line
    # clips already answered are not counted again
    OpenAIAudioLM(model="gemini-2.5-flash", provider="gemini", base_url=gemini_server.url, backoff=0.01,
                  answer_log=str(tmp_path / "log"), api_key_env="PATH").generate_until(_requests("d")[:2],
                                                                                       disable_tqdm=True)
    again = OpenAIAudioLM(model="gemini-2.5-flash", provider="gemini", base_url=gemini_server.url,
                          answer_log=str(tmp_path / "log"), dry_run="true")
    with pytest.raises(SystemExit):
        again.generate_until(_requests("d"), disable_tqdm=True)
    assert "4 requests (2 more already in the answer log)" in capsys.readouterr().out


class _EffortServer(OpenAIServer):
    """Answers as Google's OpenAI endpoint answers a reasoning_effort it does not take (its error wrapped in a list)."""

    def handle(self, path, headers, body, action):
        if isinstance(body, dict) and body.get("reasoning_effort") == "minimal":
            return 400, [{"error": {"code": 400, "status": "INVALID_ARGUMENT", "message":
                                    "Invalid reasoning_effort: minimal. Valid values are: high, low, medium, none"}}], {}
        return super().handle(path, headers, body, action)


@pytest.mark.parametrize("effort,stops", [("minimal", True), ("low", False)])
def test_a_refused_reasoning_effort_stops_the_run_in_one_line(monkeypatch, effort, stops):
    """One line naming the field and what to do, not one error answer per clip; the value it takes runs."""
    monkeypatch.setenv("VG_OPENAI_KEY", "sk-test")
    server = _EffortServer()
    try:
        lm = OpenAIAudioLM(model="gpt-audio-1.5", provider="openai", base_url=server.url, api_key_env="VG_OPENAI_KEY",
                           answer_log="none", reasoning_effort=effort, backoff=0.01, concurrency=1)
        if not stops:
            assert _answers(lm, _requests("e")) == DIRECTIONS and lm.n_errors == 0
            return
        with pytest.raises(FatalAdapterError) as err:
            lm.generate_until([Req(PROMPT, ramp_clip("increase", f"e{i}")) for i in range(12)], disable_tqdm=True)
        message = str(err.value)
        assert "\n" not in message and "reasoning_effort" in message and "HTTP 400" in message
        assert "Valid values are: high, low, medium, none" in message and "thinking_level" in message
        assert len(server.requests) < 12
    finally:
        server.close()


@pytest.mark.parametrize("message,sent,field", [
    # Google's OpenAI endpoint (reported on its forum): the field unquoted after "Invalid"
    ("Invalid reasoning_effort: minimal. Valid values are: high, low, medium, none",
     ["max_tokens", "reasoning_effort"], "reasoning_effort"),
    ("invalid reasoning_effort: minimal.", ["reasoning_effort"], "reasoning_effort"),       # any case
    ("Invalid reasoning_effort: minimal.", ["max_tokens"], None),                            # not sent: not ours
    ("Invalid JSON payload received.", ["max_tokens", "reasoning_effort"], None),            # no field, no colon
    ("Invalid argument: max_tokens too large", ["max_tokens"], None),                        # "argument" is no field
    # the level named instead of the field that set it
    ("Thinking level MEDIUM is not supported for this model. Please retry with other thinking level",
     ["max_tokens", "reasoning_effort"], "reasoning_effort"),
    ("Thinking level MEDIUM is not supported for this model.", ["reasoning_effort", "thinking_level"],
     "thinking_level"),                                                                      # both sent: the level
    ("Thinking level MEDIUM is not supported for this model.", ["max_tokens"], None),        # neither sent
])
def test_a_refused_reasoning_effort_is_named(message, sent, field):
    from harness_tasks.models.providers.base import refused_field

    assert refused_field(message, sent) == field


@pytest.mark.parametrize("message,param,violations,field", [
    ("Unrecognized request argument supplied: min_p", None, [], "min_p"),
    ("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
     "max_tokens", [], "max_tokens"),
    ("Unsupported value: 'temperature' does not support 0 with this model.", "temperature", [], "temperature"),
    ('Invalid JSON payload received. Unknown name "frequency_penalty": Cannot find field.', None, [],
     "frequency_penalty"),
    ("Penalty is not enabled for models/gemini-2.5-flash", None, [], "presence_penalty"),
    ("Budget 0 is invalid. This model only works in thinking mode.", None, [], "thinking_budget"),
    ("Audio file could not be processed.", None, [], None),            # not a field: this clip's error
    ("Request contains an invalid argument.", None, ["contents[0].parts[1]"], None),
])
def test_the_refused_field_is_read_from_each_providers_error(message, param, violations, field):
    from harness_tasks.models.providers.base import refused_field

    sent = ["temperature", "max_tokens", "top_p", "presence_penalty", "min_p", "thinking_budget"]
    assert refused_field(message, sent, param, violations) == field


def test_vocalgrad_eval_stops_with_one_line_on_a_refused_field(openai_server, tmp_path, monkeypatch, capsys):
    from _harness_helpers import make_hub_folder, offline_lm_eval

    from harness_tasks.cli import main

    offline_lm_eval(monkeypatch)
    monkeypatch.setenv("VOCALGRAD_DATASET", str(make_hub_folder(tmp_path / "hub", categories=("volume",), sources=3)))
    monkeypatch.setenv("VG_OPENAI_KEY", "sk-test")
    args = f"model=gpt-audio-1.5,base_url={openai_server.url},api_key_env=VG_OPENAI_KEY,answer_log=none,concurrency=1"
    rc = main(["--model", "vocalgrad-openai", "--model_args", args + ",provider=openai-compatible",
               "--tasks", "vocalgrad_volume", "--output_path", str(tmp_path / "out")])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("vocalgrad-eval: error:")]
    assert rc == 2 and len(err) == 1 and "refused the request field 'repetition_penalty'" in err[0]
    assert len(openai_server.requests) == 1 and not (tmp_path / "out").exists()
