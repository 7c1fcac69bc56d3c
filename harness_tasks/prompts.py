"""The evaluation's prompt options: prompt variants, paraphrases, rewordings and their answer words.

The benchmark's own prompt (benchmark.md §7) belongs to the dataset and is defined once in
:mod:`vocalgrad` (:data:`vocalgrad.DEFAULT_QUESTION`, :data:`vocalgrad.DEFAULT_INSTRUCTION`,
:func:`vocalgrad.default_prompt`); the ``"default"`` variant here is built from it. Everything
else a task may ask is defined here (docs/variants.md): the swapped and audio-reference
wordings, the yes/no and ternary formats, the paper's six paraphrases and their synonym parser,
one extra rewording per category, the few-shot layout, and the answer words of each.

Examples
--------
>>> from harness_tasks import prompts
>>> prompts.build_prompt("pitch", "swap")
'Does the voice pitch decrease or increase over time?\\n\\nAnswer with only one word: "decrease" or "increase".'
>>> prompts.answer_words("yesno")
{'yes': ('yes',), 'no': ('no',)}
"""

from __future__ import annotations

import vocalgrad

__all__ = [
    "ANSWER_WORDS",
    "FEWSHOT_PER_LABEL",
    "FEWSHOT_PROMPT",
    "FEWSHOT_SEED",
    "FEWSHOT_TEXT",
    "PARAPHRASES",
    "PROMPT_VARIANTS",
    "REWORDINGS",
    "SYNONYM_PARSER",
    "SYNONYM_WORDS",
    "answer_words",
    "build_prompt",
    "paraphrase_prompt",
    "paraphrase_words",
    "prompt_variant_names",
]

#: Prompt variants: name -> (question template, answer instruction). ``{attribute}`` is filled in.
#: ``default`` is the benchmark's prompt, as :mod:`vocalgrad` defines it.
PROMPT_VARIANTS: dict[str, tuple[str, str]] = {
    "default": (vocalgrad.DEFAULT_QUESTION, vocalgrad.DEFAULT_INSTRUCTION),
    "swap": (
        "Does the {attribute} decrease or increase over time?",
        'Answer with only one word: "decrease" or "increase".',
    ),
    "audioref": (
        "Does the {attribute} of this audio clip increase or decrease over time?",
        vocalgrad.DEFAULT_INSTRUCTION,
    ),
    # Problem formats (docs/variants.md): yes/no on "increase", and a third answer "constant"
    # for the unmodified source clips.
    "yesno": (
        "Does the {attribute} increase over time?",
        'Answer with only one word: "yes" or "no".',
    ),
    "ternary": (
        "Does the {attribute} increase, decrease, or stay constant over time?",
        'Answer with only one word: "increase", "decrease" or "constant".',
    ),
}

#: The paper's question paraphrases (prompt-sensitivity study, paper Tables 12-13; group
#: ``vocalgrad_paraphrase``): pattern -> (category, question, (word asked for increase, for decrease)).
#: The answer instruction names the two asked words (:func:`paraphrase_prompt`); answers are parsed
#: with the shared synonym vocabulary :data:`SYNONYM_WORDS` (parser ``synonym-unique-direction-v1``).
PARAPHRASES: dict[str, tuple[str, str, tuple[str, str]]] = {
    "rise_fall": ("volume", "Does the loudness rise or fall as the audio progresses?", ("rise", "fall")),
    "intensity_inc_dec": ("volume", "Does the sound intensity increase or decrease throughout the recording?",
                          ("increase", "decrease")),
    "intensity_ing": ("volume", "Is the audio intensity increasing or decreasing over time?",
                      ("increasing", "decreasing")),
    "tone_rise_fall": ("pitch", "Does the tone rise or fall over time?", ("rise", "fall")),
    "freq_up_down": ("pitch", "Does the sound frequency change upward or downward over time?",
                     ("upward", "downward")),
    "freq_rise_decline": ("pitch", "Over time, does the frequency of the voice rise or decline?",
                          ("rise", "decline")),
}
#: Name of the paraphrase parser (the authors' identifier): case-insensitive whole words of
#: :data:`SYNONYM_WORDS` must name exactly one direction.
SYNONYM_PARSER = "synonym-unique-direction-v1"
#: The one direction vocabulary shared by every paraphrase (words and inflections).
SYNONYM_WORDS: dict[str, tuple[str, ...]] = {
    "increase": ("increase", "increases", "increasing", "rise", "rises", "rising", "upward", "upwards",
                 "faster", "accelerate", "accelerates", "accelerating"),
    "decrease": ("decrease", "decreases", "decreasing", "fall", "falls", "falling", "downward", "downwards",
                 "slower", "decline", "declines", "declining", "decelerate", "decelerates", "decelerating"),
}

#: Further rewordings, one per category, each with its own answer words (extra group
#: ``vocalgrad_reword``; not in the paper): category -> (question, words for increase, words for
#: decrease). The instruction asks for the first word of each (as for a paraphrase).
REWORDINGS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "speed": ("Does the person speak faster or slower as the audio progresses?", ("faster",), ("slower",)),
    "pitch": ("Does the tone rise or fall over time?", ("rise", "rises"), ("fall", "falls")),
    "volume": ("Does the loudness rise or fall as the audio progresses?", ("rise", "rises"), ("fall", "falls")),
    "distortion": ("Does the sound become more or less distorted over time?", ("more",), ("less",)),
    "roughness": ("Does the sound get rougher or smoother over time?", ("rougher",), ("smoother",)),
    "noise": ("Does the noise behind the voice get louder or quieter over time?", ("louder",), ("quieter",)),
    "echo": ("Does the reverberation grow or fade as the audio progresses?", ("grow", "grows"), ("fade", "fades")),
    "clarity": ("Does the voice become clearer or more muffled over time?", ("clearer",), ("muffled",)),
    "vibration": ("Does the trembling of the voice get stronger or weaker over time?", ("stronger",), ("weaker",)),
}

