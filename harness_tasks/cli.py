"""``vocalgrad-eval``: lm-eval 0.4.13's command line with the VocalGrad tasks and models.

Every ``lm_eval`` flag works unchanged. Before handing over to lm-eval this command

1. registers the ``vocalgrad-*`` model adapters (lm-eval 0.4.13 has no plugin discovery), and
2. makes the VocalGrad task folder visible: ``--include_path`` defaults to it, and a folder
   given by the user is searched in addition to ours; the ``vocalgrad_ext`` tasks of the
   installed extension attributes are written into a fresh folder that is added too
   (:mod:`harness_tasks.ext_tasks`), and
3. for VocalGrad tasks, reads ``--num_fewshot K`` as the number of audio examples of the
   ``vocalgrad_fewshot`` tasks (``--metadata '{"vocalgrad_fewshot_k": K}'``), and
4. for VocalGrad tasks, checks that ``VOCALGRAD_DATASET`` (when a local path) is a Hub folder, and
5. records in every results file the data it evaluated (``vocalgrad_data``: dataset, source kind, build
   digest over the clips' sha256, per task and overall; :mod:`harness_tasks.data_identity`), and
6. names the run folder of a model whose ``--model_args`` name no checkpoint (``pretrained=``,
   ``model=``, ...) after the model and its arguments (``vocalgrad-chance_seed-1234``): lm-eval 0.4.13
   would name it by a "random" id drawn after seeding, the same ``od6r49mr`` for every such run.

An expected failure (an unknown model, a dataset folder that is not a Hub folder or lacks a
config, no space left...) ends in one message and exit status 2, through the same error path as
``vocalgrad`` (:mod:`generation.cli_errors`); ``--debug`` or ``VOCALGRAD_DEBUG=1`` shows the traceback.

Examples
--------
::

    VOCALGRAD_DATASET=demo_out/hub vocalgrad-eval --model vocalgrad-oracle --tasks vocalgrad --output_path out/
    VOCALGRAD_DATASET=hub/ vocalgrad-eval --model vocalgrad-hf \\
        --model_args pretrained=Qwen/Qwen2-Audio-7B-Instruct,dtype=bfloat16 \\
        --tasks vocalgrad --batch_size 8 --log_samples --output_path out/
    vocalgrad-eval ls tasks        # lm-eval's sub-commands work too
"""

from __future__ import annotations

from generation.interrupts import at_start

at_start(__name__, "vocalgrad-eval")  # Ctrl-C / SIGTERM from here on: one line, exit 130 / 143

import sys

import vocalgrad
from generation.cli_errors import debug_from, run_command

from . import TASK_DIR, register_models

__all__ = ["EvalArgumentError", "main"]

_SUBCOMMANDS = ("run", "ls", "list", "validate")

