"""Gemini's native ``generateContent`` with inline audio, through Google's SDK (``google-genai``).

The request is the one Google documents: ``contents[0].parts`` holds the text and each clip as
``inline_data {mime_type: "audio/wav", data}`` in the order the model must hear them; a system
prompt goes to ``system_instruction``; ``generation_config`` carries ``max_output_tokens`` and one
``thinking_config`` field, by the model's generation (:func:`profile_of`; docs/models.md, "Gemini
profiles"):

* **Gemini 2.5** (``budget``): ``thinking_config.thinking_budget`` (default
  :data:`DEFAULT_THINKING_BUDGET`; ``0`` turns thinking off on the Flash models, ``none`` leaves
  the model's own dynamic thinking), ``temperature`` 0 and ``top_p`` 1. Thinking tokens count
  against ``max_output_tokens``, so that is the task's answer budget plus the thinking budget.
* **Gemini 3 and later** (``level``): ``thinking_config.thinking_level`` (default
  :data:`DEFAULT_THINKING_LEVEL`; the SDK sends it as ``thinkingLevel``) and never
  ``thinking_budget`` (Google keeps the budget on Gemini 3 only for backwards compatibility, and a
  request with both is refused with HTTP 400). No ``temperature`` or ``top_p`` unless the user sets
  them: Google's Gemini 3 guide recommends the default temperature 1.0 (lower values may loop or
  degrade the reasoning), so greedy decoding is not available and the answers are *sampled at the
  maker's default*; the results file records it. The thinking tokens count against
  ``max_output_tokens``, which is the task's answer budget plus the toolkit's
  ``reasoning_budget`` (:mod:`..thinking`).

Thought parts (``thought: true``, sent only with ``include_thoughts``) are not part of the answer.
No penalty is sent: Gemini 2.5 models refuse them ("Penalty is not enabled for models/...").

A reply Google blocked (a candidate ending :data:`BLOCK_FINISH`, or no candidate and
``promptFeedback.blockReason``) comes back with :attr:`Reply.blocked` set, text or not: a blocked
answer, never asked again.

The SDK owns the retries (``HttpRetryOptions``: 408, 429, 5xx and connection errors, exponential
backoff from ``backoff`` seconds); each attempt ends within ``timeout`` seconds in all
(:mod:`.deadline`). A 400 that names a request field stops the run in one line.
"""

from __future__ import annotations

import re
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from .base import FATAL_STATUS, FieldRefused, Malformed, Provider, Reply, RequestFailed, Stop, refused_field, stop_line

__all__ = ["BLOCK_FINISH", "DEFAULT_THINKING_BUDGET", "DEFAULT_THINKING_LEVEL", "Gemini", "THINKING_LEVELS",
           "from_adapter", "native_base_url", "profile_of", "sampling"]

#: Thinking tokens allowed per answer by default on Gemini 2.5: inside the range of every 2.5 model
#: (Flash 0-24576, Flash-Lite 512-24576, Pro 128-32768), added to the answer's own budget.
DEFAULT_THINKING_BUDGET = 1024
#: ``thinking_level`` values of ``google-genai``'s ``ThinkingLevel`` (lower case; the SDK sends
#: them upper case). Which a model takes varies: Google's thinking guide lists them per model.
THINKING_LEVELS = ("minimal", "low", "medium", "high", "xhigh")
#: The Gemini 3 default here: ``low``, the one level every Gemini 3.x model in Google's thinking
#: guide accepts (``minimal`` is refused by the Pro models) and the one it suggests for fast,
#: simple answers; one word per clip needs no deep reasoning.
DEFAULT_THINKING_LEVEL = "low"
#: Finish reasons that mean Google blocked the candidate (``google-genai``'s ``FinishReason``).
BLOCK_FINISH = frozenset({"SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII"})

_VERSION = re.compile(r"(?:^|/)gemini-(\d+)(?:\.\d+)?(?:-|$)")


def profile_of(model: str) -> str:
    """``"budget"`` for a Gemini 1.x / 2.x model name, ``"level"`` for Gemini 3 and later and for
    names without a version (aliases such as ``gemini-flash-latest`` point at current models)."""
    m = _VERSION.search(str(model).lower())
    return "budget" if m and int(m.group(1)) < 3 else "level"


