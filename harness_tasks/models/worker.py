"""``vocalgrad-worker``: a model that runs in its own environment, over a JSON-lines pipe.

The authors' inference packages of Kimi-Audio, MiMo-Audio and Step-Audio 2 pin conflicting
versions of torch / transformers, so they cannot share one environment with the harness. This
adapter starts a *worker* command (``cmd=...``: e.g. ``conda run -n kimi python
.../harness_tasks/workers/kimi_audio.py ...``, ``docker run -i ...``) and exchanges one JSON
line per request with it over stdin/stdout (protocol: :mod:`harness_tasks.workers.protocol`):
clip (base64 WAV bytes, or a WAV path), prompt, text/audio order and generation settings go out,
text or an error comes back. The worker sends a version handshake first; protocol lines carry a
prefix and the worker moves its stdout to stderr, so stray prints cannot corrupt the exchange.
The handshake may say how the worker decodes (``generation``: the settings it passes to the
model's own API, and what that API does not let it set); the answer log keeps the handshake's
``worker``, ``model``, ``version`` and ``generation`` beside every answer.

Failures: a request the worker reports as failed becomes an error answer (counted wrong, the run
goes on). A worker that exits or does not answer in ``timeout`` seconds stops the run with a
clear error that quotes the last lines of its stderr; the answer log keeps every answer so far,
so the same command resumes. The worker is started lazily (a rerun with every answer logged
starts nothing).

Model arguments
---------------
cmd : str (required)         the worker command line (shell-style quoting, no shell)
cwd : str                    its working folder
audio : str                  ``bytes`` (default: base64 WAV in the request) or ``path`` (WAV files
                             in a temporary folder; the worker must see this file system)
sample_rate : int            resample clips before sending (default 0 = keep the clip's rate)
audio_first : bool           audio before the text (default false; a task's setting wins)
system_prompt : str          sent with each request (workers use it where their API has one)
timeout : float              seconds to wait for one answer (default 600)
startup_timeout : float      seconds to wait for the handshake (default 1800: loading a 7B model)
retry_unparsed, answer_log, batch_size   as for every adapter (the worker answers one clip at a time)
"""

from __future__ import annotations

import base64
import collections
import json
import logging
import os
import queue
import shlex
import subprocess
import tempfile
import threading
import time
from typing import Any

from generation.audio import resample

from ..clip_audio import encode_wav
from ..parsing import error_answer
from ..workers.protocol import PREFIX, PROTOCOL_VERSION
from .args import bounded
from .base import FatalAdapterError, ModelArgumentError, Query, VocalGradLM, int_arg, layout
from .chat import ChatLM

log = logging.getLogger("vocalgrad")

__all__ = ["WorkerError", "WorkerLM"]

_TAIL = 40


class WorkerError(FatalAdapterError):
    """The worker process died, broke the protocol or stopped answering."""