#: Printed before lm-eval's own help (``vocalgrad-eval --help``, ``vocalgrad-eval run --help``).
USAGE = """\
vocalgrad-eval: lm-eval 0.4.13's command line with the VocalGrad models and tasks registered.
Every lm_eval flag works; lm-eval's own help follows this block. Guide: docs/evaluation.md.

Models (--model; --model_args key=value,...):
  vocalgrad-hf        transformers audio-text model: pretrained=HF_ID_OR_PATH[,dtype=bfloat16]
                      (pip install "vocalgrad[hf]"; --device cuda, --batch_size N)
  vocalgrad-openai    vLLM/SGLang server or hosted API: model=NAME[,base_url=URL][,concurrency=32]
                      [,provider=openai|gemini|openai-compatible] (default: read from base_url; pip install "vocalgrad[api]")
  vocalgrad-worker    a model in its own environment over a JSON-lines pipe: cmd="python -m ..." (docs/models.md)
  vocalgrad-oracle    signal-processing listener, no weights: the reference baseline
  vocalgrad-chance    seeded coin: seed=1234
  vocalgrad-constant  always the same answer: direction=increase|decrease

Tasks (--tasks, comma-separated):
  vocalgrad                     the nine categories, default prompt (the paper's setting)
  vocalgrad_<category>          one category: speed pitch volume distortion roughness noise echo clarity vibration
  vocalgrad_swap, vocalgrad_audioref, vocalgrad_audiofirst, vocalgrad_paraphrase   prompt variants
  vocalgrad_reword              extra per-category rewordings (not the paper's six paraphrases)
  vocalgrad_fewshot (--num_fewshot K), vocalgrad_yesno, vocalgrad_ternary, vocalgrad_beep   (docs/variants.md)
  vocalgrad_xattr, vocalgrad_xattr_off   cross-attribute: clips of one category, the question about another
                                (81 pairs / the 72 off-diagonal ones)
  vocalgrad_sources             the question on the unmodified source clips (response bias, paper Table 8)
  vocalgrad_ext                 extension attributes (`vocalgrad attributes`; not the paper's benchmark):
                                vocalgrad_ext_<name>, generated at start-up for those installed
  vocalgrad_sweep               magnitude sweeps (Hub configs sweep_<name>, `vocalgrad render --sweep`):
                                vocalgrad_sweep_<name>; `vocalgrad report` fits thresholds (docs/sweep.md)

Dataset: the Hub dataset ynklab/vocalgrad by default; VOCALGRAD_DATASET=PATH_OR_REPO selects a local Hub
  folder (from `vocalgrad hub`) or another repo id (also --metadata '{"vocalgrad_dataset": "PATH_OR_REPO"}').

Errors: a bad dataset folder, an unknown model, no space left... end in one message and exit status 2;
  --debug (or VOCALGRAD_DEBUG=1) shows the traceback.

Output (--output_path DIR): DIR/<run>/results_<time>.json and, with --log_samples,
  DIR/<run>/samples_<task>_<time>.jsonl. <run> is the pretrained= (or model=, path=) value with / as __;
  models without one are named after the model and its arguments (vocalgrad-oracle,
  vocalgrad-chance_seed-1234, vocalgrad-constant_direction-increase). A rerun of the same model and
  arguments adds a new timestamped file to the same folder. `vocalgrad report DIR` reads every run below DIR.
  Every results file names its data under "vocalgrad_data": dataset, source kind, clips, and the build
  digest over the (clip id, sha256) of the clips evaluated (per task and overall).

Examples (offline, on the Hub folder `vocalgrad demo --out demo_out` made):
  VOCALGRAD_DATASET=demo_out/hub vocalgrad-eval --model vocalgrad-oracle --tasks vocalgrad --limit 2   # smoke test
  VOCALGRAD_DATASET=demo_out/hub vocalgrad-eval --model vocalgrad-oracle --tasks vocalgrad --limit 8 \\
      --output_path results/ --log_samples
  vocalgrad report results/ --out report/
With the network, on the Hub dataset (no VOCALGRAD_DATASET; offline it retries, then stops):
  vocalgrad-eval --model vocalgrad-hf --model_args pretrained=Qwen/Qwen2-Audio-7B-Instruct,dtype=bfloat16 \\
      --tasks vocalgrad --device cuda --batch_size 8 --log_samples --output_path results/
"""


class EvalArgumentError(vocalgrad.VocalGradError, ValueError):
    """A ``vocalgrad-eval`` argument that cannot be used (an unknown VocalGrad model, a bad --num_fewshot)."""


def _requested_tasks(argv: list[str]) -> list[str]:
    """The task names of ``--tasks`` (``-t``).

    Raises
    ------
    EvalArgumentError
        ``--tasks`` given with an empty list (``--tasks ''``, ``--tasks=,``), as every list option is refused.
    """
    names: list[str] = []
    for i, arg in enumerate(argv):
        given = None
        if arg in ("--tasks", "-t"):
            given = []
            for value in argv[i + 1:]:
                if value.startswith("-"):
                    break
                given += [n.strip() for n in value.split(",") if n.strip()]
        elif arg.startswith("--tasks="):
            given = [n.strip() for n in arg.split("=", 1)[1].split(",") if n.strip()]
        if given is not None and not given:
            raise EvalArgumentError("argument --tasks: names nothing; give one or more comma-separated tasks "
                                    "(e.g. --tasks vocalgrad)")
        names += given or []
    return names


