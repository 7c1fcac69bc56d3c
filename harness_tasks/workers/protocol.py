"""Worker side of the ``vocalgrad-worker`` protocol (standard library only: copy or import it).

A worker is any program that answers VocalGrad requests for one model, usually in its own
environment (conda env, venv, container) where the model's own inference package is installed.
``vocalgrad-worker`` starts it (model argument ``cmd=...``) and talks to it over its
stdin/stdout, one JSON object per line:

1. worker -> parent, once at start-up (the handshake)::

       @@vocalgrad@@ {"type": "hello", "protocol": 1, "worker": "kimi-audio", "model": "...", "version": "...",
                      "generation": {"decoding": "greedy", ...}}

   ``generation`` (optional) says how the worker decodes: the settings it passes to the
   model's own API and what that API does not let it control. The parent logs it and keeps it
   with every answer in the answer log.

2. parent -> worker, one line per request (no prefix)::

       {"type": "request", "id": 7, "prompt": "...", "audio_first": false, "system_prompt": null,
        "parts": [{"type": "text", "text": "..."}, {"type": "audio", "index": 0}],
        "audios": [{"clip_id": "...", "format": "wav", "data": "<base64 16-bit PCM WAV>"}
                   | {"clip_id": "...", "format": "wav", "path": "/tmp/.../clip.wav"}],
        "max_new_tokens": 128, "gen_kwargs": {"until": [], "do_sample": false, ...},
        "answer_words": null}

   ``parts`` is the order the model must see text and clips in (audio first or last, or
   interleaved for few-shot prompts); ``prompt`` is the raw text.

3. worker -> parent, one line per request::

       @@vocalgrad@@ {"type": "answer", "id": 7, "text": "increase"}
       @@vocalgrad@@ {"type": "answer", "id": 7, "error": "CUDA out of memory ..."}

4. parent -> worker at the end: ``{"type": "shutdown"}``.

Protocol lines carry the prefix :data:`PREFIX`. :func:`serve` also moves file descriptor 1 to
stderr once the handshake is sent, so stray prints of the model code (Python or C) land in
stderr and never corrupt the protocol; the parent shows the stderr tail when a worker dies.

Writing a worker::

    from harness_tasks.workers.protocol import serve   # or: from protocol import serve

    model = load_my_model()

    def answer(req):
        paths = req.audio_paths()                      # temporary WAV files, removed afterwards
        return model.chat(req.text(), paths[0], max_new_tokens=req.max_new_tokens)

    serve(answer, worker="my-model", model="org/my-model")
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import sys
import tempfile
import traceback
import wave
from typing import Any, Callable

__all__ = ["ENV_MARKER", "PREFIX", "PROTOCOL_VERSION", "Request", "environment", "parse_args", "serve"]

#: Version of the line protocol; the parent refuses a worker that speaks another one.
PROTOCOL_VERSION = 1
#: Prefix of every worker -> parent protocol line.
PREFIX = "@@vocalgrad@@ "


class Request:
    """One request, with helpers to get at its audio."""

    def __init__(self, msg: dict[str, Any]) -> None:
        self.msg = msg
        self.id = msg.get("id")
        self.prompt: str = msg.get("prompt", "")
        self.parts: list[dict[str, Any]] = msg.get("parts") or []
        self.audios: list[dict[str, Any]] = msg.get("audios") or []
        self.audio_first: bool = bool(msg.get("audio_first"))
        self.system_prompt: str | None = msg.get("system_prompt")
        self.max_new_tokens: int = int(msg.get("max_new_tokens") or 128)
        self.gen_kwargs: dict[str, Any] = msg.get("gen_kwargs") or {}
        self.answer_words = msg.get("answer_words")
        self._tmp: str | None = None

    def text(self) -> str:
        """All text parts joined by blank lines (for APIs that take one text and one clip)."""
        return "\n\n".join(p["text"] for p in self.parts if p.get("type") == "text") or self.prompt

    def audio_bytes(self) -> list[bytes]:
        """The clips as WAV bytes, in request order."""
        out = []
        for a in self.audios:
            if a.get("data") is not None:
                out.append(base64.b64decode(a["data"]))
            else:
                with open(a["path"], "rb") as fh:
                    out.append(fh.read())
        return out

    def audio_paths(self) -> list[str]:
        """The clips as WAV files (temporary ones for inline clips; removed after the request)."""
        out = []
        for i, a in enumerate(self.audios):
            if a.get("path"):
                out.append(a["path"])
                continue
            if self._tmp is None:
                self._tmp = tempfile.mkdtemp(prefix="vocalgrad-req-")
            path = os.path.join(self._tmp, f"clip{i}.wav")
            with open(path, "wb") as fh:
                fh.write(base64.b64decode(a["data"]))
            out.append(path)
        return out

    def audio_samples(self) -> list[tuple[list[float], int]]:
        """The clips as (samples in [-1, 1], sample rate), decoded with the ``wave`` module."""
        out = []
        for data in self.audio_bytes():
            with wave.open(io.BytesIO(data)) as w:
                if w.getsampwidth() != 2:
                    raise ValueError("expected 16-bit PCM WAV")
                raw, ch = w.readframes(w.getnframes()), w.getnchannels()
                sr = w.getframerate()
            import array

            pcm = array.array("h", raw)
            if sys.byteorder == "big":
                pcm.byteswap()
            mono = [sum(pcm[i:i + ch]) / (ch * 32768.0) for i in range(0, len(pcm), ch)]
            out.append((mono, sr))
        return out

    def cleanup(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


def _protocol_stream():
    """A private copy of stdout for protocol lines; fd 1 then points at stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    return os.fdopen(fd, "w", buffering=1, encoding="utf-8")


