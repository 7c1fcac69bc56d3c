"""Gemini's native ``generateContent`` with inline audio, through Google's SDK (``google-genai``).

The request is the one Google documents: ``contents[0].parts`` holds the text and each clip as
``inline_data {mime_type: "audio/wav", data}`` in the order the model must hear them; a system
prompt goes to ``system_instruction``; ``generation_config`` carries ``temperature`` 0,
``max_output_tokens`` and ``thinking_config.thinking_budget``. Gemini 2.5 and later think by
default and their thinking tokens count against ``max_output_tokens``, so the answer budget is
the task's (128, 256 on the retry) **plus** the thinking budget (default
:data:`DEFAULT_THINKING_BUDGET`; ``thinking_budget=0`` turns thinking off on the Flash models,
``none`` leaves the model's own dynamic thinking and only the task's budget). Thought parts
(``thought: true``, sent only with ``include_thoughts``) are not part of the answer. No penalty
is sent: Gemini 2.5 models refuse them ("Penalty is not enabled for models/...").

The SDK owns the retries (``HttpRetryOptions``: 408, 429, 5xx and connection errors, exponential
backoff from ``backoff`` seconds). A 400 that names a request field stops the run in one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from .base import FATAL_STATUS, FieldRefused, Malformed, Provider, Reply, RequestFailed, Stop, refused_field, stop_line

__all__ = ["DEFAULT_THINKING_BUDGET", "Gemini", "native_base_url"]

#: Thinking tokens allowed per answer by default: inside the range of every Gemini 2.5 model
#: (Flash 0-24576, Flash-Lite 512-24576, Pro 128-32768), added to the answer's own budget.
DEFAULT_THINKING_BUDGET = 1024


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
        Model name (``gemini-2.5-flash``), endpoint (None: Google's), key.
    generation : dict
        ``generation_config`` fields besides ``max_output_tokens`` (``temperature``, ``top_p``, ``seed``).
    thinking_budget : int or None
        ``thinking_config.thinking_budget``; None leaves ``thinking_config`` out.
    max_output : "task" or int
        The answer's own budget (``task``: the task's).
    extra_body : dict
        Merged into the REST body by the SDK (``HttpOptions.extra_body``).
    timeout, max_retries, backoff : float, int, float
        Per-request timeout (s), retries after the first attempt, first backoff (s).
    """

    name = "gemini"

    def __init__(self, *, model: str, base_url: str | None, api_key: str, generation: Mapping[str, Any],
                 thinking_budget: int | None, max_output: Any, extra_body: Mapping[str, Any], timeout: float,
                 max_retries: int, backoff: float, route: str = "vocalgrad-openai") -> None:
        self.model, self.base_url, self.api_key, self.route = model, native_base_url(base_url), api_key, route
        self.generation, self.thinking_budget, self.max_output = dict(generation), thinking_budget, max_output
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
        return genai.Client(vertexai=False, api_key=self.api_key or "unset", http_options=types.HttpOptions(
            base_url=self.base_url, timeout=int(self.timeout * 1000), retry_options=retry))

    def settings(self) -> dict[str, Any]:
        cfg = dict(self.generation)
        cfg["max_output_tokens"] = (f"{self.max_output} + {self.thinking_budget}" if self.thinking_budget
                                    else self.max_output)
        if self.thinking_budget is not None:
            cfg["thinking_config"] = {"thinking_budget": self.thinking_budget}
        return {"generation_config": cfg, **self.extra_body}

    def build(self, parts, *, system, budget, scale=1.0):
        answer = int(round(int(budget if self.max_output == "task" else self.max_output) * scale))
        cfg = dict(self.generation)
        cfg["max_output_tokens"] = answer + max(0, self.thinking_budget or 0)
        if self.thinking_budget is not None:
            cfg["thinking_config"] = {"thinking_budget": self.thinking_budget}
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
        if not resp.candidates:
            feedback = getattr(resp, "prompt_feedback", None)
            reason = getattr(getattr(feedback, "block_reason", None), "name", None)
            if reason:
                raise RequestFailed(f"the prompt was blocked ({reason})")
            raise Malformed("malformed reply: no candidates")
        cand = resp.candidates[0]
        finish = getattr(cand.finish_reason, "name", cand.finish_reason)
        parts = (cand.content.parts if cand.content and cand.content.parts else []) or []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        return Reply(text, None if finish is None else str(finish), usage)

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
                hint = ("set thinking_budget= within the model's range (0 turns thinking off on the Flash "
                        "models only), or none for the model's own" if "thinking" in field
                        else "leave it out of --model_args (or extra_body)")
                return FieldRefused(stop_line(self.route, "gemini", status, message, field, hint), field)
        if status in FATAL_STATUS or (status == 400 and "api key" in str(message).lower()):
            return Stop(stop_line(self.route, "gemini", status, message, None,
                                  "check api_key_env (GEMINI_API_KEY) and model"))
        return RequestFailed(f"HTTP {status}: {' '.join(str(message).split())[:200]}")