def _fewshot_to_metadata(argv: list[str], tasks: list[str]) -> list[str]:
    """Turn ``--num_fewshot K`` into ``--metadata {"vocalgrad_fewshot_k": K}`` for VocalGrad tasks.

    lm-eval's own few-shot sampler would prepend text-only examples; the ``vocalgrad_fewshot``
    tasks bring labelled audio examples from the ``train`` config instead (docs/variants.md).
    Only done when every requested task is a VocalGrad task; an existing ``--metadata`` JSON
    object is kept and extended.
    """
    import json

    if not tasks or not all(t.startswith("vocalgrad") for t in tasks):
        return argv
    out, k, meta_at = [], None, None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--num_fewshot" and i + 1 < len(argv):
            k, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--num_fewshot="):
            k, i = arg.split("=", 1)[1], i + 1
            continue
        if arg == "--metadata" and i + 1 < len(argv):
            meta_at = len(out) + 1
        out.append(arg)
        i += 1
    if k is None:
        return argv
    try:
        k = int(k)
    except ValueError:
        raise EvalArgumentError(f"--num_fewshot must be an integer, got {k!r}") from None
    if meta_at is None:
        return out + ["--metadata", json.dumps({"vocalgrad_fewshot_k": k})]
    try:
        meta = json.loads(out[meta_at])
    except ValueError:
        raise EvalArgumentError("--metadata must be a JSON object to combine it with --num_fewshot") from None
    out[meta_at] = json.dumps({**meta, "vocalgrad_fewshot_k": k})
    return out


