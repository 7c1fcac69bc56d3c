"""``vocalgrad-openai``: hosted audio APIs and OpenAI-compatible servers, each asked the way its
maker documents (:mod:`.providers`).

``provider=`` picks the request: ``openai-compatible`` (vLLM, SGLang: chat completions with the
full greedy fields, ``vllm serve ...``; the way to spread an evaluation over many GPUs and nodes;
the server is asked what it is, and SGLang gets ``audio_url`` parts, :mod:`.providers.servers`),
``openai`` (OpenAI's API: ``gpt-audio-1.5``; only the fields it accepts), ``gemini`` (Gemini's
native ``generateContent`` with inline audio, through ``google-genai``; Gemini 3 and later with a
``thinking_level`` at the maker's default temperature, Gemini 2.5 with a thinking budget, greedy),
``gemini-openai`` (Google's OpenAI-compatible endpoint). ``auto`` (default)
reads it from ``base_url`` (:func:`.providers.detect`). docs/models.md has exact commands. Each
clip is sent as 16-bit WAV, after the text by default.

Robustness: requests run concurrently in threads; the providers' SDKs retry HTTP 429 / 408 / 5xx,
timeouts and connection errors (``Retry-After`` honoured by ``openai``); each attempt ends within
``timeout`` seconds, connect and every read together (:mod:`.providers.deadline`); malformed
replies are asked again here; a request that still fails is returned as an *error answer* (counted
by ``error_rate``). A reply the provider blocked (Gemini's SAFETY, RECITATION, PROHIBITED_CONTENT,
BLOCKLIST, SPII or a blocked prompt; OpenAI's ``content_filter`` or ``refusal``) is a *blocked
answer* (counted by ``blocked_rate``): asked once, never parsed, even when it carries text. A refused request field (HTTP 400 naming it: ``Unrecognized request argument
supplied: repetition_penalty``), a refused key (401/403) or an unknown model (404) would fail
every clip alike: the run stops with one line naming it. An empty reply that was not blocked (a
thinking model that spent its budget) is asked again with ``empty_budget_factor`` times the token
budget; still empty, it is an error answer, never a cached success. Every answer goes to the base class's per-clip
answer log at once (fsync-ed; key: model, base_url, every request setting, prompt, audio sha256,
...), so an interrupted or repeated run resumes without paying twice. Ctrl-C (SIGINT) cancels the
requests not yet sent, waits for the ones on the wire (their answers are logged), and exits.

Model arguments
---------------
model : str (required)         model name sent to the server
provider : str                 ``auto`` (default), ``openai-compatible``, ``openai``, ``gemini``,
                               ``gemini-openai``
base_url : str                 default ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``
                               (Google's endpoint for ``provider=gemini``)
api_key_env : str              environment variable holding the key (default ``GEMINI_API_KEY``
                               for the Gemini providers, else ``OPENAI_API_KEY``; may be unset for
                               a local server)
audio_format : str             ``auto`` (default: ``audio_url`` for SGLang, else ``input_audio``,
                               switched once if the server refuses it), ``input_audio`` or
                               ``audio_url`` (chat completions only)
thinking : str                 ``auto`` (default), ``on`` or ``off``: ``openai-compatible`` sends
                               ``chat_template_kwargs`` with the family's switch (``enable_thinking``);
                               ``on`` (or a checkpoint named as thinking, e.g. ``...-Thinking``) adds
                               ``reasoning_budget`` (default 4096) to every request's budget
audio_first : bool             put the audio before the text (default false; a task's own
                               setting, e.g. ``vocalgrad_audiofirst``, wins)
system_prompt : str            optional system message (Gemini: ``system_instruction``)
sample_rate : int              resample before sending (default 0 = keep the clip's rate)
max_tokens : int | task | none the answer budget: ``task`` = the task's budget (128, 256 for the
                               retry); body field ``max_tokens`` (default ``task`` except for
                               ``openai``); Gemini: ``max_output_tokens`` is this plus ``thinking_budget``
max_completion_tokens : ...    body field ``max_completion_tokens`` (same values; default ``task``
                               for ``openai``, else left out)
thinking_budget : int | none   Gemini 2.5: ``thinking_config.thinking_budget`` (default 1024; 0 = off
                               on the Flash models; ``none`` = the model's own); refused on Gemini 3
thinking_level : str | none    Gemini 3 and later: ``thinking_config.thinking_level`` (``minimal``,
                               ``low``, ``medium``, ``high``, ``xhigh``; default ``low``; ``none`` = the
                               model's own); refused on Gemini 2.5. The thinking's room in
                               ``max_output_tokens`` is ``reasoning_budget`` (default 4096; 0 refused)
temperature : float | none     default 0 (Gemini 3 and later: left out, the maker's default 1.0);
                               ``none`` leaves the field out
greedy : str                   the rest of the greedy settings (:data:`GREEDY`): ``full`` (the
                               ``openai-compatible`` default) sends ``top_p`` 1, ``frequency_penalty`` 0,
                               ``presence_penalty`` 0 and vLLM's ``repetition_penalty`` 1 and
                               ``min_p`` 0, so that a vLLM server fills none of them from the
                               checkpoint's generation_config (its ``--generation-config auto``
                               default); ``standard`` (the ``openai`` default) OpenAI's fields only;
                               ``basic`` (the Gemini default) ``top_p`` 1; ``none`` nothing
stop_token_ids : ints          vLLM's ``stop_token_ids`` (``|``-separated or a JSON list; default
                               none): the chat template's end-of-turn ids when the checkpoint's
                               generation_config does not name them
seed, reasoning_effort, top_p  sent when given (default: left out; ``top_p`` 1 with ``greedy``)
extra_body : JSON object       merged into the request body last (a dict, or a JSON string);
                               pass it through JSON ``--model_args '{...}'``
empty_retries : int            re-asks of an empty reply with a larger budget (default 1; >= 0)
empty_budget_factor : float    budget multiplier per re-ask (default 4; >= 1)
concurrency : int              parallel requests (default 8; >= 1)
timeout : float                seconds per attempt of a request, connect and every read together
                               (default 120; > 0)
max_retries : int              the SDK's retries after the first attempt (default 5; >= 0)
backoff : float                Gemini: the SDK's first backoff in seconds (default 1, doubling,
                               at most 60; >= 0); malformed replies: the wait before asking again
answer_log : str               answer-log folder, ``auto`` (default) or ``none`` (``cache`` is an
                               older name for it)
retry_unparsed : bool          one retry with 256 tokens for unparsed answers (default true)
dry_run : bool                 print what the run would send (the profile's request fields,
                               requests, audio seconds, tokens) and stop before sending anything
                               (:mod:`.providers.estimate`)

Out-of-range settings and unknown model arguments (``api_key=``: the key is read from the variable
that ``api_key_env`` names) stop in one line naming the argument and what it takes.
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

from generation.audio import resample

from ..clip_audio import encode_wav
from ..parsing import blocked_answer, error_answer, is_marked_answer
from .args import bounded
from .base import ModelArgumentError, Query, VocalGradLM, as_bool, float_arg, int_arg, layout, positive_int
from .chat import ChatLM
from .families import FAMILIES, served_family
from .providers import PROFILES, Malformed, Provider, RequestFailed, Stop, detect
from .providers.gemini import profile_of, sampling
from .providers.servers import AUDIO_FORMATS, template_fields
from .thinking import KNOWN_DELIMITERS, join_reasoning, parse_thinking

log = logging.getLogger("vocalgrad")

__all__ = ["GREEDY", "OpenAIAudioLM"]

#: Body fields of greedy decoding besides ``temperature`` 0, per ``greedy`` setting. ``standard``:
#: OpenAI's own fields, at their neutral values. ``full`` adds vLLM's extra sampling fields, which
#: vLLM would otherwise take from the checkpoint's generation_config.json (``--generation-config
#: auto``, its default: e.g. Audio Flamingo 3's repetition penalty 1.05); vLLM, SGLang and other
#: OpenAI-compatible servers honour or ignore them, OpenAI's own API refuses them (HTTP 400).
#: ``basic``: ``top_p`` only (Gemini refuses the penalties on its 2.5 models).
GREEDY = {
    "none": {},
    "basic": {"top_p": 1.0},
    "standard": {"top_p": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0},
    "full": {"top_p": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0, "repetition_penalty": 1.0,
             "min_p": 0.0},
}
_DEFAULT = object()


class OpenAIAudioLM(ChatLM):
    """lm-eval adapter for hosted audio APIs and OpenAI-compatible servers (see the module docstring)."""

    name = "vocalgrad-openai"
    IDENTITY_EXCLUDE = VocalGradLM.IDENTITY_EXCLUDE | {
        "api_key_env", "concurrency", "timeout", "max_retries", "backoff", "cache", "dry_run"}

    def __init__(
        self,
        *,
        model: str | None = None,
        provider: str = "auto",
        base_url: str | None = None,
        api_key_env: str | None = None,
        audio_format: str = "auto",
        thinking: Any = "auto",
        sample_rate: Any = 0,
        max_tokens: Any = _DEFAULT,
        max_completion_tokens: Any = _DEFAULT,
        thinking_budget: Any = _DEFAULT,
        thinking_level: Any = _DEFAULT,
        temperature: Any = _DEFAULT,
        seed: Any = None,
        reasoning_effort: Any = None,
        top_p: Any = None,
        greedy: Any = _DEFAULT,
        stop_token_ids: Any = None,
        extra_body: Any = None,
        empty_retries: Any = 1,
        empty_budget_factor: Any = 4.0,
        concurrency: Any = 8,
        timeout: Any = 120.0,
        max_retries: Any = 5,
        backoff: Any = 1.0,
        cache: str | None = None,
        dry_run: Any = False,
        **kwargs: Any,
    ) -> None:
        if cache is not None:
            kwargs.setdefault("answer_log", cache)
        if "api_key" in kwargs:
            raise ModelArgumentError(f"{self.name}: api_key is not a model argument (a key on the command line ends "
                                     "up in logs): put it in an environment variable and name that with "
                                     "api_key_env= (default OPENAI_API_KEY, GEMINI_API_KEY for the Gemini providers)")
        super().__init__(**kwargs)
        if not model:
            raise ModelArgumentError(f"{self.name} needs model=<name> in --model_args")
        if audio_format not in AUDIO_FORMATS:
            raise ModelArgumentError(f"audio_format must be one of {', '.join(AUDIO_FORMATS)}, got {audio_format!r}")
        self.model = str(model)
        provider = str(provider or "auto").strip().lower()
        if provider != "auto" and provider not in PROFILES:
            raise ModelArgumentError(f"provider must be auto or one of {', '.join(PROFILES)}, got {provider!r}")
        url = base_url or (None if provider == "gemini" else os.environ.get("OPENAI_BASE_URL")) \
            or ("https://generativelanguage.googleapis.com" if provider == "gemini" else "https://api.openai.com/v1")
        self.base_url = url.rstrip("/")
        self.provider_name = detect(self.base_url) if provider == "auto" else provider
        self.thinking = parse_thinking(thinking)
        if self.thinking != "auto" and self.provider_name != "openai-compatible":
            raise ModelArgumentError(f"thinking= reaches the chat template of a server that renders it (provider="
                                     f"openai-compatible: vLLM, SGLang); {self.provider_name} has its own setting: "
                                     "reasoning_effort (OpenAI, Gemini's OpenAI endpoint) or thinking_budget (gemini)")
        #: The served model's family (by its name; ``generic`` when none matches): its reasoning and switch.
        self.family = served_family(self.model) or FAMILIES["generic"]
        default_greedy, budget_field, key_env = PROFILES[self.provider_name]
        key_env = key_env if api_key_env is None else api_key_env
        self.api_key = os.environ.get(key_env, "") if key_env else ""
        self.audio_format = audio_format
        self.sample_rate = int_arg(sample_rate, "sample_rate")
        if max_tokens is _DEFAULT:
            max_tokens = "task" if budget_field in ("max_tokens", "max_output_tokens") else None
        if max_completion_tokens is _DEFAULT:
            max_completion_tokens = "task" if budget_field == "max_completion_tokens" else None
        self.max_tokens = self._budget_arg(max_tokens, "max_tokens")
        self.max_completion_tokens = self._budget_arg(max_completion_tokens, "max_completion_tokens")
        self.profile = profile_of(self.model) if self.provider_name in ("gemini", "gemini-openai") else None
        if temperature is _DEFAULT:
            temperature = None if self.profile == "level" else 0.0
        elif self.profile == "level" and not _unset(temperature) and float_arg(temperature, "temperature") < 1:
            log.warning("%s: temperature=%s on %s: Google recommends the default 1.0 for Gemini 3 (lower values may "
                        "loop or degrade the reasoning); sent as set", self.name, temperature, self.model)
        self.temperature = None if _unset(temperature) else float_arg(temperature, "temperature")
        if greedy is _DEFAULT and self.profile == "level":
            greedy = "none"                  # Gemini 3: top_p and the rest at the maker's defaults
        # greedy=none reaches here as None (lm-eval's reading): nothing, not the route's default
        self.greedy = (default_greedy if greedy is _DEFAULT
                       else "none" if _unset(greedy) else str(greedy).strip().lower())
        if self.greedy not in GREEDY:
            raise ModelArgumentError(f"greedy must be one of {', '.join(GREEDY)}, got {greedy!r}")
        self.stop_token_ids = _token_ids(stop_token_ids)
        self.fixed = dict(GREEDY[self.greedy])
        if self.stop_token_ids:
            self.fixed["stop_token_ids"] = self.stop_token_ids
        self.fixed.update({k: v for k, v in (("seed", None if _unset(seed) else int_arg(seed, "seed")),
                                             ("reasoning_effort", reasoning_effort),
                                             ("top_p", None if _unset(top_p) else float_arg(top_p, "top_p")))
                           if v is not None})
        if isinstance(extra_body, str) and not _unset(extra_body):
            try:
                extra_body = json.loads(extra_body)
            except json.JSONDecodeError as exc:
                raise ModelArgumentError(f"extra_body must be a JSON object, got {extra_body!r} ({exc})") from None
        if extra_body is not None and not _unset(extra_body) and not isinstance(extra_body, dict):
            raise ModelArgumentError(f"extra_body must be a JSON object, got {extra_body!r}")
        self.extra_body = dict(extra_body) if isinstance(extra_body, dict) else {}
        self.empty_retries = bounded(empty_retries, "empty_retries", low=0, whole=True)
        self.empty_budget_factor = bounded(empty_budget_factor, "empty_budget_factor", low=1)
        self.concurrency = bounded(concurrency, "concurrency", low=1, whole=True)
        self.timeout = bounded(timeout, "timeout", low=0, low_open=True)
        self.max_retries = bounded(max_retries, "max_retries", low=0, whole=True)
        self.backoff = bounded(backoff, "backoff", low=0)
        for name, value in (("thinking_budget", thinking_budget), ("thinking_level", thinking_level)):
            if value is not _DEFAULT and self.provider_name != "gemini" and not _unset(value):
                raise ModelArgumentError(f"{name} is a setting of provider=gemini (this is {self.provider_name}); "
                                         "Gemini's OpenAI endpoint takes reasoning_effort or extra_body's "
                                         "google.thinking_config")
        self.provider: Provider = self._make_provider(thinking_budget, thinking_level)
        if self.provider_name == "gemini" and self.profile == "level":
            self.provider.room = self.reasoning_budget
        self.dry_run = as_bool(dry_run, name="dry_run")
        self.n_requests = 0
        self.n_errors = 0
        self.n_blocked = 0
        self.n_empty = 0
        self.n_cut = 0
        self.usage: dict[str, int] = {}
        self._count_lock = threading.Lock()
        self._cancel = threading.Event()
        self._stopped: Stop | None = None

    def _make_provider(self, thinking_budget: Any, thinking_level: Any) -> Provider:
        """The provider adapter; request fields the provider is known to refuse stop here, before any request."""
        name = self.provider_name
        if name == "gemini":
            from .providers.gemini import from_adapter

            return from_adapter(self, thinking_budget=None if thinking_budget is _DEFAULT else thinking_budget,
                                thinking_level=None if thinking_level is _DEFAULT else thinking_level,
                                budget_set=thinking_budget is not _DEFAULT, level_set=thinking_level is not _DEFAULT)
        from .providers.openai_api import GEMINI_OPENAI_FIELDS, ChatCompletions, openai_fields

        fields = ({"temperature": self.temperature} if self.temperature is not None else {}) | self.fixed
        budgets = {k: v for k, v in (("max_tokens", self.max_tokens),
                                     ("max_completion_tokens", self.max_completion_tokens)) if v is not None}
        if name in ("openai", "gemini-openai") and self.audio_format not in ("auto", "input_audio"):
            raise ModelArgumentError(f"provider={name} takes clips as input_audio parts only; leave audio_format unset")
        accepted = {"openai": openai_fields, "gemini-openai": lambda: GEMINI_OPENAI_FIELDS}.get(name)
        if accepted is not None:
            refused = [f for f in [*fields, *budgets] if f not in accepted()]
            if refused:
                raise ModelArgumentError(
                    f"provider={name} refuses the request field(s) {', '.join(refused)} (HTTP 400); "
                    f"greedy={self.greedy} sends {', '.join(GREEDY[self.greedy]) or 'none'}: use greedy="
                    f"{PROFILES[name][0]} (the default for {name}) or leave the field out")
        extra = dict(self.extra_body)
        if name == "openai-compatible":
            fields.update(template_fields(self.family, self.thinking, extra))
        return ChatCompletions(name=name, model=self.model, base_url=self.base_url, api_key=self.api_key,
                               audio_format=self.audio_format, fields={**fields, **extra},
                               budgets=budgets, timeout=self.timeout, max_retries=self.max_retries, route=self.name)

    def reasoning_format(self) -> dict[str, Any]:
        """The served model's reasoning (:class:`.thinking.ReasoningRoute`): on ``openai-compatible``
        its family's (by name) and the ``thinking`` switch; Gemini 3 and later think on every request, in
        ``max_output_tokens`` (``reasoning_budget`` is their room; their thoughts never reach the text);
        elsewhere unknown."""
        if self.provider_name != "openai-compatible":
            fmt = super().reasoning_format()
            return {**fmt, "thinks": True} if getattr(self, "profile", None) == "level" else fmt
        fam = self.family
        thinks = fam.thinks(None, self.model) if self.thinking == "auto" else self.thinking == "on"
        return {"thinks": bool(thinks), "delimiters": fam.reasoning or KNOWN_DELIMITERS, "opened": False,
                "thinking": self.thinking, "template_kwargs": self.provider.fields.get("chat_template_kwargs", {})}

    @staticmethod
    def _budget_arg(value: Any, name: str) -> int | str | None:
        if _unset(value):
            return None
        if str(value).strip().lower() == "task":
            return "task"
        return positive_int(value, name, "an integer, 'task' or 'none'")

    def card_fields(self) -> dict[str, Any]:
        part = getattr(self.provider, "audio_format", self.audio_format)
        layout_ = ("inline_data parts (16-bit WAV); Gemini renders it" if self.provider_name == "gemini"
                   else f"the server's chat template renders it ({part} parts, 16-bit WAV)")
        return {"environment": {"file": None, "server": self.base_url, "model": self.model,
                                "provider": self.provider_name, "owned_by": getattr(self.provider, "server", None)},
                "decoding": {"provider": self.provider_name, "greedy": self.greedy, "body": self.provider.settings(),
                             "sampling": sampling(self)},
                "stop_tokens": self.stop_token_ids, "prompt_layout": f"{self.PROMPT_LAYOUT}; {layout_}"}

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["endpoint"] = {"base_url": self.base_url, "model": self.model}
        if self.provider_name != "openai-compatible":   # vLLM-style servers keep their earlier keys
            ident["endpoint"].update(provider=self.provider_name, request=self.provider.settings())
        return ident

    # ------------------------------------------------------------------ requests
    def _parts(self, q: Query) -> list[tuple[str, Any]]:
        """Text and WAV clips of ``q`` in the order the model hears them."""
        wavs = []
        for a in q.audios:
            y, sr = a["array"], a["sampling_rate"]
            if self.sample_rate and sr != self.sample_rate:
                y, sr = resample(y, sr, self.sample_rate), self.sample_rate
            wavs.append(encode_wav(y, sr))
        return [(kind, v if kind == "text" else wavs[v])
                for kind, v in layout(q.prompt, list(range(len(wavs))), audio_first=self.audio_first_of(q))]

    def _ask(self, q: Query) -> str:
        try:
            parts = self._parts(q)
        except Exception as exc:
            return error_answer(f"audio of {q.clip_id}: {exc}")
        scale = 1.0
        for round_ in range(self.empty_retries + 1):
            body = self.provider.build(parts, system=self.system_prompt, budget=q.max_new_tokens, scale=scale)
            answer = self._send(q, body)
            if answer is None:               # cancelled before sending: by a stop, or by Ctrl-C
                raise self._stopped if self._stopped is not None else KeyboardInterrupt()
            if answer.strip():               # blocked and error answers are final: never asked again
                return answer if is_marked_answer(answer) else self.cut_at_stops(answer, q)
            with self._count_lock:
                self.n_empty += 1
            if round_ < self.empty_retries:
                scale *= self.empty_budget_factor
                log.info("%s: empty reply for %s; asking again with %gx the budget", self.name, q.clip_id, scale)
        setting = {"gemini": "reasoning_budget or thinking_budget, or lower thinking_level",
                   "openai": "max_completion_tokens or lower reasoning_effort"}.get(self.provider_name,
                                                                                    "reasoning_budget")
        return error_answer(f"empty reply {self.empty_retries + 1} time(s), last budget x{scale:g} "
                            f"(a thinking model may spend the whole budget: raise {setting})")

    def _send(self, q: Query, body: dict) -> str | None:
        """One request (the SDK retries HTTP failures; malformed replies are asked again here): the
        reply text, an error answer, or None if cancelled. A failure every clip would share stops the run."""
        reason = "no attempt"
        attempt = 0
        for attempt in range(self.max_retries + 1):
            if self._cancel.is_set():
                return None
            with self._count_lock:
                self.n_requests += 1
            try:
                reply = self.provider.send(body)
            except Stop as exc:
                self._stopped = self._stopped or exc
                self._cancel.set()           # nothing more is sent; the run ends with its one line
                log.error("%s", exc)
                raise
            except Malformed as exc:
                reason = str(exc)
                if attempt < self.max_retries and self._cancel.wait(min(60.0, self.backoff * 2 ** attempt)
                                                                    * (1 + 0.1 * random.random())):
                    return None
                continue
            except RequestFailed as exc:     # the SDK retried it max_retries times
                reason, attempt = str(exc), self.max_retries
                break
            with self._count_lock:
                self.n_cut += str(reply.finish).lower() in ("length", "max_tokens")
                self.n_blocked += reply.blocked is not None
                for key, value in reply.usage.items():
                    if isinstance(value, int) and not isinstance(value, bool):
                        self.usage[key] = self.usage.get(key, 0) + value
            if reply.blocked is not None:    # a block is the provider's answer: its text is never parsed
                log.warning("%s: %s blocked by %s (%s); counted as blocked, not asked again", self.name, q.clip_id,
                            self.provider_name, reply.blocked)
                return blocked_answer(f"{self.provider_name}: {reply.blocked}")
            return join_reasoning(reply.reasoning, reply.text, self.reasoning_format().get("delimiters"),
                                  cut_off=str(reply.finish).lower() in ("length", "max_tokens") and not reply.text.strip())
        with self._count_lock:
            self.n_errors += 1
        log.warning("%s: %s failed after %d attempt(s): %s", self.name, q.clip_id, attempt + 1, reason)
        return error_answer(f"{reason} (after {attempt + 1} attempts)")

    # ------------------------------------------------------------------ adapter interface
    def generate_until(self, requests, disable_tqdm: bool = False):
        """lm-eval's entry; with ``dry_run=true`` it prints the estimate and ends the run (status 0)."""
        if self.dry_run:
            from .providers.estimate import estimate, summary_line

            print(summary_line(estimate(self, [self._to_query(i, r) for i, r in enumerate(requests)])), flush=True)
            raise SystemExit(0)             # vocalgrad-eval ends with status 0, nothing written
        return super().generate_until(requests, disable_tqdm=disable_tqdm)

    def answer(self, queries: list[Query]) -> list[str]:
        if len(queries) == 1 or self.concurrency == 1:
            return [self._ask(q) for q in queries]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._ask, queries))

    def _answer_todo(self, queries: list[Query], index: list[int], deliver) -> None:
        """Concurrent requests; each answer is delivered (and logged) as it arrives.

        Ctrl-C: requests not yet sent are cancelled, those on the wire finish and are logged,
        then KeyboardInterrupt propagates.
        """
        if not queries:
            return
        self._cancel.clear()
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        futures = {pool.submit(self._ask, q): i for q, i in zip(queries, index)}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                for fut in done:
                    deliver(futures[fut], fut.result())
        except KeyboardInterrupt:
            self._cancel.set()
            for fut in pending:
                fut.cancel()
            pool.shutdown(wait=True, cancel_futures=True)  # requests on the wire finish
            unsent = 0
            for fut in pending:
                if not fut.cancelled() and fut.exception() is None:
                    deliver(futures[fut], fut.result())
                else:
                    unsent += 1
            log.warning("vocalgrad-openai: interrupted; %d request(s) not sent; every answer received is in the "
                        "answer log (rerun the same command to continue)", unsent)
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


def _token_ids(value: Any) -> list[int]:
    """``stop_token_ids`` as a list of ints (a list, a JSON list, or ``a|b|c``); empty when unset."""
    if value is None or (isinstance(value, str) and _unset(value)):
        return []
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text) if text.startswith("[") else [w for w in text.split("|") if w.strip()]
        except json.JSONDecodeError:
            value = None
    if isinstance(value, int):
        value = [value]
    try:
        return [int(v) for v in value]
    except (TypeError, ValueError):
        raise ValueError(f"stop_token_ids must be token ids (a JSON list or a|b|c), got {value!r}") from None


def _unset(value: Any) -> bool:
    """A model argument the user unset: None or the word ``none``."""
    return value is None or (isinstance(value, str) and value.strip().lower() in ("none", "null", ""))
