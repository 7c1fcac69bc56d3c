"""Reading ``--model_args`` values: booleans, whole and real numbers, positive integers.

Every reader raises :class:`ModelArgumentError` (one line naming the argument; exit 2).
"""

from __future__ import annotations

from typing import Any

from vocalgrad import VocalGradError

__all__ = ["ModelArgumentError", "UnknownModelArgument", "accepted_arguments", "as_bool", "bounded", "float_arg",
           "int_arg", "positive_int"]


def as_bool(value: Any, *, name: str = "flag") -> bool:
    """Read a boolean model argument (lm-eval passes ``true``/``false`` as str or bool)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ModelArgumentError(f"{name} must be true or false, got {value!r}")


class ModelArgumentError(VocalGradError, ValueError):
    """A ``--model_args`` value that cannot be used; the message names the argument (one line, exit 2)."""


class UnknownModelArgument(ModelArgumentError, TypeError):
    """A ``--model_args`` name the adapter does not take (a ``TypeError`` too, as Python names a wrong keyword)."""


def accepted_arguments(cls: type) -> list[str]:
    """The keyword arguments the ``__init__`` methods of ``cls`` and its bases name (sorted)."""
    import inspect

    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            params = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):
            continue
        names.update(p.name for p in params if p.name != "self"
                     and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
    return sorted(names)


def bounded(value: Any, name: str, *, low: float, high: float = float("inf"), low_open: bool = False,
            whole: bool = False) -> float | int:
    """A numeric model argument inside its range (``low`` < value when ``low_open``, else ``low`` <=
    value; value <= ``high``; finite); the one-line error names the argument and the range."""
    import math

    try:
        x = int(value) if whole else float(value)
    except (TypeError, ValueError, OverflowError):   # int(float("inf")) overflows
        x = None
    if whole and (isinstance(value, bool) or (isinstance(value, float) and value != x)):
        x = None    # lm-eval reads concurrency=1.5 as a float and true as a bool: never cut to a whole number
    if x is None or not math.isfinite(x) or (x <= low if low_open else x < low) or x > high:
        lo = f"> {low:g}" if low_open else f">= {low:g}"
        rng = lo if high == float("inf") else f"{lo} and <= {high:g}"
        raise ModelArgumentError(f"--model_args {name} must be {'a whole number' if whole else 'a finite number'} "
                                 f"{rng}, got {value!r}")
    return x


def int_arg(value: Any, name: str) -> int:
    """Read a whole-number model argument (``seed=1234``); the error names it."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ModelArgumentError(f"--model_args {name} must be a whole number, got {value!r}") from None


def float_arg(value: Any, name: str) -> float:
    """Read a finite numeric model argument (``timeout=60``); the error names it."""
    import math

    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ModelArgumentError(f"--model_args {name} must be a number, got {value!r}") from None
    if not math.isfinite(out):
        raise ModelArgumentError(f"--model_args {name} must be a finite number, got {value!r}")
    return out


def positive_int(value: Any, name: str, accepted: str = "a positive integer") -> int:
    """Read a model argument that must be an integer >= 1.

    Parameters
    ----------
    value : Any
        What lm-eval passed (str or int).
    name : str
        The argument's name, for the error.
    accepted : str
        Every form the argument takes, for the error (``"an integer, 'task' or 'none'"``).
    """
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise ModelArgumentError(f"{name} must be {accepted}, got {value!r}") from None
    if n < 1:
        raise ModelArgumentError(f"{name} must be >= 1, got {n}")
    return n
