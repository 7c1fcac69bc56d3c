"""The ``vocalgrad`` command (``python -m vocalgrad_commands.cli`` runs it too).

Each sub-command lives in the module of its layer that implements it; that module exposes
``register_cli(subparsers)`` which adds its parser and sets ``func`` (called with the parsed
arguments, returning an exit code). This file only lists the modules (:data:`COMMAND_MODULES`:
the command package discovers the layers' commands, no layer lists another's) and prints the
toolkit's warnings as one line (:func:`generation.cli_warnings.plain_warnings`); every expected
failure of a command ends through :func:`generation.cli_errors.run_command` (one message, exit
status 2; ``--debug`` or ``VOCALGRAD_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

from generation.interrupts import at_start, command_name

at_start(__name__)  # Ctrl-C / SIGTERM from here on: one line, exit 130 / 143 (docs/reliability.md)

import argparse
import importlib
import sys

from generation.cli_errors import debug_from, run_command
from generation.cli_warnings import plain_warnings

__all__ = ["COMMAND_MODULES", "build_parser", "main"]

#: Modules that contribute sub-commands, in the order they appear in ``--help``.
COMMAND_MODULES = (
    "generation.render_cli",
    "generation.verify",
    "generation.hub_cli",
    "generation.publish",
    "vocalgrad_commands.demo",
    "generation.attributes.cli",
    "analysis.report",
    "analysis.leaderboard",
    "analysis.listen",
    "analysis.show",
    "analysis.probe",
    "analysis.finetune",
    "analysis.finetune.directions",
    "analysis.finetune.transfer",
    "analysis.finetune.report",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vocalgrad",
        description="Render, publish and analyse the VocalGrad benchmark.",
        epilog="Exit status: 0 done, 1 problems found (verify), 2 bad input or a file/folder that cannot be "
               "used (one message says which and what to do), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).",
    )
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error (also: VOCALGRAD_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register_cli(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    plain_warnings("vocalgrad")
    with debug_from(list(sys.argv[1:] if argv is None else argv)) as argv:  # --debug before or after the command

        def parse_and_run():  # the sub-commands' imports too run under the command's signal handling
            args = build_parser().parse_args(argv)
            return args.func(args)

        return run_command(command_name(["vocalgrad", *argv]), parse_and_run)


if __name__ == "__main__":
    sys.exit(main())