def serve(answer: Callable[[Request], str], *, worker: str, model: str = "", version: str = "",
          generation: dict[str, Any] | None = None, stdin=None) -> None:
    """Answer requests from stdin until shutdown or end of input.

    Parameters
    ----------
    answer : callable
        ``answer(request) -> str``. An exception becomes an error reply for that request (the
        parent counts it as a wrong, error answer) and the worker goes on.
    worker, model, version : str
        Sent in the handshake (shown in logs and kept with the answers).
    generation : dict, optional
        The worker's decoding settings, sent in the handshake (JSON values only).
    """
    out = _protocol_stream()
    stdin = stdin or sys.stdin

    def send(obj: dict[str, Any]) -> None:
        out.write(PREFIX + json.dumps(obj, ensure_ascii=False) + "\n")
        out.flush()

    hello = {"type": "hello", "protocol": PROTOCOL_VERSION, "worker": worker, "model": model, "version": version,
             "pid": os.getpid()}
    env = environment()
    if env is not None:
        hello["environment"] = env
    if generation is not None:
        hello["generation"] = generation
    send(hello)
    for line in stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError as exc:
            send({"type": "answer", "id": None, "error": f"bad request line: {exc}"})
            continue
        if msg.get("type") == "shutdown":
            break
        req = Request(msg)
        try:
            text = answer(req)
            send({"type": "answer", "id": req.id, "text": "" if text is None else str(text)})
        except Exception as exc:  # the worker survives a failing request
            traceback.print_exc(file=sys.stderr)
            send({"type": "answer", "id": req.id, "error": f"{type(exc).__name__}: {exc}"})
        finally:
            req.cleanup()
    out.close()


#: Name of the file ``scripts/worker_env.sh`` writes beside the venv it makes.
ENV_MARKER = ".vocalgrad-worker-env"


def environment(prefix: str | None = None) -> dict[str, str] | None:
    """The locked environment this interpreter belongs to: the ``key: value`` lines (route, lock
    file, its sha256) of the marker ``scripts/worker_env.sh`` writes next to the venv it makes
    (``DIR/.vocalgrad-worker-env`` for ``DIR/venv``), sent in the handshake; None elsewhere."""
    path = os.path.join(os.path.dirname(os.path.abspath(prefix or sys.prefix)), ENV_MARKER)
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    out = {}
    for line in lines:
        key, sep, value = line.partition(": ")
        if sep:
            out[key.strip()] = value.strip()
    return out


def parse_args(argv: list[str]) -> dict[str, str]:
    """``key=value`` command-line words (also ``key=v1,key2=v2``) as a dict of strings."""
    out: dict[str, str] = {}
    for word in argv:
        for item in word.split(","):
            if not item:
                continue
            if "=" not in item:
                raise SystemExit(f"expected key=value, got {item!r}")
            k, v = item.split("=", 1)
            out[k.strip()] = v
    return out
