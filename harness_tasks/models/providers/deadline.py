"""A deadline for a whole HTTP request: connect, send and every read of the reply together.

The providers' SDKs (``openai``, ``google-genai``) send through ``httpx2``, whose timeouts bound
each network operation: a server that sends one byte every half second never trips a read
timeout of 3 s and holds the request for as long as it drips. :class:`DeadlineTransport` is the
SDKs' own transport with one change: each request (each attempt of the SDK's retries) gets
``seconds`` in all, from the moment it is handed to the transport; a connect, write or read still
running at the deadline ends with ``httpx2``'s timeout error (``ConnectTimeout``, ``WriteTimeout``,
``ReadTimeout``), which the SDKs retry and then report as they report any timeout.

Every read of a request runs in the thread that sent it (the SDK calls are synchronous), so the
deadline is kept per thread.
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["DeadlineTransport", "check_timeout"]

_local = threading.local()


def check_timeout(seconds: float) -> float:
    """``seconds`` when it is a usable deadline (> 0, finite), else ``ValueError`` naming the range."""
    if not (isinstance(seconds, (int, float)) and 0 < seconds < float("inf")):
        raise ValueError(f"timeout must be a number of seconds > 0, got {seconds!r}")
    return float(seconds)


def _left(error: type[Exception], timeout: float | None) -> float:
    """The seconds an operation may take: its own timeout, cut to what is left of the request's deadline."""
    until = getattr(_local, "until", None)
    if until is None:
        return timeout
    left = until - time.monotonic()
    if left <= 0:
        raise error("the request's deadline passed (timeout= bounds the whole request)")
    return left if timeout is None else min(timeout, left)


def _make_classes():
    import httpcore2
    import httpx2
    from httpcore2._backends.sync import SyncBackend

    class Stream(httpcore2.NetworkStream):
        """A network stream whose every read and write ends by the request's deadline."""

        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self._inner.read(max_bytes, _left(httpcore2.ReadTimeout, timeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            return self._inner.write(buffer, _left(httpcore2.WriteTimeout, timeout))

        def close(self) -> None:
            self._inner.close()

        def start_tls(self, ssl_context, server_hostname=None, timeout=None):
            return Stream(self._inner.start_tls(ssl_context, server_hostname,
                                                _left(httpcore2.ConnectTimeout, timeout)))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class Backend(SyncBackend):
        """``httpcore2``'s socket backend with :class:`Stream` streams."""

        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            return Stream(super().connect_tcp(host, port, _left(httpcore2.ConnectTimeout, timeout),
                                              local_address, socket_options))

        def connect_unix_socket(self, path, timeout=None, socket_options=None):  # pragma: no cover
            return Stream(super().connect_unix_socket(path, _left(httpcore2.ConnectTimeout, timeout), socket_options))

    class Transport(httpx2.HTTPTransport):
        """``httpx2.HTTPTransport`` whose requests each end within ``seconds`` (see the module docstring)."""

        def __init__(self, seconds: float, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.seconds = check_timeout(seconds)
            self._pool._network_backend = Backend()   # the pool's one socket backend (no public setter)

        def handle_request(self, request):
            _local.until = time.monotonic() + self.seconds    # the reply's body is read in this thread
            return super().handle_request(request)

    return Transport


_TRANSPORT = None


def DeadlineTransport(seconds: float, **kwargs: Any):  # noqa: N802 - a class made on first use
    """An ``httpx2`` transport whose every request ends within ``seconds`` (imports ``httpx2`` on first use)."""
    global _TRANSPORT
    if _TRANSPORT is None:
        _TRANSPORT = _make_classes()
    return _TRANSPORT(seconds, **kwargs)
