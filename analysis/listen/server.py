"""The listening-test web server (standard library ``http.server``, one annotator per process).

Routes (anything else is 404; wrong methods 405)::

    GET  /                   the page (static/index.html with the request token filled in)
    GET  /app.js, /style.css the page's script and style
    GET  /api/next           the next clip to ask (opaque token, question), progress
    POST /api/answer         {"token", "answer", "rt_sec", "plays"} -> recorded / repeat, feedback
    GET  /audio/<token>      the clip's FLAC bytes
    GET  /show/<token>.png   clip inspector figure (practice clips only, after they are answered)

Clips are named by tokens (an HMAC of the clip id under a per-process secret), never by clip ids,
which would give the answer away; no URL is ever turned into a file path. Every API request
must carry the page's request token in ``X-Listen-Token`` (a custom header, so another web site
cannot post answers from the annotator's browser) and, when bound to a loopback address, a
``Host`` header naming that address (no DNS rebinding).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import vocalgrad

from .answers import AnswerLog
from .catalog import Catalog, ClipInfo
from .study import annotator_order, annotator_seed, select_study

__all__ = ["ListenApp", "make_server", "is_loopback", "ANNOTATOR_RE"]

STATIC = Path(__file__).parent / "static"
ANNOTATOR_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TOKEN_RE = re.compile(r"^[0-9a-f]{24}$")
_MAX_BODY = 4096
_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'self'; img-src 'self'; media-src 'self'; object-src 'none'; "
                               "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
}


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class ListenApp:
    """State of one annotator's listening session (thread-safe).

    Parameters
    ----------
    catalog : Catalog
    annotator : str
        Name (letters, digits, ``_.-``; at most 64 characters).
    answers : path-like
        The answers file (shared with other annotators and processes).
    per_category, practice, seed, categories, subset
        See :func:`analysis.listen.study.select_study`.
    """

    def __init__(self, catalog: Catalog, annotator: str, answers, *, per_category: int | None = None,
                 practice: int = 0, seed: int = 0, categories=None, subset: str | None = None):
        if not ANNOTATOR_RE.match(annotator or ""):
            raise ValueError(f"annotator name {annotator!r}: use 1-64 letters, digits, '_', '.' or '-'")
        self.catalog, self.annotator, self.seed = catalog, annotator, seed
        self.log = AnswerLog(answers)
        practice_clips, study = select_study(catalog.clips.values(), per_category=per_category,
                                             practice=practice, seed=seed, categories=categories, subset=subset)
        rng_order = annotator_order(practice_clips, annotator, seed=seed)
        self.practice = rng_order
        self.study = annotator_order(study, annotator, seed=seed)
        self._secret = secrets.token_bytes(32)
        self.request_token = secrets.token_urlsafe(24)
        self._by_token: dict[str, tuple[ClipInfo, bool, int]] = {}
        for phase, items in ((True, self.practice), (False, self.study)):
            for pos, clip in enumerate(items):
                self._by_token[self.token(clip.clip_id)] = (clip, phase, pos)
        self._png: dict[str, bytes] = {}
        self._png_lock = threading.Lock()
        self.started = time.time()
        self.order_seed = annotator_seed(annotator, seed)

    def token(self, clip_id: str) -> str:
        """Opaque name of a clip in URLs (HMAC-SHA256 under this process's secret, 24 hex)."""
        return hmac.new(self._secret, clip_id.encode(), hashlib.sha256).hexdigest()[:24]

    def lookup(self, token: str) -> tuple[ClipInfo, bool, int] | None:
        """(clip, is_practice, position) of a token, or None."""
        if not _TOKEN_RE.match(token):
            return None
        return self._by_token.get(token)

    def state(self) -> dict:
        """Next clip and progress (the body of ``GET /api/next``)."""
        done = self.log.answered(self.annotator)
        practice_left = [c for c in self.practice if c.clip_id not in done]
        study_left = [c for c in self.study if c.clip_id not in done]
        progress = {
            "practice_done": len(self.practice) - len(practice_left), "practice_total": len(self.practice),
            "done": len(self.study) - len(study_left), "total": len(self.study),
        }
        if practice_left:
            clip, phase = practice_left[0], "practice"
        elif study_left:
            clip, phase = study_left[0], "study"
        else:
            return {"annotator": self.annotator, "phase": "finished", "item": None, "progress": progress}
        return {"annotator": self.annotator, "phase": phase, "item": self._item(clip), "progress": progress}

    def _item(self, clip: ClipInfo) -> dict:
        cat = vocalgrad.category(clip.category)
        question, instruction = vocalgrad.default_prompt(clip.category).split("\n\n", 1)
        return {"token": self.token(clip.clip_id), "attribute": cat.attribute, "question": question,
                "instruction": instruction, "increase_means": cat.increase_means,
                "decrease_means": cat.decrease_means}

    def answer(self, payload: dict) -> tuple[int, dict]:
        """Record an answer (the body of ``POST /api/answer``); returns (HTTP status, body)."""
        token = payload.get("token")
        found = self.lookup(token) if isinstance(token, str) else None
        if found is None:
            return 404, {"error": "unknown clip token; reload the page"}
        answer = payload.get("answer")
        if answer not in vocalgrad.DIRECTIONS:
            return 400, {"error": f"answer must be one of {list(vocalgrad.DIRECTIONS)}"}
        rt = payload.get("rt_sec")
        if rt is not None and (isinstance(rt, bool) or not isinstance(rt, (int, float)) or not 0 <= rt < 86400):
            return 400, {"error": "rt_sec must be a number of seconds (0 to 86400) or null"}
        plays = payload.get("plays", 0)
        if isinstance(plays, bool) or not isinstance(plays, int) or not 0 <= plays < 10000:
            return 400, {"error": "plays must be a small non-negative integer"}
        clip, practice, position = found
        record = {
            "annotator": self.annotator, "clip_id": clip.clip_id, "answer": answer,
            "rt_sec": None if rt is None else round(float(rt), 3), "plays": plays, "practice": practice,
            "position": position, "category": clip.category, "direction": clip.direction,
            "tier": clip.tier, "trajectory": clip.trajectory, "source_id": clip.source_id,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        written = self.log.append(record)
        body: dict = {"recorded": written, "repeat": not written, "progress": self.state()["progress"]}
        if practice:
            cat = vocalgrad.category(clip.category)
            body["feedback"] = {
                "correct": answer == clip.direction, "direction": clip.direction,
                "means": cat.increase_means if clip.direction == "increase" else cat.decrease_means,
                "show": f"/show/{token}.png",
            }
        return 200, body

    def show_png(self, token: str) -> bytes | None:
        """Inspector figure of an answered practice clip (None if not allowed)."""
        found = self.lookup(token)
        if found is None or not found[1] or found[0].clip_id not in self.log.answered(self.annotator):
            return None
        with self._png_lock:
            if token not in self._png:
                from ..show import figure_png

                self._png[token] = figure_png(self.catalog, found[0].clip_id)
            return self._png[token]


def _static(name: str) -> bytes:
    return (STATIC / name).read_bytes()


class _Handler(BaseHTTPRequestHandler):
    server_version = "vocalgrad-listen"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    app: ListenApp
    allowed_hosts: frozenset | None
    quiet: bool = True

    # -- plumbing -------------------------------------------------------------------------
    def log_message(self, format, *args):  # noqa: A002 (signature of the base class)
        if not self.quiet:
            sys.stderr.write(f"listen: {self.address_string()} {format % args}\n")

    def _send(self, status: int, body: bytes, ctype: str, *, cache: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "private, max-age=3600" if cache else "no-store")
        for k, v in _SECURITY_HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: dict) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _host_ok(self) -> bool:
        if self.allowed_hosts is None:
            return True
        return (self.headers.get("Host") or "").lower() in self.allowed_hosts

    def _api_ok(self) -> bool:
        token = self.headers.get("X-Listen-Token", "")
        return hmac.compare_digest(token.encode(), self.app.request_token.encode())

    def _path(self) -> str | None:
        if len(self.path) > 512:
            return None
        path = urlsplit(self.path).path
        return path if re.fullmatch(r"/[A-Za-z0-9_./-]*", path) and ".." not in path else None

    # -- methods --------------------------------------------------------------------------
    def _guarded(self, fn) -> None:
        try:
            fn()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # a damaged clip file, a vanished answers file: say so, keep serving
            sys.stderr.write(f"listen: error on {self.command} {self.path[:120]}: {exc!r}\n")
            try:
                self._error(500, f"server error: {type(exc).__name__}: {exc}")
            except OSError:
                self.close_connection = True

    def do_GET(self):  # noqa: N802 (http.server naming)
        self._guarded(self._get)

    def do_HEAD(self):  # noqa: N802
        self._guarded(self._get)

    def do_POST(self):  # noqa: N802
        self._guarded(self._post)

    def _get(self):
        if not self._host_ok():
            return self._error(421, "unexpected Host header")
        path = self._path()
        if path is None:
            return self._error(400, "malformed path")
        if path in ("/", "/index.html"):
            page = _static("index.html").replace(b"__REQUEST_TOKEN__", self.app.request_token.encode())
            return self._send(200, page, "text/html; charset=utf-8")
        if path == "/app.js":
            return self._send(200, _static("app.js"), "text/javascript; charset=utf-8")
        if path == "/style.css":
            return self._send(200, _static("style.css"), "text/css; charset=utf-8")
        if path == "/favicon.ico":
            return self._send(204, b"", "image/x-icon")
        m = re.fullmatch(r"/audio/([0-9a-f]{24})", path)
        if m:
            found = self.app.lookup(m.group(1))
            if found is None:
                return self._error(404, "unknown clip")
            return self._send(200, self.app.catalog.audio_bytes(found[0].clip_id), "audio/flac", cache=True)
        m = re.fullmatch(r"/show/([0-9a-f]{24})\.png", path)
        if m:
            if not self._api_ok() and self.headers.get("Sec-Fetch-Site", "same-origin") != "same-origin":
                return self._error(403, "cross-site request")
            png = self.app.show_png(m.group(1))
            if png is None:
                return self._error(404, "no figure for this clip (practice clips only, after answering)")
            return self._send(200, png, "image/png")
        if path == "/api/next":
            if not self._api_ok():
                return self._error(403, "missing or wrong X-Listen-Token; reload the page")
            return self._json(200, self.app.state())
        if path == "/api/answer":
            return self._error(405, "use POST")
        return self._error(404, "not found")

    def _post(self):
        if not self._host_ok():
            return self._error(421, "unexpected Host header")
        path = self._path()
        if path != "/api/answer":
            return self._error(404 if path else 400, "not found" if path else "malformed path")
        if not self._api_ok():
            return self._error(403, "missing or wrong X-Listen-Token; reload the page")
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            return self._error(411, "Content-Length required")
        if int(length) > _MAX_BODY:
            self.close_connection = True
            return self._error(413, f"request body over {_MAX_BODY} bytes")
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            self.rfile.read(int(length))
            return self._error(415, "send application/json")
        try:
            payload = json.loads(self.rfile.read(int(length)))
        except (ValueError, UnicodeDecodeError):
            return self._error(400, "body is not JSON")
        except RecursionError:  # e.g. 2000 nested arrays: a malformed request, not a server error
            return self._error(400, "body is nested too deeply")
        if not isinstance(payload, dict):
            return self._error(400, "body must be a JSON object")
        status, body = self.app.answer(payload)
        return self._json(status, body)

    def _not_allowed(self):
        self._error(405, "method not allowed")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed


class _Server(ThreadingHTTPServer):
    """The listening server: a connection the browser resets or closes is no error worth a traceback."""

    quiet: bool = True

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, TimeoutError)):
            if not self.quiet:  # browsers reset connections they no longer need: one line at most
                sys.stderr.write(f"listen: {client_address[0]} closed the connection ({type(exc).__name__})\n")
            return
        sys.stderr.write(f"listen: error on a request from {client_address[0]}: {exc!r}\n")


def make_server(app: ListenApp, *, host: str = "127.0.0.1", port: int = 0, quiet: bool = True):
    """A :class:`http.server.ThreadingHTTPServer` serving ``app`` (call ``serve_forever``).

    ``port=0`` picks a free port (read it back from ``server.server_address``).
    """
    handler = type("ListenHandler", (_Handler,), {"app": app, "allowed_hosts": None, "quiet": quiet})
    cls = type("ListenServer", (_Server,), {"quiet": quiet})
    if ":" in host:
        import socket

        cls = type("ListenServer6", (cls,), {"address_family": socket.AF_INET6})
    server = cls((host, port), handler)
    server.daemon_threads = True
    real_port = server.server_address[1]
    if is_loopback(host):
        names = {"localhost", "127.0.0.1", "[::1]", host if ":" not in host else f"[{host}]"}
        handler.allowed_hosts = frozenset(f"{n}:{real_port}" for n in names)
    return server