def ext_task_dir() -> str | None:
    """A fresh folder with the ``vocalgrad_ext`` tasks of the installed extension attributes
    (:mod:`harness_tasks.ext_tasks`) and the ``vocalgrad_sweep`` tasks of the attributes' magnitude
    sweeps (:mod:`harness_tasks.sweep_tasks`); removed when the process exits; None when there are none."""
    import atexit
    import shutil
    import tempfile

    from .ext_tasks import write_ext_tasks

    from .dataset import dataset_source

    from .sweep_tasks import write_sweep_tasks

    folder = tempfile.mkdtemp(prefix="vocalgrad-ext-tasks-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    written = write_ext_tasks(folder, dataset=dataset_source())
    written += write_sweep_tasks(folder, dataset=dataset_source())  # vocalgrad_sweep (docs/sweep.md)
    if not written:
        return None
    return folder


def _include_task_dir(*, only_ours: bool = False, extra: str | None = None) -> None:
    """Make every TaskManager lm-eval builds search our task folder too (and ``extra``: the
    generated ``vocalgrad_ext`` folder).

    With ``only_ours`` (every requested task is a VocalGrad task) lm-eval's ~14,000 built-in
    task YAMLs are not indexed, which saves tens of seconds at start-up.
    """
    import lm_eval.tasks as tasks_mod

    ours = [TASK_DIR] + ([extra] if extra else [])
    base = tasks_mod.TaskManager
    if getattr(base, "_vocalgrad_wrapped", False):
        base._vocalgrad_only_ours = only_ours
        base._vocalgrad_dirs = ours
        return

    class TaskManager(base):  # type: ignore[misc, valid-type]
        _vocalgrad_wrapped = True
        _vocalgrad_only_ours = only_ours
        _vocalgrad_dirs = ours

        def __init__(self, *args, include_path=None, **kwargs):
            paths = [] if include_path is None else (
                list(include_path) if isinstance(include_path, (list, tuple)) else [include_path])
            for folder in self._vocalgrad_dirs:
                if folder not in [str(p) for p in paths]:
                    paths.append(folder)
            if self._vocalgrad_only_ours:
                kwargs.setdefault("include_defaults", False)
            super().__init__(*args, include_path=paths, **kwargs)

    tasks_mod.TaskManager = TaskManager


def _check_tasks(tasks: list[str], folders: list[str]) -> None:
    """Fail in a line, before lm-eval loads anything, for a ``vocalgrad*`` task name none of ``folders`` defines
    (lm-eval would end in a traceback); names with wildcards and other tasks are left to lm-eval."""
    import difflib
    import re
    from pathlib import Path

    ours = [t for t in tasks if t.startswith("vocalgrad") and not any(ch in t for ch in "*?[")]
    if not ours:
        return
    known: set[str] = set()
    for folder in folders:
        for f in Path(folder).glob("*.yaml"):
            known.update(re.findall(r"^(?:task|group|tag):\s*([A-Za-z0-9_.-]+)\s*$", f.read_text(), re.M))
    unknown = [t for t in ours if t not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise EvalArgumentError(f"unknown task {', '.join(unknown)}; {hint}the VocalGrad tasks are vocalgrad, "
                                "vocalgrad_<category> and the variant groups (`vocalgrad-eval --help` lists them, "
                                "`vocalgrad-eval ls tasks` every one)")


def _option_value(argv: list[str], flag: str) -> str | None:
    """The value of ``flag VALUE`` / ``flag=VALUE`` in a command line (the first one), if any."""
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def _requested_model(argv: list[str]) -> str | None:
    """The value of ``--model`` / ``--model=``, if any."""
    return _option_value(argv, "--model")


def _check_model(name: str | None) -> None:
    """Fail in a line, before lm-eval loads anything, for a ``vocalgrad-*`` name that is not ours."""
    import difflib

    from . import MODEL_ADAPTERS

    if not name or not name.startswith("vocalgrad") or name in MODEL_ADAPTERS:
        return
    registry = sys.modules.get("lm_eval.api.registry")  # models registered from Python before main()
    if registry is not None and name in getattr(registry, "model_registry", {}):
        return
    close = difflib.get_close_matches(name, MODEL_ADAPTERS, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    raise EvalArgumentError(f"unknown model {name!r}; {hint}VocalGrad models: {', '.join(MODEL_ADAPTERS)}")


def _check_output_path(argv: list[str]) -> None:
    """Fail in a line, before lm-eval loads anything, for an ``--output_path`` (``-o``) no results file can
    be written under: an existing file, a path under a file, a folder that cannot be written, a symbolic
    link loop (:mod:`harness_tasks.output_path`)."""
    from .output_path import output_path_problem

    for flag in ("--output_path", "-o"):
        path = _option_value(argv, flag)
        problem = path and output_path_problem(path, flag)
        if problem:
            raise EvalArgumentError(problem)


def _requested_model_args(argv: list[str]) -> str:
    """The value of ``--model_args`` / ``--model_args=`` (empty when absent)."""
    return _option_value(argv, "--model_args") or ""


def run_name(model: str, model_args: str = "") -> str:
    """Folder name of a run whose ``--model_args`` name no checkpoint: the model and its arguments.

    ``run_name("vocalgrad-chance", "seed=1234")`` is ``vocalgrad-chance_seed-1234``; a JSON object of
    arguments gives its ``key-value`` pairs the same way. Characters other than letters, digits, ``.``,
    ``_`` and ``-`` become one ``-``; the name is cut to 120 characters.
    """
    import json
    import re

    text = model_args.strip()
    if text.startswith("{"):
        try:
            pairs = [f"{k}={v}" for k, v in json.loads(text).items()]
        except (ValueError, AttributeError):
            pairs = [text]
    else:
        pairs = [p for p in text.split(",") if p.strip()]
    safe = [re.sub(r"-{2,}", "-", re.sub(r"[^A-Za-z0-9._-]+", "-", p.strip().replace("=", "-"))) for p in pairs]
    parts = [model or "model", *safe]
    return "_".join(parts)[:120]


def _name_runs_after_the_model(argv: list[str]) -> None:
    """Let lm-eval call a run without a checkpoint name by :func:`run_name` instead of its seeded id.

    lm-eval asks ``random_name_id()`` only when ``--model_args`` has none of its name keys; its draw
    comes after the evaluation seeded ``random``, so every such run got the same folder.
    """
    import lm_eval.loggers.evaluation_tracker as tracker

    model = _requested_model(argv)
    if model:
        name = run_name(model, _requested_model_args(argv))
        tracker.random_name_id = lambda: name


def _wants_help(argv: list[str]) -> bool:
    return bool(argv) and (argv[0] in ("-h", "--help") or (argv[0] == "run" and ("-h" in argv or "--help" in argv)))


def main(argv: list[str] | None = None) -> int:
    """Run lm-eval's CLI with VocalGrad registered; returns the exit code (2 for an expected failure)."""
    with debug_from(list(sys.argv[1:] if argv is None else argv)) as argv:  # --debug is ours, not lm-eval's
        return run_command("vocalgrad-eval", lambda: _main(argv))


def _main(argv: list[str]) -> int:
    if not argv or _wants_help(argv):
        print(USAGE, flush=True)
    _check_model(_requested_model(argv))
    _check_output_path(argv)
    from generation.cli_warnings import plain_warnings

    from ._quiet import quiet_known_warnings

    quiet_known_warnings()
    plain_warnings("vocalgrad-eval")
    register_models()
    tasks = _requested_tasks(argv)
    argv = _fewshot_to_metadata(argv, tasks)
    only_ours = bool(tasks) and all(t.startswith("vocalgrad") for t in tasks)
    if only_ours:
        from .dataset import check_dataset_source

        check_dataset_source()  # a missing path, a render folder...: one line before lm-eval loads anything
    extra = ext_task_dir()
    _check_tasks(tasks, [TASK_DIR] + ([extra] if extra else []))
    _include_task_dir(only_ours=only_ours, extra=extra)
    _name_runs_after_the_model(argv)
    from . import data_identity

    data_identity.reset()
    data_identity.install()  # every results file records the data it evaluated (docs/evaluation.md)

    from lm_eval.__main__ import cli_evaluate

    # lm-eval inserts "run" itself for flag-only calls with > 1 argument; make it explicit so
    # that a lone flag (e.g. --tasks list) also works.
    if argv and argv[0] not in _SUBCOMMANDS and argv[0] not in ("-h", "--help"):
        argv = ["run", *argv]
    from .models.answer_tally import answer_tally

    from .output_path import unsaved_error, watch_saves

    old = sys.argv
    sys.argv = ["vocalgrad-eval", *argv]
    answer_tally(reset=True)
    saves = watch_saves()  # lm-eval only logs a results file it could not write
    try:
        cli_evaluate()
    except SystemExit as exc:  # argparse --help / errors
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv = old
    every_request_failed(answer_tally())
    unsaved = unsaved_error(saves, _option_value(argv, "--output_path") or _option_value(argv, "-o"))
    if unsaved is not None:
        raise unsaved
    return 0


class EveryRequestFailedError(vocalgrad.VocalGradError, RuntimeError):
    """Every request of the run got an error answer: its results are not a measurement."""


def every_request_failed(tally: dict) -> None:
    """Raise :class:`EveryRequestFailedError` (exit 2, one line) when the model adapters answered
    requests and every answer was an error answer (a server answering HTTP 500, a dead endpoint)."""
    if tally["answers"] and tally["errors"] == tally["answers"]:
        raise EveryRequestFailedError(
            f"every one of the {tally['answers']} requests failed (first: {tally['first']}); the results written "
            "are error answers, not a measurement: check the model or server (e.g. with --limit 1) and rerun")


if __name__ == "__main__":
    sys.exit(main())