class WorkerLM(ChatLM):
    """lm-eval adapter that forwards each request to a worker process (see the module docstring)."""

    name = "vocalgrad-worker"
    IDENTITY_EXCLUDE = VocalGradLM.IDENTITY_EXCLUDE | {"timeout", "startup_timeout", "audio"}

    def __init__(self, *, cmd: str | None = None, cwd: str | None = None, audio: str = "bytes", sample_rate: Any = 0,
                 timeout: Any = 600.0,
                 startup_timeout: Any = 1800.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not cmd or not str(cmd).strip():
            raise ModelArgumentError("vocalgrad-worker needs cmd=<worker command line> in --model_args")
        if audio not in ("bytes", "path"):
            raise ModelArgumentError(f"audio must be 'bytes' or 'path', got {audio!r}")
        self.argv = shlex.split(str(cmd))
        self.cwd = cwd
        self.audio_mode = audio
        self.sample_rate = int_arg(sample_rate or 0, "sample_rate")
        self.timeout = bounded(timeout, "timeout", low=0, low_open=True)
        self.startup_timeout = bounded(startup_timeout, "startup_timeout", low=0, low_open=True)
        self.proc: subprocess.Popen | None = None
        self.hello: dict[str, Any] | None = None
        self._msgs: queue.Queue = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=_TAIL)
        self._next_id = 0
        self._tmp: str | None = None

    # ------------------------------------------------------------------ process
    def start(self) -> dict[str, Any]:
        """Start the worker and wait for its handshake (done on the first request)."""
        if self.proc is not None and self.proc.poll() is None:
            return self.hello or {}
        env = {**os.environ, "VOCALGRAD_WORKER": "1", "PYTHONUNBUFFERED": "1"}
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, cwd=self.cwd, env=env)
        except OSError as exc:
            raise WorkerError(f"vocalgrad-worker: cannot start {self.argv[0]!r}: {exc}") from None
        self._msgs = queue.Queue()
        threading.Thread(target=self._read_stdout, args=(self.proc,), daemon=True).start()
        threading.Thread(target=self._read_stderr, args=(self.proc,), daemon=True).start()
        hello = self._receive(self.startup_timeout, "the handshake")
        if hello.get("type") != "hello":
            self.close()
            raise WorkerError(f"vocalgrad-worker: expected a hello line first, got {hello!r}")
        if hello.get("protocol") != PROTOCOL_VERSION:
            self.close()
            raise WorkerError(f"vocalgrad-worker: the worker speaks protocol {hello.get('protocol')!r}, this toolkit "
                              f"speaks {PROTOCOL_VERSION}; update harness_tasks/workers/protocol.py on the worker side")
        self.hello = hello
        log.info("vocalgrad-worker: %s (model %s, %s) ready, pid %s; generation: %s", hello.get("worker"),
                 hello.get("model"), hello.get("version") or "no version", self.proc.pid,
                 json.dumps(hello.get("generation"), default=str) if hello.get("generation") else "not stated")
        return hello

    def _read_stdout(self, proc: subprocess.Popen) -> None:
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith(PREFIX):
                try:
                    self._msgs.put(json.loads(line[len(PREFIX):]))
                except json.JSONDecodeError:
                    self._stderr.append(f"[bad protocol line] {line[:200]}")
            elif line.strip():
                self._stderr.append(f"[stdout] {line}")
        self._msgs.put(None)  # end of output

    def _read_stderr(self, proc: subprocess.Popen) -> None:
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.strip():
                self._stderr.append(line)
                log.debug("worker: %s", line)

    def _tail(self) -> str:
        time.sleep(0.1)  # let the readers catch the last lines
        return "\n".join(self._stderr) or "(nothing on stderr)"

    def _receive(self, timeout: float, what: str) -> dict[str, Any]:
        try:
            msg = self._msgs.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise WorkerError(f"vocalgrad-worker: no reply within {timeout:g} s while waiting for {what}; "
                              f"last stderr lines of the worker:\n{self._tail()}") from None
        if msg is None:
            code = self.proc.wait(timeout=30) if self.proc is not None else None
            raise WorkerError(f"vocalgrad-worker: the worker exited (code {code}) while we waited for {what}; "
                              f"last stderr lines of the worker:\n{self._tail()}")
        return msg

    def close(self) -> None:
        """Ask the worker to stop (then terminate it)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None:
                proc.stdin.write(b'{"type": "shutdown"}\n')
                proc.stdin.flush()
                proc.stdin.close()
                proc.wait(timeout=10)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if self._tmp is not None:
            import shutil

            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ requests
    def _audio(self, q: Query) -> list[dict[str, Any]]:
        out = []
        for i, a in enumerate(q.audios):
            y, sr = a["array"], int(a["sampling_rate"])
            if self.sample_rate and sr != self.sample_rate:
                y, sr = resample(y, sr, self.sample_rate), self.sample_rate
            wav = encode_wav(y, sr)
            cid = getattr(a, "clip_id", None) or f"clip{i}"
            if self.audio_mode == "bytes":
                out.append({"clip_id": cid, "format": "wav", "data": base64.b64encode(wav).decode("ascii")})
            else:
                if self._tmp is None:
                    self._tmp = tempfile.mkdtemp(prefix="vocalgrad-worker-")
                path = os.path.join(self._tmp, f"{self._next_id}-{i}.wav")
                with open(path, "wb") as fh:
                    fh.write(wav)
                out.append({"clip_id": cid, "format": "wav", "path": path})
        return out

    def request(self, q: Query) -> dict[str, Any]:
        """The protocol message for a query."""
        first = self.audio_first_of(q)
        parts = [{"type": "text", "text": v} if kind == "text" else {"type": "audio", "index": v}
                 for kind, v in layout(q.prompt, list(range(len(q.audios))), audio_first=first)]
        return {"type": "request", "id": self._next_id, "prompt": q.prompt, "parts": parts,
                "audios": self._audio(q), "audio_first": first, "system_prompt": self.system_prompt,
                "max_new_tokens": int(q.max_new_tokens), "gen_kwargs": q.gen_kwargs,
                "answer_words": q.answer_words}

    def _ask(self, q: Query) -> str:
        self.start()
        msg = self.request(q)  # may raise (undecodable clip): a per-clip error in the base
        line = (json.dumps(msg, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        try:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            code = self.proc.wait(timeout=30) if self.proc is not None else None
            raise WorkerError(f"vocalgrad-worker: the worker exited (code {code}) before clip {q.clip_id} was sent; "
                              f"last stderr lines of the worker:\n{self._tail()}") from None
        self._next_id += 1
        while True:
            reply = self._receive(self.timeout, f"the answer for clip {q.clip_id}")
            if reply.get("type") == "answer" and reply.get("id") == msg["id"]:
                break
            log.debug("vocalgrad-worker: ignoring %r", reply)
        if reply.get("error") is not None:
            return error_answer(f"worker: {reply['error']}")
        return str(reply.get("text", ""))

    def card_fields(self) -> dict[str, Any]:
        hello = self.hello or {}
        gen = hello.get("generation")
        return {"environment": hello.get("environment") or
                ({"file": None, "note": "the worker never started (every answer came from the answer log)"}
                 if not hello else None),
                "worker": {k: hello.get(k) for k in ("worker", "model", "version") if hello.get(k)},
                "decoding": gen, "stop_tokens": (gen or {}).get("stop_tokens", []),
                "prompt_layout": "the request's parts in order, laid out by the worker for the model's own API"}

    def answer_log_info(self) -> dict[str, Any]:
        """The worker's handshake (name, model, version, generation settings) on each answer-log line."""
        hello = self.hello or {}
        return {"worker": {k: hello[k] for k in ("worker", "model", "version", "generation") if hello.get(k)}}

    def answer(self, queries: list[Query]) -> list[str]:
        return [self._ask(q) for q in queries]

    def generate_until(self, requests, disable_tqdm: bool = False):
        try:
            return super().generate_until(requests, disable_tqdm=disable_tqdm)
        except BaseException:
            self.close()
            raise
