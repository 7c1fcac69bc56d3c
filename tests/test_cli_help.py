"""`vocalgrad --help` is quick (no heavy imports while building the parser) and every option explains itself."""

import argparse
import json
import subprocess
import sys
from pathlib import Path

from vocalgrad_commands import cli

ROOT = Path(__file__).resolve().parents[1]
#: Modules that cost 0.4-1.5 s each to import; none is needed to build the parser.
HEAVY = ("scipy.signal", "scipy.stats", "librosa", "numba", "matplotlib", "torch", "datasets", "lm_eval",
         "transformers", "pyarrow.parquet")


def test_building_the_parser_imports_nothing_heavy():
    code = ("import sys, json\nfrom vocalgrad_commands import cli\ncli.build_parser().format_help()\n"
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_every_argument_of_every_command_has_help():
    missing = []

    def walk(parser, path):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, path + [name])
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                missing.append(" ".join(path + [action.option_strings[0] if action.option_strings else action.dest]))

    walk(cli.build_parser(), ["vocalgrad"])
    assert missing == []
