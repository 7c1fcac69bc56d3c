"""The import layers (docs/code-layout.md): ``vocalgrad.py`` < ``generation`` < ``harness_tasks`` < ``analysis``
< ``vocalgrad_commands``, one way up, no cycles, counting imports inside functions, under ``TYPE_CHECKING``
and modules loaded by name from a string (:mod:`_import_graph`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _import_graph import (LAYERS, ROOT, cycle_path, import_cycles, import_graph, module_files, module_imports,
                           wrong_way)

#: Imports that point up a layer on purpose: each a deprecated alias named in docs/code-layout.md,
#: a module that only re-exports its target.
ALLOWED_UP = {
    "generation.cli -> vocalgrad_commands.cli":
        "the `vocalgrad` script of an install made before the command moved names generation.cli:main",
}


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_no_module_imports_a_higher_layer(graph):
    wrong = [e for e in wrong_way(graph) if e not in ALLOWED_UP]
    assert not wrong, "imports of a higher layer (docs/code-layout.md, Layers):\n" + "\n".join(wrong)


def test_no_two_modules_import_each_other_at_any_depth(graph):
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(cycle_path(graph, c)) for c in cycles)


def test_the_allowed_upward_imports_are_documented_aliases_and_still_needed(graph):
    doc = (ROOT / "docs" / "code-layout.md").read_text(encoding="utf-8")
    found = set(wrong_way(graph))
    for edge in ALLOWED_UP:
        alias, target = edge.split(" -> ")
        assert edge in found, f"{edge}: allowed but no longer imported; remove it from ALLOWED_UP"
        assert graph[alias] == {target}, f"{alias} is more than an alias: {sorted(graph[alias])}"
        assert f"`{alias}`" in doc and "deprecated alias" in doc, f"{alias}: not documented in docs/code-layout.md"


def test_the_vocabulary_imports_nothing_of_the_toolkit(graph):
    assert graph["vocalgrad"] == set()


def test_the_vocabulary_works_read_alone(tmp_path):
    # the file copied where no toolkit module can be imported (python -I: no PYTHONPATH, no user site;
    # the venv's editable install is hidden by -S), as the datasets loading script is read
    shutil.copy(ROOT / "vocalgrad.py", tmp_path / "vocalgrad.py")
    code = ("import sys\nsys.path.insert(0, sys.argv[1])\nimport vocalgrad as vg\n"
            "assert vg.__file__.startswith(sys.argv[1]), vg.__file__\n"
            "assert vg.default_prompt('pitch').startswith('Does the voice pitch increase')\n"
            "assert vg._extension_categories() == {}\n"
            "try:\n    vg.category('brightness')\nexcept ValueError as e:\n    print('refused:', e)\n"
            "try:\n    import generation\nexcept ImportError:\n    print('no toolkit')\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in sys.argv[2].split(',')))\n")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(tmp_path), ",".join(LAYERS[1:])],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "refused: unknown category 'brightness'" in proc.stdout and "no toolkit" in proc.stdout
    assert proc.stdout.strip().endswith("[]")


def test_the_generation_package_hands_the_vocabulary_what_it_knows():
    code = ("import vocalgrad as vg\n"
            "try:\n    vg.VocalGrad(config_name='pitch', data_dir='nowhere')\n"
            "except vg.BuilderStepsMissing as e:\n    print('no steps:', e)\n"
            "print(sorted(vg._extension_categories()))\n"
            "import generation.span\n"
            "print(sorted(vg._extension_categories()), vg.category('formants').attribute)\n"
            "import generation.builder_steps as s\n"
            "print(vg._builder_steps() is s)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HF_DATASETS_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("no steps: vocalgrad.VocalGrad has no steps: import the toolkit's generation package")
    assert lines[1:] == ["[]", "['brightness', 'formants'] formant frequency", "True"]


# ---- the parser sees every kind of import ----------------------------------------------------------------
MODULES = {"vocalgrad", "generation", "generation.span", "generation.audio", "harness_tasks", "harness_tasks.metrics",
           "analysis", "analysis.report", "analysis.report.loading", "analysis.show"}


@pytest.mark.parametrize("source, expected", [
    ("import generation.span\n", {"generation.span"}),
    ("from generation.span import detect_span\n", {"generation.span"}),
    ("from generation import span, audio\n", {"generation.span", "generation.audio"}),
    ("def f():\n    from analysis.report import loading\n", {"analysis.report.loading"}),
    ("class A:\n    def f(self):\n        import analysis.show\n", {"analysis.show"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from analysis import show\n", {"analysis.show"}),
    ("import importlib\nimportlib.import_module('analysis.show')\n", {"analysis.show"}),
    ("MODULES = ('generation.span', 'analysis.report')\n", {"generation.span", "analysis.report"}),
    ("ENTRY = 'harness_tasks.metrics:macro_summary'\n", {"harness_tasks.metrics"}),
    ("from .loading import load_all\n", {"analysis.report.loading"}),
    ("from .. import show\n", {"analysis.show"}),
    ("from . import loading\n", {"analysis.report.loading"}),
    # near misses: a plain word, a sibling sharing a prefix, a module named inside a sentence, two colons
    ("PROG = 'vocalgrad'\nNAME = 'analysis'\n", set()),
    ("X = 'analysis.reporting'\nY = 'analysis.report.loading.py'\n", set()),
    ("'''see analysis.show for the picture'''\n", set()),
    ("X = 'analysis.show:a:b'\n", set()),
    ("import numpy\nfrom numpy import linalg\n", set()),
])
def test_the_parser_sees_each_kind_of_import(source, expected):
    assert module_imports("analysis.report.command", source, MODULES) == expected


def test_relative_imports_of_a_package_start_at_the_package():
    def package(source):
        return module_imports("analysis.report", source, MODULES, is_package=True)

    assert package("from .loading import x\n") == {"analysis.report.loading"}
    assert package("from .. import show\n") == {"analysis.show"}
    assert module_imports("analysis.report", "from .. import show\n", MODULES) == set()  # as a module: above it


def test_the_cycle_finder_names_each_group_once():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}, "e": set()}) == [["a", "b"], ["c", "d"]]
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []  # a chain, no loop
    assert cycle_path({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_the_walk_sees_every_layer(graph):
    names = set(module_files())
    assert {"vocalgrad", "generation.audio", "harness_tasks.models.base", "analysis.report.loading",
            "vocalgrad_commands.cli", "vocalgrad_commands.demo"} <= names
    assert "generation.span" in graph["harness_tasks.models.oracle"]
    assert "analysis.report" in graph["vocalgrad_commands.cli"]  # the command list, by name
    assert "harness_tasks.cli" in graph["vocalgrad_commands.demo"]  # `python -m harness_tasks.cli`, by name


# ---- planted mistakes in a copy of the tree are caught -----------------------------------------------------
def _copy_tree(dest: Path) -> Path:
    """The toolkit's modules (only its ``.py`` files) copied under ``dest``."""
    for path in module_files().values():
        target = dest / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    return dest


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_a_planted_wrong_way_import_fails(tmp_path):
    root = _copy_tree(tmp_path)
    assert [e for e in wrong_way(import_graph(root)) if e not in ALLOWED_UP] == []
    _append(root / "generation" / "span.py", "\n\ndef _planted():\n    from analysis.report import loading\n")
    _append(root / "harness_tasks" / "metrics.py", "\n_PLANTED = ('analysis.show',)\n")
    _append(root / "vocalgrad.py", "\nif False:\n    import generation.audio\n")
    wrong = [e for e in wrong_way(import_graph(root)) if e not in ALLOWED_UP]
    assert wrong == ["generation.span -> analysis.report.loading", "harness_tasks.metrics -> analysis.show",
                     "vocalgrad -> generation.audio"]


