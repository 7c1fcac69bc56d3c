"""``DIR/model-index/<model>.yaml``: each model's VocalGrad accuracy as a Hub model card's ``model-index``.

The Hugging Face Hub reads evaluation results from the ``model-index`` key of a model card's YAML
header: a list with one entry per model (``name``, ``results``), each result naming the task
(``type``, ``name``), the dataset (``name``, ``type`` = its Hub id, ``config``, ``split``) and its
``metrics`` (``type``, ``name``, ``value``). ``huggingface_hub`` parses it with
``huggingface_hub.repocard_data.model_index_to_eval_results``. The file written here holds that key
alone, to paste into the card's header (docs/report.md).

One result per category (dataset config = the category, the Hub config of the same name) with the
accuracy in percent (unparsed answers wrong, benchmark.md §7), and one for config ``all`` with the
mean over the nine categories when all nine were evaluated (the paper's *avg*). The dataset is named
by the benchmark's Hub id (:data:`vocalgrad.HUB_REPO_ID`); lm-eval's results files do not record
which copy was read. Runs of a prompt variant (``[swap]`` ...) say so in the task name. The human
row of ``--human`` and runs without a per-category accuracy get no file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import vocalgrad
from generation.audio import atomic_write_text

__all__ = ["MODEL_INDEX_DIR", "TASK_TYPE", "model_index", "write_model_indexes"]

#: Folder of the report holding one ``<model>.yaml`` per model.
MODEL_INDEX_DIR = "model-index"
#: The Hub's task id for a model that answers a text question about an audio clip in text.
TASK_TYPE = "audio-text-to-text"
_TASK_NAME = "VocalGrad: direction of a gradual acoustic change"


def _value(v) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else round(100.0 * float(v), 2)


def model_index(m: dict[str, Any], *, dataset: str = vocalgrad.HUB_REPO_ID) -> list[dict[str, Any]] | None:
    """The ``model-index`` list of one analysed model (an entry of ``report["models"]``), or None.

    Parameters
    ----------
    m : dict
        One model of :func:`analysis.report.analysis.analyse`.
    dataset : str
        Hub id of the dataset (``dataset.type``).
    """
    if m.get("model") == "human":
        return None
    task = {"type": TASK_TYPE,
            "name": _TASK_NAME if m.get("variant", "default") == "default" else f"{_TASK_NAME} ({m['variant']} prompt)"}
    results = []
    accs = {c: _value(g.get("acc")) for c, g in (m.get("by_category") or {}).items()}
    for cat in vocalgrad.CATEGORY_NAMES:
        if accs.get(cat) is not None:
            results.append({"task": dict(task),
                            "dataset": {"name": f"VocalGrad ({cat})", "type": dataset, "config": cat, "split": "test"},
                            "metrics": [{"type": "accuracy", "name": f"Accuracy on {cat} (%)", "value": accs[cat]}]})
    mean = _value((m.get("overall") or {}).get("category_mean_acc"))
    if len(results) == len(vocalgrad.CATEGORY_NAMES) and mean is not None:
        results.append({"task": dict(task),
                        "dataset": {"name": "VocalGrad", "type": dataset, "config": "all", "split": "test"},
                        "metrics": [{"type": "accuracy", "name": "Accuracy, mean over the nine categories (%)",
                                     "value": mean}]})
    return [{"name": m["label"], "results": results}] if results else None


def write_model_indexes(report: dict[str, Any], out: Path) -> dict[str, str]:
    """Write ``out/model-index/<name>.yaml`` for each model of ``report`` that has one.

    ``<name>`` is the model label's :func:`~analysis.report.markdown.slug`, as for its plot. Returns
    ``"model-index:<label>"`` -> path of each file written.
    """
    import yaml

    from .markdown import slug

    written, used = {}, set()
    for m in report["models"]:
        name = slug(m["label"])
        while name in used:
            name += "-x"
        used.add(name)
        index = model_index(m)
        if index is None:
            continue
        path = Path(out) / MODEL_INDEX_DIR / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = yaml.safe_dump({"model-index": index}, sort_keys=False, allow_unicode=True)
        atomic_write_text(path, f"# VocalGrad results of {m['label']}: paste into the model card's YAML header\n"
                                + text)
        written[f"model-index:{m['label']}"] = str(path)
    return written
