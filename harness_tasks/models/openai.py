"""``vocalgrad-openai``: OpenAI-compatible chat completions with audio input.

Serves vLLM deployments (``vllm serve Qwen/Qwen2-Audio-7B-Instruct``; the way to spread an
evaluation over many GPUs and nodes) and hosted APIs. Each clip is sent as base64 16-bit WAV
in an ``input_audio`` content part (or as a ``data:`` URL in an ``audio_url`` part), after the
text by default.

Robustness: requests run concurrently in threads; HTTP 429 / 408 / 5xx, timeouts, connection
errors and malformed replies are retried with exponential backoff (``Retry-After`` is
honoured); a request that still fails is returned as an *error answer* (unparsed, counted by
``error_rate``) — the run never crashes on it. Every successful answer is appended to an
on-disk cache at once, keyed by (model, prompt, audio sha256, token budget), so an
interrupted or repeated run resumes without asking again; errors are not cached.

Model arguments
---------------
model : str (required)         model name sent to the server
base_url : str                 default ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``
api_key_env : str              environment variable holding the key (default ``OPENAI_API_KEY``;
                               may be unset for a local server)
audio_format : str             ``input_audio`` (default) or ``audio_url``
audio_first : bool             put the audio before the text (default false; a task's own
                               setting, e.g. ``vocalgrad_audiofirst``, wins)
sample_rate : int              resample before sending (default 0 = keep the clip's rate)
concurrency : int              parallel requests (default 8)
timeout : float                seconds per request (default 120)
max_retries : int              retries after the first attempt (default 5)
backoff : float                first backoff in seconds, doubled each retry (default 1, max 60)
cache : str                    cache folder, or ``none`` (default ``$VOCALGRAD_CACHE/openai`` or
                               ``~/.cache/vocalgrad/openai``)
retry_unparsed : bool          one retry with 256 tokens for unparsed answers (default true)
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import random
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..clip_audio import encode_wav
from ..parsing import error_answer
from .base import Query, VocalGradLM, as_bool, layout

log = logging.getLogger("vocalgrad")

__all__ = ["AnswerCache", "OpenAIAudioLM"]

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class _Retryable(Exception):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.wait = wait


class AnswerCache:
    """Append-only JSONL answer store; safe for threads, tolerant of a cut-off last line.

    Parameters
    ----------
    folder : path
        The file ``answers.jsonl`` in this folder holds one JSON object per answer.
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.path = Path(folder).expanduser() / "answers.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._data: dict[str, str] = {}
        if self.path.exists():
            with open(self.path, encoding="utf-8") as fh:
                for line in fh:
                    try:
                        obj = json.loads(line)
                        self._data[obj["key"]] = obj["answer"]
                    except (json.JSONDecodeError, KeyError, TypeError):
                        continue  # a line cut off by an interruption
        # Start appends on a fresh line even if the last one was cut off.
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    with open(self.path, "a", encoding="utf-8") as out:
                        out.write("\n")

    @staticmethod
    def key(model: str, prompt: str, audio_sha: str, max_tokens: int, variant: str = "") -> str:
        blob = json.dumps([model, prompt, audio_sha, int(max_tokens), variant], ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> str | None:
        return self._data.get(key)

    def put(self, key: str, answer: str, **info: Any) -> None:
        line = json.dumps({"key": key, "answer": answer, **info}, ensure_ascii=False) + "\n"
        with self._lock:
            self._data[key] = answer
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()

    def __len__(self) -> int:
        return len(self._data)


def _default_cache() -> Path:
    root = os.environ.get("VOCALGRAD_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "vocalgrad") / "openai"


class OpenAIAudioLM(VocalGradLM):
    """lm-eval adapter for OpenAI-compatible ``/chat/completions`` endpoints with audio."""

    RETRIES = True

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        audio_format: str = "input_audio",
        audio_first: Any = False,
        sample_rate: Any = 0,
        concurrency: Any = 8,
        timeout: Any = 120.0,
        max_retries: Any = 5,
        backoff: Any = 1.0,
        cache: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not model:
            raise ValueError("vocalgrad-openai needs model=<name> in --model_args")
        if audio_format not in ("input_audio", "audio_url"):
            raise ValueError(f"audio_format must be 'input_audio' or 'audio_url', got {audio_format!r}")
        self.model = str(model)
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        self.api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        self.audio_format = audio_format
        self.audio_first = as_bool(audio_first, name="audio_first")
        self.sample_rate = int(sample_rate)
        self.concurrency = max(1, int(concurrency))
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self.backoff = max(0.0, float(backoff))
        self.cache = None if str(cache).lower() == "none" else AnswerCache(cache or _default_cache())
        self.n_requests = 0
        self.n_errors = 0
        self._count_lock = threading.Lock()

    # ------------------------------------------------------------------ request building
    def _audio_payload(self, q: Query) -> tuple[list[dict], str]:
        parts, digest = [], hashlib.sha256()
        for a in q.audios:
            y, sr = a["array"], a["sampling_rate"]
            if self.sample_rate and sr != self.sample_rate:
                import soxr

                y, sr = soxr.resample(y, sr, self.sample_rate, quality="HQ"), self.sample_rate
            wav = encode_wav(y, sr)
            digest.update(wav)
            b64 = base64.b64encode(wav).decode("ascii")
            if self.audio_format == "input_audio":
                parts.append({"type": "input_audio", "input_audio": {"data": b64, "format": "wav"}})
            else:
                parts.append({"type": "audio_url", "audio_url": {"url": f"data:audio/wav;base64,{b64}"}})
        return parts, digest.hexdigest()

    def _first(self, q: Query) -> bool:
        return self.audio_first if q.audio_first is None else q.audio_first

    def _body(self, q: Query, audio_parts: list[dict]) -> dict:
        # audio_parts are in q.audios order; layout() places them (text/audio order, markers)
        clips = iter(audio_parts)
        content = [{"type": "text", "text": v} if kind == "text" else next(clips)
                   for kind, v in layout(q.prompt, list(range(len(audio_parts))), audio_first=self._first(q))]
        return {
            "model": self.model,
            "messages": [{"role": "user", "content": content}],
            "max_tokens": int(q.max_new_tokens),
            "temperature": 0.0,
        }

    # ------------------------------------------------------------------ HTTP
    def _post(self, body: dict) -> str:
        data = json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + "/chat/completions", data=data, method="POST")
        req.add_header("Content-Type", "application/json")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace")
            if exc.code in _RETRY_STATUS:
                wait = exc.headers.get("Retry-After") if exc.headers else None
                try:
                    wait = float(wait) if wait is not None else None
                except ValueError:
                    wait = None
                raise _Retryable(f"HTTP {exc.code}: {detail}", wait) from None
            raise RuntimeError(f"HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            raise _Retryable(f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}") from None
        try:
            obj = json.loads(raw)
            content = obj["choices"][0]["message"]["content"]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, UnicodeDecodeError):
            raise _Retryable(f"malformed reply: {raw[:120]!r}") from None
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise _Retryable(f"malformed reply: content is {type(content).__name__}")
        return content

    def _ask(self, q: Query) -> str:
        try:
            parts, audio_sha = self._audio_payload(q)
        except Exception as exc:
            return error_answer(f"audio of {q.clip_id}: {exc}")
        variant = f"{self.audio_format}|{int(self._first(q))}|{self.sample_rate}"
        key = AnswerCache.key(self.model, q.prompt, audio_sha, q.max_new_tokens, variant)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return hit
        body = self._body(q, parts)
        reason = "no attempt"
        for attempt in range(self.max_retries + 1):
            with self._count_lock:
                self.n_requests += 1
            try:
                answer = self._post(body)
            except _Retryable as exc:
                reason = str(exc)
                if attempt < self.max_retries:
                    delay = exc.wait if exc.wait is not None else self.backoff * 2 ** attempt
                    time.sleep(min(60.0, delay) * (1 + 0.1 * random.random()))
                continue
            except Exception as exc:  # a non-retryable HTTP status or bug: an error answer
                reason = str(exc)
                break
            if self.cache is not None:
                self.cache.put(key, answer, model=self.model, clip_id=q.clip_id, max_tokens=q.max_new_tokens)
            return answer
        with self._count_lock:
            self.n_errors += 1
        log.warning("vocalgrad-openai: %s failed after %d attempt(s): %s", q.clip_id, attempt + 1, reason)
        return error_answer(f"{reason} (after {attempt + 1} attempts)")

    # ------------------------------------------------------------------ adapter interface
    def answer(self, queries: list[Query]) -> list[str]:
        if len(queries) == 1 or self.concurrency == 1:
            return [self._ask(q) for q in queries]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._ask, queries))

    def _run(self, queries: list[Query], *, disable_tqdm: bool = False) -> list[str]:
        from tqdm import tqdm

        out: list[str] = [""] * len(queries)
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool, \
                tqdm(total=len(queries), disable=disable_tqdm, desc="vocalgrad-openai") as bar:
            futures = {pool.submit(self._ask, q): i for i, q in enumerate(queries)}
            for fut in futures:
                out[futures[fut]] = fut.result()
                bar.update(1)
        return out