def test_a_planted_cycle_fails(tmp_path):
    root = _copy_tree(tmp_path)
    assert import_cycles(import_graph(root)) == []
    # generation.audio imports generation.identity; identity importing audio back (inside a function) is a cycle
    _append(root / "generation" / "identity.py", "\n\ndef _planted():\n    from .audio import decode_mono\n")
    graph = import_graph(root)
    assert import_cycles(graph) == [["generation.audio", "generation.identity"]]
    assert cycle_path(graph, ["generation.audio", "generation.identity"]) == [
        "generation.audio", "generation.identity", "generation.audio"]


# ---- what lives where ------------------------------------------------------------------------------------------
def test_shared_primitives_are_leaves(graph):
    # generation.audio/span/measures/identity serve the harness and the analyses: they import only vocalgrad
    # and each other (generation.identity, the owner of the digests, imports nothing but vocalgrad)
    assert graph["generation.identity"] <= {"vocalgrad"}, graph["generation.identity"]
    for name in ("generation.audio", "generation.span", "generation.measures"):
        assert graph[name] <= {"vocalgrad", "generation", "generation.audio", "generation.identity"}, (name, graph[name])


def test_the_dataset_readers_live_in_generation(graph):
    # the dataset's own readers (render folders, Hub folders, the authors' release) live in generation/, so
    # the builder and the converters never need the evaluation package; the paper's numbers sit where the
    # card (generation), the report and the demo all read them
    assert "generation.published" in graph["harness_tasks.dataset"]
    assert "generation.published" in graph["generation.builder_steps"]
    assert "generation.paper_results" in graph["generation.card"]
    assert "generation.paper_results" in graph["analysis.report.analysis"]
    assert graph["generation.paper_results"] == {"vocalgrad"}


def test_the_command_package_discovers_each_layers_commands(graph):
    # every `register_cli` module is listed by the command package, by name (no layer lists another's)
    from vocalgrad_commands import cli

    assert {name.split(".")[0] for name in cli.COMMAND_MODULES} == set(LAYERS[1:]) - {"harness_tasks"}
    for name in cli.COMMAND_MODULES:
        assert name in graph["vocalgrad_commands.cli"], name
    listers = sorted(m for m, deps in graph.items() if len(deps & set(cli.COMMAND_MODULES)) > 2)
    assert listers == ["vocalgrad_commands.cli"], listers
