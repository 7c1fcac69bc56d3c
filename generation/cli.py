"""The ``vocalgrad`` command.

Each sub-command lives in the module that implements it; that module exposes
``register_cli(subparsers)`` which adds its parser and sets ``func`` (called with the parsed
arguments, returning an exit code). This file only lists the modules.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: Modules that contribute sub-commands, in the order they appear in ``--help``.
COMMAND_MODULES = (
    "generation.render_cli",
    "generation.verify",
    "generation.hub_cli",
    "generation.publish",
    "generation.demo",
    "generation.attributes.cli",
    "analysis.report",
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
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register_cli(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted; rerun the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
