"""lm-eval plugin for VocalGrad: task YAMLs, parser, metrics and model adapters.

``TASK_DIR`` is the folder to pass to lm-eval as ``--include_path``;
:func:`register_models` adds the ``vocalgrad-*`` model adapters to lm-eval's registry
(``vocalgrad-eval`` does both, then runs lm-eval's own command line).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["LMMS_TASK_DIR", "MODEL_ADAPTERS", "TASK_DIR", "register_models"]

#: Folder with the task YAMLs (``--include_path``).
TASK_DIR = str(Path(__file__).resolve().parent / "vocalgrad")
#: Folder with the lmms-eval 0.7 task YAMLs (lmms-eval's ``--include_path``; docs/lmms-eval.md).
LMMS_TASK_DIR = str(Path(__file__).resolve().parent / "lmms")

#: lm-eval model name -> "module:Class" (imported only when the model is used).
MODEL_ADAPTERS: dict[str, str] = {
    "vocalgrad-hf": "harness_tasks.models.hf:HFAudioLM",
    "vocalgrad-openai": "harness_tasks.models.openai:OpenAIAudioLM",
    "vocalgrad-worker": "harness_tasks.models.worker:WorkerLM",
    "vocalgrad-oracle": "harness_tasks.models.oracle:OracleLM",
    "vocalgrad-chance": "harness_tasks.models.baselines:ChanceLM",
    "vocalgrad-constant": "harness_tasks.models.baselines:ConstantLM",
}


def register_models() -> list[str]:
    """Register the adapters in ``lm_eval.api.registry`` (idempotent); return their names.

    lm-eval's built-in models are registered first: lm-eval only fills its registry when it
    finds it empty, so registering ours into an empty registry would hide them.
    """
    import lm_eval.models  # noqa: F401  (registers lm-eval's own models)
    from lm_eval.api.registry import model_registry

    for name, target in MODEL_ADAPTERS.items():
        if name not in model_registry:
            model_registry.register(name, target=target)
    return list(MODEL_ADAPTERS)
