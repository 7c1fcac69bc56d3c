"""The reasoning side of every adapter: the reasoning budget, the answer the parser reads, the counts.

Mixed into :class:`harness_tasks.models.base.VocalGradLM`, so the hf, worker and
openai-compatible routes share it:

- **budget** (model argument ``reasoning_budget``): tokens a reasoning model gets on top of the
  task's answer budget (``max_gen_toks``, 128; the unparsed-answer retry's 256). ``auto``
  (default): :data:`DEFAULT_REASONING_BUDGET` when the route knows that its model
  reasons (``vocalgrad-hf``: the family or checkpoint says so), else 0; an integer sets it for any
  route (a served thinking model); ``0`` / ``none``: no extra tokens.
- **what the parser reads**: a reply that opens with a reasoning block (:mod:`.split`) is read
  after the block; the block stays in the answer log and in lm-eval's sample log (the raw reply).
  When the model's chat template opens the block in the prompt (``<think>\\n`` ending the
  generation prompt), the reply is returned with that opening put back, so the sample log shows the
  whole block and the hooks find it.
- **counts**: answers with a reasoning block and those cut off inside it (the reply ended before
  the closing delimiter: the budget ran out) are counted on the final answers; the results file's
  ``config.vocalgrad_model.reasoning`` holds the budget, the delimiters and the cut-off share, and a
  warning names the share at the end of ``generate_until``.
"""

from __future__ import annotations

import logging
from typing import Any

from ...parsing import is_marked_answer
from ..args import ModelArgumentError
from .split import KNOWN_DELIMITERS, as_pairs, split_reasoning

log = logging.getLogger("vocalgrad")

__all__ = ["DEFAULT_REASONING_BUDGET", "THINKING_MODES", "ReasoningRoute", "parse_budget", "parse_thinking"]

#: Reasoning tokens a thinking model gets on top of the task's answer budget (model argument
#: ``reasoning_budget``; docs/models.md, "Thinking models").
DEFAULT_REASONING_BUDGET = 4096

#: Values of the ``thinking`` model argument: ``auto`` (the model's own default: the chat template
#: is rendered without a thinking switch), ``on`` / ``off`` (the switch is set: ``enable_thinking``
#: or the family's own template argument on ``vocalgrad-hf`` and the worker, ``chat_template_kwargs``
#: on a vLLM / SGLang server).
THINKING_MODES = ("auto", "on", "off")


def parse_thinking(value: Any, name: str = "thinking") -> str:
    """``thinking``: ``auto`` (default), ``on`` or ``off`` (``true``/``false``, ``yes``/``no``,
    ``1``/``0`` read as on/off)."""
    text = "auto" if value is None else str(value).strip().lower()
    text = {"true": "on", "yes": "on", "1": "on", "false": "off", "no": "off", "0": "off", "": "auto"}.get(text, text)
    if text not in THINKING_MODES:
        raise ModelArgumentError(f"--model_args {name} must be auto, on or off, got {value!r}")
    return text


def parse_budget(value: Any) -> int | None:
    """``reasoning_budget``: None for ``auto``, else a whole number >= 0 (``none``/``off``: 0; lm-eval
    reads ``reasoning_budget=none`` as Python's None, which is ``none`` too: the default is ``"auto"``)."""
    if value is None or value is False:
        return 0
    if str(value).strip().lower() == "auto":
        return None
    if str(value).strip().lower() in ("none", "off", "false", ""):
        return 0
    try:
        n = int(value)
        if value is True or (isinstance(value, float) and value != n):
            raise ValueError(value)     # lm-eval reads 1.5 as a float: never cut to a whole number
    except (TypeError, ValueError, OverflowError):
        raise ModelArgumentError(f"--model_args reasoning_budget must be 'auto', 'none' or a whole number >= 0, "
                                 f"got {value!r}") from None
    if n < 0:
        raise ModelArgumentError(f"--model_args reasoning_budget must be >= 0, got {n}")
    return n


