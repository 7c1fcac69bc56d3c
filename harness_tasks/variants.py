"""The one table of task variants and problem formats (benchmark.md §7, docs/variants.md).

Everything that names a variant or a format reads it from here: the task-YAML generator
(:mod:`.task_configs`), the dataset hook (:func:`harness_tasks.utils.process_docs`), the metrics of
the labelled formats (:mod:`.metrics`) and the report's reader (:mod:`analysis.report.loading`).

================== =====================================================================
:data:`VARIANTS`   task group per variant (prompt, Hub config, format, audio order, ...)
:data:`FORMATS`    problem formats: ``binary`` (the paper's), ``yesno``, ``ternary``
:data:`FORMAT_LABELS` labels of the formats with their own labels (yes/no, ternary)
:data:`LABELLED_FORMATS` those formats' names (scored by macro-F1)
:data:`RECORD_VARIANTS` variants answered increase/decrease with the default record codes
:func:`split_task`     ``(variant, category)`` of a per-category task name
================== =====================================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import vocalgrad

from . import prompts

__all__ = ["EXT_GROUP", "EXT_VARIANT", "FORMATS", "FORMAT_LABELS", "LABELLED_FORMATS", "RECORD_VARIANTS", "VARIANTS",
           "Variant", "split_task"]

#: Problem formats: binary (the paper's), yes/no, ternary (docs/variants.md).
FORMATS: tuple[str, ...] = ("binary", "yesno", "ternary")

#: Labels of the problem formats, in table order.
FORMAT_LABELS: dict[str, tuple[str, ...]] = {
    "yesno": tuple(prompts.ANSWER_WORDS["yesno"]),
    "ternary": tuple(prompts.ANSWER_WORDS["ternary"]),
}
#: The formats with their own labels (yes/no, ternary), scored by macro-F1.
LABELLED_FORMATS: tuple[str, ...] = tuple(FORMAT_LABELS)


@dataclass(frozen=True)
class Variant:
    """One task group.

    Attributes
    ----------
    group : str
        Group name; its tasks are ``<group>_<category>``.
    prompt : str
        Prompt variant of :func:`harness_tasks.prompts.build_prompt`.
    config : str or None
        Hub config to read (None: the category's own config).
    categories : tuple of str
    fmt : {"binary", "yesno", "ternary"}
        Problem format (yes/no and ternary add the unmodified source clips).
    audio_first : bool
        The adapters put the audio before the text.
    fewshot : bool
        Labelled examples from the ``train`` config precede the query.
    kind : {"category", "paraphrase", "xattr", "sources"}
        What one task is: a category, a paraphrase pattern, an (actual, prompt) category pair,
        or a category's question on the source clips.
    """

    group: str
    prompt: str = "default"
    config: str | None = None
    categories: tuple = vocalgrad.CATEGORY_NAMES
    fmt: str = "binary"
    audio_first: bool = False
    fewshot: bool = False
    kind: str = "category"


VARIANTS: dict[str, Variant] = {
    "default": Variant("vocalgrad"),
    "swap": Variant("vocalgrad_swap", prompt="swap"),
    "audioref": Variant("vocalgrad_audioref", prompt="audioref"),
    "audiofirst": Variant("vocalgrad_audiofirst", audio_first=True),
    "paraphrase": Variant("vocalgrad_paraphrase", prompt="paraphrase", kind="paraphrase"),
    "reword": Variant("vocalgrad_reword", prompt="reword"),
    "fewshot": Variant("vocalgrad_fewshot", fewshot=True),
    "yesno": Variant("vocalgrad_yesno", prompt="yesno", fmt="yesno"),
    "ternary": Variant("vocalgrad_ternary", prompt="ternary", fmt="ternary"),
    "beep": Variant("vocalgrad_beep", config="beep", categories=vocalgrad.BEEP_CATEGORIES),
    "xattr": Variant("vocalgrad_xattr", kind="xattr"),
    "sources": Variant("vocalgrad_sources", config=vocalgrad.SOURCES_CONFIG, fmt="sources", kind="sources"),
}
#: Task group of the extension attributes (``vocalgrad attributes``; not the paper's benchmark): the
#: default prompt and format, one task ``vocalgrad_ext_<name>`` per installed extension attribute,
#: generated when ``vocalgrad-eval`` starts (:mod:`harness_tasks.ext_tasks`), never committed.
EXT_GROUP = "vocalgrad_ext"
#: Its variant name (the report's ``[ext]`` evaluations).
EXT_VARIANT = "ext"
#: Variants whose tasks are one per category, answered increase/decrease (same record codes as
#: the default task); the report reads them into one ``Evaluation`` each, in this order.
RECORD_VARIANTS: tuple[str, ...] = tuple(
    name for name, v in VARIANTS.items() if v.fmt == "binary" and v.kind == "category") + (EXT_VARIANT,)

_BY_GROUP: dict[str, str] = {v.group: name for name, v in VARIANTS.items() if v.kind == "category"}


def split_task(name: str) -> tuple[str, str] | None:
    """``(variant, category)`` of a per-category task ``<group>_<category>``, ``None`` for any other
    name (a group, a paraphrase or cross-attribute task, another benchmark's task).

    >>> split_task("vocalgrad_swap_pitch")
    ('swap', 'pitch')
    >>> split_task("vocalgrad_ternary") is None
    True
    """
    group, sep, category = name.rpartition("_")
    if group == EXT_GROUP and re.fullmatch(r"[a-z][a-z0-9]{1,31}", category) \
            and category not in vocalgrad.CATEGORY_NAMES:  # installed here or not: the report reads it
        return EXT_VARIANT, category
    if not sep or group not in _BY_GROUP or category not in vocalgrad.CATEGORY_NAMES:
        return None
    return _BY_GROUP[group], category