def native_base_url(base_url: str | None) -> str | None:
    """The SDK's ``base_url`` (scheme and host) of a Gemini URL; None for Google's own endpoint
    (the SDK's default)."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    if parts.hostname == "generativelanguage.googleapis.com":
        return None
    return f"{parts.scheme}://{parts.netloc}"


class Gemini(Provider):
    """``models.generate_content`` of ``google-genai`` (see the module docstring).

    Parameters
    ----------
    model, base_url, api_key : str
        Model name (``gemini-3.5-flash``, ``gemini-2.5-flash``), endpoint (None: Google's), key.
    generation : dict
        ``generation_config`` fields besides ``max_output_tokens`` (``temperature``, ``top_p``, ``seed``).
    thinking_budget : int or None
        ``thinking_config.thinking_budget`` (Gemini 2.5); None leaves it out.
    thinking_level : str or None
        ``thinking_config.thinking_level`` (Gemini 3); None leaves it out. Never with ``thinking_budget``.
    max_output : "task" or int
        The answer's own budget (``task``: the task's).
    extra_body : dict
        Merged into the REST body by the SDK (``HttpOptions.extra_body``).
    timeout, max_retries, backoff : float, int, float
        Per-request timeout (s), retries after the first attempt, first backoff (s).
    """

    name = "gemini"
    #: Gemini 3: the tokens the adapter adds to the task's budget for the thinking (``reasoning_budget``),
    #: shown in :meth:`settings`; :meth:`build` receives them in ``budget``.
    room = 0

    def __init__(self, *, model: str, base_url: str | None, api_key: str, generation: Mapping[str, Any],
                 thinking_budget: int | None, max_output: Any, extra_body: Mapping[str, Any], timeout: float,
                 max_retries: int, backoff: float, route: str = "vocalgrad-openai",
                 thinking_level: str | None = None) -> None:
        if thinking_budget is not None and thinking_level is not None:
            raise ValueError("thinking_budget and thinking_level together are refused by Gemini (HTTP 400)")
        self.model, self.base_url, self.api_key, self.route = model, native_base_url(base_url), api_key, route
        self.generation, self.thinking_budget, self.max_output = dict(generation), thinking_budget, max_output
        self.thinking_level = thinking_level
        self.extra_body = dict(extra_body)
        self.timeout, self.max_retries, self.backoff = timeout, max_retries, backoff

    def _make_client(self):
        try:
            from google import genai
            from google.genai import types
        except ImportError:
            raise Stop(f"{self.route}: provider gemini needs the google-genai package: "
                       "pip install -e '.[api]'") from None
        retry = types.HttpRetryOptions(attempts=self.max_retries + 1, initial_delay=self.backoff,
                                       max_delay=60.0, jitter=min(1.0, self.backoff))
        from .deadline import DeadlineTransport

        return genai.Client(vertexai=False, api_key=self.api_key or "unset", http_options=types.HttpOptions(
            base_url=self.base_url, timeout=int(self.timeout * 1000), retry_options=retry,
            client_args={"transport": DeadlineTransport(self.timeout)}))

    def _thinking(self) -> dict[str, Any] | None:
        if self.thinking_level is not None:
            return {"thinking_level": self.thinking_level}
        if self.thinking_budget is not None:
            return {"thinking_budget": self.thinking_budget}
        return None

    def settings(self) -> dict[str, Any]:
        cfg = dict(self.generation)
        room = self.thinking_budget or self.room     # Gemini 3: the adapter's reasoning_budget
        cfg["max_output_tokens"] = f"{self.max_output} + {room}" if room else self.max_output
        if self._thinking():
            cfg["thinking_config"] = self._thinking()
        return {"generation_config": cfg, **self.extra_body}

    def build(self, parts, *, system, budget, scale=1.0):
        answer = int(round(int(budget if self.max_output == "task" else self.max_output) * scale))
        cfg = dict(self.generation)
        cfg["max_output_tokens"] = answer + max(0, self.thinking_budget or 0)
        if self._thinking():
            cfg["thinking_config"] = self._thinking()
        body: dict[str, Any] = {"model": self.model, "contents": [{"role": "user", "parts": [
            {"text": v} if kind == "text" else {"inline_data": {"mime_type": "audio/wav", "data": v}}
            for kind, v in parts]}], "generation_config": cfg}
        if system:
            body["system_instruction"] = system
        body.update(self.extra_body)
        return body

    @staticmethod
    def _sent_fields(body: Mapping[str, Any]) -> list[str]:
        cfg = body.get("generation_config", {})
        names = [k for k in cfg if k != "thinking_config"] + list(cfg.get("thinking_config", {}))
        return names + [k for k in body if k not in ("model", "contents", "generation_config")]

    def send(self, body):
        from google.genai import errors, types

        cfg = dict(body["generation_config"])
        thinking = cfg.pop("thinking_config", None)
        extra = {k: v for k, v in body.items() if k not in ("model", "contents", "generation_config",
                                                            "system_instruction")}
        config = types.GenerateContentConfig(
            **cfg, system_instruction=body.get("system_instruction"),
            thinking_config=types.ThinkingConfig(**thinking) if thinking else None,
            http_options=types.HttpOptions(extra_body=extra) if extra else None)
        contents = [types.Content(role="user", parts=[
            types.Part.from_text(text=p["text"]) if "text" in p
            else types.Part.from_bytes(data=p["inline_data"]["data"], mime_type=p["inline_data"]["mime_type"])
            for p in body["contents"][0]["parts"]])]
        try:
            resp = self.client.models.generate_content(model=body["model"], contents=contents, config=config)
        except errors.APIError as exc:
            raise self._status_error(exc, body) from None
        except ValueError as exc:          # a reply the SDK cannot parse
            raise Malformed(f"malformed reply: {exc}") from None
        except Exception as exc:           # connection errors and timeouts after the SDK's retries
            raise RequestFailed(f"{type(exc).__name__}: {exc}") from None
        usage = resp.usage_metadata.model_dump(exclude_none=True, mode="json") if resp.usage_metadata else {}
        feedback = getattr(resp, "prompt_feedback", None)
        reason = getattr(getattr(feedback, "block_reason", None), "value", None)
        if reason and reason != "BLOCKED_REASON_UNSPECIFIED":
            return Reply("", None, usage, blocked=f"promptFeedback.blockReason {reason}")
        if not resp.candidates:
            raise Malformed("malformed reply: no candidates")
        cand = resp.candidates[0]
        finish = getattr(cand.finish_reason, "value", cand.finish_reason)
        parts = (cand.content.parts if cand.content and cand.content.parts else []) or []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        finish = None if finish is None else str(finish)
        return Reply(text, finish, usage, blocked=f"finishReason {finish}" if finish in BLOCK_FINISH else None)

    def _status_error(self, exc, body) -> Exception:
        status = int(getattr(exc, "code", 0) or 0)
        message = getattr(exc, "message", None) or str(exc)
        details = getattr(exc, "details", None)
        err = details.get("error") if isinstance(details, dict) else None
        violations = [v.get("field", "") for d in ((err or {}).get("details") or []) if isinstance(d, dict)
                      for v in d.get("fieldViolations") or [] if isinstance(v, dict)]
        if status == 400:
            field = refused_field(message, self._sent_fields(body), None, violations)
            if field:
                hint = ("set thinking_level= to a level this model takes (Google's thinking guide lists them "
                        "per model), or none for the model's own" if field == "thinking_level" else
                        "set thinking_budget= within the model's range (0 turns thinking off on the Flash "
                        "models only), or none for the model's own" if "thinking" in field
                        else "leave it out of --model_args (or extra_body)")
                return FieldRefused(stop_line(self.route, "gemini", status, message, field, hint), field)
        if status in FATAL_STATUS or (status == 400 and "api key" in str(message).lower()):
            return Stop(stop_line(self.route, "gemini", status, message, None,
                                  "check api_key_env (GEMINI_API_KEY) and model"))
        return RequestFailed(f"HTTP {status}: {' '.join(str(message).split())[:200]}")


def _refuse(message: str):
    from ..args import ModelArgumentError

    raise ModelArgumentError(message)


def from_adapter(lm: Any, *, thinking_budget: Any, thinking_level: Any, budget_set: bool, level_set: bool) -> Gemini:
    """The :class:`Gemini` provider of a ``vocalgrad-openai`` adapter ``lm``, by the model's profile
    (:func:`profile_of`); settings the profile or Google refuses stop here in one line."""
    from ..args import int_arg

    def unset(v: Any) -> bool:
        return v is None or str(v).strip().lower() in ("none", "null", "")

    wrong = [f for f, v in (("max_completion_tokens", lm.max_completion_tokens), ("stop_token_ids", lm.stop_token_ids),
                            ("reasoning_effort", lm.fixed.get("reasoning_effort"))) if v]
    wrong += [f for f in lm.fixed if f.endswith("penalty") or f == "min_p"]
    if wrong:
        _refuse(f"provider=gemini (generateContent) takes no {', '.join(dict.fromkeys(wrong))}: Gemini 2.5 "
                "models refuse penalties; the answer budget is max_tokens (+ thinking_budget); use greedy=basic")
    if lm.audio_format not in ("auto", "input_audio"):
        _refuse("provider=gemini sends clips as inline_data; leave audio_format unset")
    budget = level = None
    if profile_of(lm.model) == "budget":
        if level_set and not unset(thinking_level):
            _refuse(f"thinking_level is a Gemini 3 setting; {lm.model} is a Gemini 2.x model: it takes "
                    "thinking_budget= (a whole number of tokens, or none for the model's own)")
        budget = DEFAULT_THINKING_BUDGET if not budget_set else (
            None if unset(thinking_budget) else int_arg(thinking_budget, "thinking_budget"))
    else:
        if budget_set and not unset(thinking_budget):
            _refuse(f"thinking_budget: {lm.model} is a Gemini 3 (or later) model; it takes thinking_level= "
                    f"({'|'.join(THINKING_LEVELS)}; default {DEFAULT_THINKING_LEVEL}; none for the model's own). "
                    "Google keeps thinking_budget there for backwards compatibility only and refuses both (HTTP 400)")
        if getattr(lm, "_reasoning_budget_arg", None) == 0:
            _refuse(f"reasoning_budget=0 leaves {lm.model} no room for its thinking, which counts against "
                    "max_output_tokens: set reasoning_budget to a whole number > 0 (default 4096); for the least "
                    "thinking set thinking_level=minimal where the model takes it")
        level = DEFAULT_THINKING_LEVEL if not level_set else (
            None if unset(thinking_level) else str(thinking_level).strip().lower())
        if level is not None and level not in THINKING_LEVELS:
            _refuse(f"--model_args thinking_level must be one of {', '.join(THINKING_LEVELS)} or none, "
                    f"got {thinking_level!r}")
    generation = {k: v for k, v in (("temperature", lm.temperature), ("top_p", lm.fixed.get("top_p")),
                                    ("seed", lm.fixed.get("seed"))) if v is not None}
    return Gemini(model=lm.model, base_url=lm.base_url, api_key=lm.api_key, generation=generation,
                  thinking_budget=budget, thinking_level=level, max_output=lm.max_tokens or "task",
                  extra_body=lm.extra_body, timeout=lm.timeout, max_retries=lm.max_retries, backoff=lm.backoff,
                  route=lm.name)


def sampling(lm: Any) -> str:
    """How a ``vocalgrad-openai`` adapter's answers are decoded, in words (the results file's
    ``decoding.sampling``, read by the report and the leaderboard)."""
    if lm.temperature is None and lm.profile == "level":
        return (f"sampled at the maker's default: temperature left out ({lm.model} is a Gemini 3 or later model; "
                "Google recommends its default 1.0 and greedy decoding is not available); "
                f"sent: {json.dumps(lm.provider.settings(), sort_keys=True, default=str)}")
    if lm.temperature is None:
        return "sampled at the server's default temperature (temperature=none)"
    return "greedy (temperature 0)" if lm.temperature == 0 else f"sampled at temperature {lm.temperature:g}"