class ReasoningRoute:
    """The reasoning side of an adapter (see the module docstring)."""

    _reasoning_budget_arg: int | None = None

    def _init_reasoning(self, reasoning_budget: Any) -> None:
        self._reasoning_budget_arg = parse_budget(reasoning_budget)
        self.n_reasoned = 0
        self.n_reasoning_cut = 0
        self.n_reasoning_answers = 0

    # ------------------------------------------------------------------ what the model declares
    def reasoning_format(self) -> dict[str, Any]:
        """How the route's model reasons: ``thinks`` (it is a reasoning model), ``delimiters``
        (``(open, close)`` pairs), ``opened`` (its chat template opens the block in the prompt) and,
        where the route sets them, ``thinking`` (the ``thinking`` argument) and ``template_kwargs``
        (what reaches the chat template). Default: unknown model, every known delimiter (a leading
        block is read past on every route)."""
        return {"thinks": False, "delimiters": KNOWN_DELIMITERS, "opened": False}

    @property
    def reasoning_budget(self) -> int:
        """Tokens added to every request's budget for the reasoning."""
        if self._reasoning_budget_arg is not None:
            return self._reasoning_budget_arg
        return DEFAULT_REASONING_BUDGET if self.reasoning_format().get("thinks") else 0

    # ------------------------------------------------------------------ replies
    def restore_opening(self, text: str) -> str:
        """``text`` with the reasoning opening put back when the prompt opened the block."""
        fmt = self.reasoning_format()
        pairs = as_pairs(fmt.get("delimiters"))
        if not fmt.get("opened") or not pairs or not isinstance(text, str) or is_marked_answer(text):
            return text
        open_ = pairs[0][0]
        return text if text.lstrip().startswith(open_) else f"{open_}\n{text}"

    def split(self, text: Any) -> tuple[str, Any, bool]:
        """``(reasoning, answer, cut_off)`` of a reply with the route's delimiters."""
        if not isinstance(text, str) or is_marked_answer(text):
            return "", text, False
        fmt = self.reasoning_format()
        return split_reasoning(text, fmt.get("delimiters") or KNOWN_DELIMITERS, opened=bool(fmt.get("opened")))

    def parser_text(self, text: Any) -> Any:
        """What the answer parser reads of a reply (the text after its reasoning block)."""
        return self.split(text)[1]

    def count_reasoning(self, answers: list[Any]) -> None:
        """Count the final answers with a reasoning block and those cut off inside it (warns)."""
        n = reasoned = cut = 0
        for a in answers:
            if not isinstance(a, str) or is_marked_answer(a):
                continue
            reasoning, _, cut_off = self.split(a)
            n += 1
            reasoned += bool(reasoning) or cut_off
            cut += cut_off
        self.n_reasoning_answers += n
        self.n_reasoned += reasoned
        self.n_reasoning_cut += cut
        if cut:
            log.warning("%s: %d of %d answer(s) were cut off inside the reasoning (budget %d reasoning tokens + "
                        "the task's answer budget): they parse as unparsed; raise reasoning_budget",
                        type(self).__name__, cut, n, self.reasoning_budget)
        elif reasoned:
            log.info("%s: %d of %d answer(s) opened with a reasoning block (read after it; kept in the logs)",
                     type(self).__name__, reasoned, n)

    def reasoning_card(self) -> dict[str, Any]:
        """``config.vocalgrad_model.reasoning`` of the results file."""
        fmt = self.reasoning_format()
        n = self.n_reasoning_answers
        return {"thinks": bool(fmt.get("thinks")), "thinking": fmt.get("thinking", "auto"),
                "template_kwargs": dict(fmt.get("template_kwargs") or {}), "budget": self.reasoning_budget,
                "delimiters": [list(p) for p in as_pairs(fmt.get("delimiters"))],
                "opened_by_template": bool(fmt.get("opened")), "answers": n, "with_reasoning": self.n_reasoned,
                "cut_off": self.n_reasoning_cut, "cut_off_share": (self.n_reasoning_cut / n) if n else None}