#: Answer words of the variants that do not depend on the category: label -> whole words.
ANSWER_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "default": {"increase": ("increase", "increases"), "decrease": ("decrease", "decreases")},
    "yesno": {"yes": ("yes",), "no": ("no",)},
    "ternary": {"increase": ("increase", "increases"), "decrease": ("decrease", "decreases"),
                vocalgrad.CONSTANT: (vocalgrad.CONSTANT,)},
}
ANSWER_WORDS["swap"] = ANSWER_WORDS["audioref"] = ANSWER_WORDS["default"]

#: Few-shot prompt pieces (group ``vocalgrad_fewshot``, the authors' layout): the lead-in
#: (``{k}`` examples, ``{attribute}``), per example its audio line and label line (``{n}``,
#: ``{label}``), the query's audio line and the lead-in of the question, which is the
#: ``audioref`` prompt ("of this audio clip"). Each audio line is followed by the clip.
FEWSHOT_TEXT: dict[str, str] = {
    "intro": "You will receive {k} labeled audio examples for {attribute}, followed by one query audio clip.",
    "example": "Example {n} audio:",
    "label": "Example {n} label: {label}",
    "query": "Query audio:",
    "question": "For the query audio, answer the same question:",
}
#: Prompt variant of the few-shot question, examples per label and seed of the authors' run.
FEWSHOT_PROMPT = "audioref"
FEWSHOT_PER_LABEL = 2
FEWSHOT_SEED = 1234


def prompt_variant_names() -> tuple[str, ...]:
    """Every name :func:`build_prompt` accepts."""
    return (*PROMPT_VARIANTS, "reword")


def _unknown_variant(variant: str) -> ValueError:
    return ValueError(f"unknown prompt variant {variant!r}; choose from {', '.join(prompt_variant_names())}")


def _asking_for(question: str, inc: str, dec: str) -> str:
    """A question with the instruction that asks for one of two words (paraphrases, rewordings)."""
    return f'{question}\n\nAnswer with only one word: "{inc}" or "{dec}".'


def _paraphrase(pattern: str) -> tuple[str, str, tuple[str, str]]:
    try:
        return PARAPHRASES[pattern]
    except KeyError:
        raise ValueError(f"unknown paraphrase pattern {pattern!r}; choose from {', '.join(PARAPHRASES)}") from None


def paraphrase_prompt(pattern: str) -> str:
    """Prompt of a paraphrase pattern: its question, blank line, the instruction naming its words.

    >>> paraphrase_prompt("tone_rise_fall")
    'Does the tone rise or fall over time?\\n\\nAnswer with only one word: "rise" or "fall".'
    """
    _, question, (inc, dec) = _paraphrase(pattern)
    return _asking_for(question, inc, dec)


def paraphrase_words(pattern: str) -> dict[str, tuple[str, ...]]:
    """The synonym vocabulary with the pattern's own words first (the parser is the same for
    every pattern; the order only says which word the prompt asks for)."""
    _, _, asked = _paraphrase(pattern)
    return {label: (word, *(w for w in SYNONYM_WORDS[label] if w != word))
            for label, word in zip(vocalgrad.DIRECTIONS, asked)}


def build_prompt(category_name: str, variant: str = "default") -> str:
    """Text prompt for a category: question, blank line, answer instruction (benchmark.md §7).

    Parameters
    ----------
    category_name : str
        Config name or internal id of the category.
    variant : str
        Key of :data:`PROMPT_VARIANTS`, or ``"reword"`` (:data:`REWORDINGS`). ``"default"`` equals
        :func:`vocalgrad.default_prompt`. The paper's paraphrases are per pattern, not per
        category: :func:`paraphrase_prompt`. Audio order (text first or audio first) is a
        task/adapter setting, not part of the text.

    Raises
    ------
    ValueError
        For an unknown category or variant, naming the valid ones.
    """
    cat = vocalgrad.category(category_name)
    if variant == "reword":
        question, inc, dec = REWORDINGS[cat.name]
        return _asking_for(question, inc[0], dec[0])
    if variant not in PROMPT_VARIANTS:
        raise _unknown_variant(variant)
    question, instruction = PROMPT_VARIANTS[variant]
    return question.format(attribute=cat.attribute) + "\n\n" + instruction


def answer_words(variant: str = "default", category_name: str | None = None) -> dict[str, tuple[str, ...]]:
    """Label -> accepted answer words of a prompt variant (the parser's vocabulary).

    Parameters
    ----------
    variant : str
        A name of :func:`prompt_variant_names`.
        ``"paraphrase"`` gives :data:`SYNONYM_WORDS` (every pattern; see :func:`paraphrase_words`).
    category_name : str, optional
        Needed for ``"reword"``, whose words differ per category.
    """
    if variant == "paraphrase":
        return dict(SYNONYM_WORDS)
    if variant == "reword":
        if category_name is None:
            raise ValueError("answer_words('reword') needs the category (its words differ per category)")
        _, inc, dec = REWORDINGS[vocalgrad.category(category_name).name]
        return dict(zip(vocalgrad.DIRECTIONS, (inc, dec)))
    if variant not in ANSWER_WORDS:
        raise _unknown_variant(variant)
    return dict(ANSWER_WORDS[variant])
