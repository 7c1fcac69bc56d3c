"""Command-line pieces shared by the analysis commands (``probe``, ``finetune``, ``align``, ``transfer``,
``finetune-report``).

:data:`OPTIONS` defines each option of the commands that run a model once, with its help text;
a command adds the ones it takes, in its own order (:func:`add_options`), and may reword one
whose meaning it narrows (:func:`add_option`, e.g. ``probe --device`` beside ``--probe-device``).
:func:`add_command` registers a sub-command whose input errors end as one line
``vocalgrad NAME: error: message`` and exit status 2 (:func:`generation.cli_errors.report_error`:
``--debug`` shows the traceback); an ``--out`` that is (or lies under) a symbolic link loop is refused
so before the command runs. Importing this module imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from generation.cli_errors import report_error

__all__ = ["OPTIONS", "RUN_ERRORS", "add_command", "add_model_arguments", "add_option", "add_options",
           "add_run_arguments", "comma_list", "ordered_subset"]

#: ``add_argument`` keywords of each shared option, by flag.
OPTIONS: dict[str, dict] = {
    "--model": dict(required=True, metavar="HF_ID_OR_PATH",
                    help="base model: a transformers audio LM folder or Hub id"),
    "--adapter": dict(metavar="DIR", help="peft adapter folder (RUN/adapter of `vocalgrad finetune`)"),
    "--batch-size": dict(type=int, default=8, help="clips per forward pass (default %(default)d)"),
    "--device": dict(default="auto", help="cpu, cuda, cuda:N or auto (default %(default)s)"),
    "--dtype": dict(default="auto", help="float32, bfloat16, float16 or auto (default %(default)s)"),
    "--audio-first": dict(action="store_true", help="audio before the question (as the harness option)"),
    "--system-prompt": dict(help="optional system turn (as the harness option)"),
    "--trust-remote-code": dict(action="store_true", help="let transformers run the checkpoint's own model code "
                                                          "(only for checkpoints you trust)"),
    "--quiet": dict(action="store_true", help="no progress bars"),
}

#: Errors that mean bad input or a failed run: reported in one line, not as a traceback.
RUN_ERRORS: tuple[type[Exception], ...] = (ValueError, FileNotFoundError, RuntimeError)


def add_option(parser, flag: str, **changes) -> None:
    """Add the shared option ``flag`` to ``parser`` (or an argument group), ``changes`` replacing some keywords.

    Raises
    ------
    KeyError
        When ``flag`` is not in :data:`OPTIONS`.
    """
    parser.add_argument(flag, **{**OPTIONS[flag], **changes})


def add_options(parser, *flags: str) -> None:
    """Add the shared options ``flags`` to ``parser`` as defined, in the order given."""
    for flag in flags:
        add_option(parser, flag)


def add_model_arguments(parser) -> None:
    """``--model`` and ``--adapter``."""
    add_options(parser, "--model", "--adapter")


def add_run_arguments(parser) -> None:
    """Batch size, device, dtype, prompt order, system prompt, remote code, quiet."""
    add_options(parser, "--batch-size", "--device", "--dtype", "--audio-first", "--system-prompt",
                "--trust-remote-code", "--quiet")


def add_command(subparsers, name: str, run: Callable, *, help: str, description: str,
                errors: tuple[type[Exception], ...] = RUN_ERRORS):
    """Add sub-command ``vocalgrad NAME`` that calls ``run(args)`` for its exit status; returns its parser.

    An exception of ``errors`` raised by ``run`` is printed as ``vocalgrad NAME: error: message`` on
    stderr and gives exit status 2 (a traceback with ``--debug`` or ``VOCALGRAD_DEBUG=1``).
    """
    def func(args) -> int:
        try:
            if getattr(args, "out", None):  # a looping --out, a file: one line before any model is loaded
                from generation.option_types import refuse_out_folder

                refuse_out_folder(args.out, what=f"--out {args.out}")
            return run(args)
        except errors as exc:
            return report_error(f"vocalgrad {name}", exc)

    p = subparsers.add_parser(name, help=help, description=description)
    p.set_defaults(func=func)
    return p


def comma_list(text: str | None) -> list[str] | None:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``; ``None`` for no text (the option's default applies)."""
    return [s.strip() for s in text.split(",") if s.strip()] if text else None


def ordered_subset(spec: str | Sequence[str], choices: Sequence[str], noun: str) -> list[str]:
    """``"c,a"`` or a list -> the named ``choices`` in their own order (each once).

    Raises
    ------
    ValueError
        When a name is not one of ``choices`` or none is given, naming the ``noun`` and the choices.

    Examples
    --------
    >>> ordered_subset("lm_text, mel", ("mel", "pre_lm", "lm_text"), "stage")
    ['mel', 'lm_text']
    """
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    bad = [s for s in names if s not in choices]
    if bad or not names:
        raise ValueError(f"unknown {noun}(s) {bad or names}; choose from {', '.join(choices)}")
    return [c for c in choices if c in names]
