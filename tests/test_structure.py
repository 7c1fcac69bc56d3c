"""Structure of the toolkit: one error base class, one table per concept, public names across modules
(the import layers and cycles: tests/test_import_layers.py)."""

from __future__ import annotations

import ast
import importlib
import inspect
import tomllib
from pathlib import Path

import pytest

import vocalgrad

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("generation", "harness_tasks", "analysis", "vocalgrad_commands")


def toolkit_module_names() -> list[str]:
    """Dotted names of every toolkit module: ``vocalgrad`` and each module of the three packages."""
    names = ["vocalgrad"]
    for pkg in PACKAGES:
        names.append(pkg)
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = rel.parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not all(p.isidentifier() for p in parts):
                continue
            name = ".".join(parts)
            if name not in names:
                names.append(name)
    return names


def test_module_walk_sees_the_packages():
    names = toolkit_module_names()
    assert {"generation.audio", "harness_tasks.models.base", "analysis.report.loading"} <= set(names)
    assert len(names) > 80




def test_every_toolkit_error_derives_from_vocalgrad_error():
    missing, seen = [], []
    for name in toolkit_module_names():
        # harness_tasks/vocalgrad/vocalgrad_utils.py is a shim lm-eval loads by path; it defines nothing.
        module = importlib.import_module(name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if obj.__module__ != module.__name__ or not issubclass(obj, BaseException):
                continue
            if issubclass(obj, Warning):  # warnings (label_validity.LabelWarning) are not errors
                continue
            seen.append(f"{name}.{obj.__qualname__}")
            if not issubclass(obj, vocalgrad.VocalGradError):
                missing.append(f"{name}.{obj.__qualname__} ({', '.join(b.__name__ for b in obj.__mro__[1:])})")
    assert len(seen) >= 12, seen
    assert not missing, "error classes not derived from vocalgrad.VocalGradError:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    "cls_path, builtin",
    [
        ("generation.audio:AudioReadError", ValueError),
        ("harness_tasks.clip_audio:AudioDecodeError", ValueError),
        ("harness_tasks.models.base:FatalAdapterError", RuntimeError),
        ("generation.render:RenderError", RuntimeError),
    ],
)
def test_toolkit_errors_keep_their_builtin_base(cls_path, builtin):
    mod, cls = cls_path.split(":")
    error = getattr(importlib.import_module(mod), cls)
    with pytest.raises(builtin):
        raise error("x")
    with pytest.raises(vocalgrad.VocalGradError):
        raise error("x")


def test_adapter_names_live_on_the_classes_and_match_the_entry_points():
    import harness_tasks

    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["lm_eval.models"]
    assert entry_points == harness_tasks.MODEL_ADAPTERS
    for name, target in entry_points.items():
        module, cls = target.split(":")
        assert getattr(importlib.import_module(module), cls).name == name, target


def test_registered_adapters_resolve_to_the_named_classes():
    import harness_tasks
    from lm_eval.api.registry import get_model

    assert set(harness_tasks.register_models()) == set(harness_tasks.MODEL_ADAPTERS)
    for name in harness_tasks.MODEL_ADAPTERS:
        assert get_model(name).name == name


# The import graph, its layers and cycles: tests/test_import_layers.py (tests/_import_graph.py).


def test_one_variants_and_formats_table():
    from analysis.report import loading
    from harness_tasks import utils, variants

    assert variants.RECORD_VARIANTS == ("default", "swap", "audioref", "audiofirst", "reword", "fewshot", "beep", "ext")
    assert set(variants.LABELLED_FORMATS) < set(variants.FORMATS) and "binary" in variants.FORMATS
    assert {v.fmt for v in variants.VARIANTS.values()} <= set(variants.FORMATS) | {"sources"}
    assert utils.FORMATS is variants.FORMATS
    assert not hasattr(loading, "FORMATS") and not hasattr(loading, "VARIANTS")  # no second list
    for name in variants.RECORD_VARIANTS:
        cat = "brightness" if name == variants.EXT_VARIANT else "pitch"  # the extension group: not the nine
        task = "vocalgrad_pitch" if name == "default" else f"vocalgrad_{name}_{cat}"
        assert loading.parse_task(task) == (name, cat)
    assert loading.parse_task("vocalgrad_ext_pitch") is None
    for fmt in variants.LABELLED_FORMATS:
        assert loading.parse_format_task(f"vocalgrad_{fmt}_echo") == (fmt, "echo")


