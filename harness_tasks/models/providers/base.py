"""What every provider adapter of ``vocalgrad-openai`` shares: the reply, the errors, and how a
refused request field is told apart from any other HTTP 400.

A provider (:class:`Provider`) turns one query (text and WAV clips in the order the model must
hear them) into the request its maker documents, sends it through the maker's SDK (which owns the
HTTP retries, ``Retry-After`` and rate limits) and returns a :class:`Reply`. Failures come back as
one of three exceptions:

* :class:`FieldRefused` - the provider refused a field of the request (HTTP 400 naming it). Every
  other clip would get the same answer, so the run stops with one line naming the field
  (a :class:`~harness_tasks.models.base.FatalAdapterError`);
* :class:`Malformed` - a reply that cannot be read (retried by the adapter, as the SDKs do not);
* :class:`RequestFailed` - anything else after the SDK's retries: this clip's error answer.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vocalgrad import VocalGradError

from ..base import FatalAdapterError

__all__ = ["FieldRefused", "Malformed", "Provider", "Reply", "RequestFailed", "Stop", "refused_field",
           "stop_line"]

#: HTTP statuses that say every request of the run would fail alike (bad key, no access, no such
#: model): the run stops with one line instead of one error answer per clip.
FATAL_STATUS = {401, 403, 404}


@dataclass
class Reply:
    """A provider's answer: the text (reasoning parts left out), why it ended, the token usage, the
    reasoning a server's reasoning parser split off (``""``: none), and the provider's block signal when
    it blocked the reply (``blocked``: e.g. ``finishReason SAFETY``; the text is then not an answer,
    whatever it holds)."""

    text: str
    finish: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    reasoning: str = ""
    blocked: str | None = None


class Malformed(VocalGradError):
    """A reply that cannot be read (no choices, no text, broken JSON): asked again."""


class RequestFailed(VocalGradError):
    """A request that failed after the SDK's retries: this clip's error answer."""


class Stop(FatalAdapterError):
    """A failure every clip would share (bad key, unknown model): the run stops with one line."""


class FieldRefused(Stop):
    """The provider refused a field of the request (HTTP 400 naming it)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


_PATTERNS = (
    re.compile(r"Unrecognized request argument supplied: ['\"]?([\w.]+)"),     # OpenAI
    re.compile(r"Unsupported parameter: ['\"]([\w.]+)['\"]"),                   # OpenAI
    re.compile(r"Unsupported value: ['\"]([\w.]+)['\"]"),                       # OpenAI
    re.compile(r"Unknown name \\?\"([\w.]+)\\?\""),                             # Google (proto JSON)
    re.compile(r"[Ee]xtra inputs are not permitted.*?['\"]([\w.]+)['\"]"),      # pydantic servers
)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def refused_field(message: str, sent: Iterable[str], param: str | None = None,
                  violations: Iterable[str] = ()) -> str | None:
    """The request field an HTTP 400 names, or None when it names none of them.

    Parameters
    ----------
    message : str
        The provider's error message.
    sent : iterable of str
        Names of the fields the request held (snake_case; camelCase spellings match too).
    param : str, optional
        OpenAI's ``error.param``.
    violations : iterable of str
        Google's ``BadRequest.fieldViolations[].field`` paths.
    """
    sent = list(dict.fromkeys(sent))
    spelled = {s: s for s in sent} | {_camel(s): s for s in sent}
    if param and param.split(".")[-1] in spelled:
        return spelled[param.split(".")[-1]]
    for pattern in _PATTERNS:
        m = pattern.search(message)
        if m:
            name = m.group(1).split(".")[-1]
            return spelled.get(name, name)
    for path in violations:
        last = re.sub(r"\[\d+\]", "", str(path)).split(".")[-1]
        if last in spelled:
            return spelled[last]
    m = re.search(r"\binvalid ([\w.]+): ", message, re.IGNORECASE)   # Google's OpenAI endpoint: "Invalid x: v."
    if m and m.group(1).split(".")[-1] in spelled:
        return spelled[m.group(1).split(".")[-1]]
    low = message.lower()
    if "penalty is not enabled" in low:                      # Gemini 2.5 and later
        return next((s for s in sent if s.endswith("penalty")), "frequency_penalty")
    if "thinking" in low and ("budget" in low or "level" in low):
        # "The thinking budget 99999 is invalid ...", "Thinking level MINIMAL is not supported for this model."
        # Google's OpenAI endpoint maps reasoning_effort onto the level, and names the level in its refusal.
        key = "thinking_level" if "level" in low else "thinking_budget"
        thinking = [s for s in sent if "thinking" in s]
        if thinking:
            return next((s for s in thinking if s == key), thinking[0])
        if "reasoning_effort" in sent:
            return "reasoning_effort"
    for s in sorted(spelled, key=len, reverse=True):          # a sent field quoted in the message
        if re.search(rf"['\"`]{re.escape(s)}['\"`]", message):
            return spelled[s]
    return None


def stop_line(route: str, provider: str, status: int, message: str, field: str | None, hint: str = "") -> str:
    """The one line a run stops with."""
    text = " ".join(str(message).split())
    text = text if len(text) <= 200 else text[:197] + "..."
    what = f"refused the request field '{field}'" if field else "refused the request"
    return (f"{route}: {provider} {what} (HTTP {status}: {text}); stopped before asking for the other clips"
            + (f"; {hint}" if hint else ""))


class Provider:
    """One provider's request and reply (subclasses: :mod:`.openai_api`, :mod:`.compat`, :mod:`.gemini`).

    Attributes
    ----------
    name : str
        The ``provider=`` value.
    """

    name = ""
    _client = None

    @property
    def client(self):
        """The provider's SDK client (:meth:`_make_client`), made once and shared by every thread: a client
        dropped and made again would close the other threads' connections."""
        with self.__dict__.setdefault("_client_lock", threading.Lock()):
            if self._client is None:
                self._client = self._make_client()
            return self._client

    def _make_client(self):
        """A new SDK client (raises :class:`Stop` naming the package when it is not installed)."""
        raise NotImplementedError

    def build(self, parts: list[tuple[str, Any]], *, system: str | None, budget: int,
              scale: float = 1.0) -> dict[str, Any]:
        """The request body of one query (``parts``: ``("text", str)`` / ``("audio", wav bytes)``;
        ``budget``: the task's answer tokens; ``scale``: the empty-reply re-ask's multiplier)."""
        raise NotImplementedError

    def send(self, body: Mapping[str, Any]) -> Reply:
        """Send ``body``; raises :class:`FieldRefused`, :class:`Stop`, :class:`Malformed` or :class:`RequestFailed`."""
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        """The request settings besides the prompt (for the route's card and the answer-log key)."""
        raise NotImplementedError