def test_split_task_inverts_the_generated_task_names():
    # every generated per-category task name splits back into its variant and category; the
    # report's readers take their tasks from it
    import re

    from analysis.report import loading
    from harness_tasks import variants

    names = {m for p in (ROOT / "harness_tasks" / "vocalgrad").glob("*.yaml")
             for m in re.findall(r"^task: (\S+)$", p.read_text(encoding="utf-8"), flags=re.M)}
    expected = {f"{v.group}_{c}": (name, c) for name, v in variants.VARIANTS.items() if v.kind == "category"
                for c in v.categories}
    assert set(expected) <= names and len(expected) > 70
    for task in names:
        assert variants.split_task(task) == expected.get(task), task
    assert loading.parse_format_task("vocalgrad_yesno_speed") == ("yesno", "speed")
    assert loading.parse_task("vocalgrad_yesno_speed") is None and loading.parse_task("vocalgrad_beep_pitch")
    assert variants.split_task("vocalgrad_paraphrase_tone_rise_fall") is None


def test_task_yaml_functions_resolve_to_named_definitions():
    # every `vocalgrad_utils.<name>` of the YAMLs is either a function defined with `def` in a module
    # of harness_tasks or an aggregation of the one table built from the metric tables, bound by
    # name; grep finds each, none is created through globals()
    import re

    from harness_tasks import aggregations, utils

    refs = set()
    for path in (ROOT / "harness_tasks" / "vocalgrad").iterdir():
        if path.is_file() and path.suffix != ".py":
            refs |= set(re.findall(r"vocalgrad_utils\.(\w+)", path.read_text(encoding="utf-8")))
    assert {"agg_macro_f1_yesno", "agg_pred_constant_ternary", "load_task_dataset", "process_docs"} <= refs
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "harness_tasks").glob("*.py"))
    for name in refs:
        fn = getattr(utils, name)
        assert fn.__name__ == name and fn.__qualname__ == name, name
        if name.startswith("agg_"):
            assert fn is aggregations.AGGREGATIONS[name], name
        else:
            assert f"def {name}(" in sources, name
    # the table holds nothing the YAMLs do not use, and each entry is bound by its own name at
    # module level (a plain assignment that grep finds, not a generated attribute)
    assert set(aggregations.AGGREGATIONS) == {r for r in refs if r.startswith("agg_")}
    tree = ast.parse((ROOT / "harness_tasks" / "aggregations.py").read_text(encoding="utf-8"))
    bound = [elt.id for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple)
             for elt in node.targets[0].elts]
    assert bound == list(aggregations.AGGREGATIONS)
    for name, agg in aggregations.AGGREGATIONS.items():
        assert vars(aggregations)[name] is agg and agg.__name__ == name
    assert not hasattr(aggregations, "__getattr__")
    assert "globals()[" not in sources


def test_no_private_name_is_imported_from_another_toolkit_module():
    # what one module shares with another is public (named without a leading underscore)
    offenders = []
    for name in toolkit_module_names():
        rel = Path(*name.split("."))
        path = ROOT / (f"{rel}.py" if (ROOT / f"{rel}.py").is_file() else rel / "__init__.py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            ours = node.level > 0 or (node.module or "").split(".")[0] in ("vocalgrad", *PACKAGES)
            offenders += [f"{name}: from {'.' * node.level}{node.module or ''} import {a.name}"
                          for a in node.names
                          if ours and a.name.startswith("_") and not a.name.startswith("__")]
    assert not offenders, offenders


def test_private_import_check_sees_one():
    tree = ast.parse("from .metrics import _div, ok\nfrom numpy import _x\n")
    found = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level > 0
             for a in n.names if a.name.startswith("_")]
    assert found == ["_div"]
