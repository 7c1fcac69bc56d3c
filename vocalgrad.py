"""VocalGrad: the one definition of the benchmark's vocabulary and dataset schema.

Everything that names a category, tier, trajectory, direction, column or prompt imports it from
here (benchmark.md §1–§3, §7). The module is deliberately light (standard library only) so that the
render workers, the harness and the report can import it without pulling in ``datasets``.

The Hugging Face ``datasets`` builder (:class:`VocalGrad`) lives in this module too, but is
created lazily on first access so that importing the vocabulary stays cheap.

Examples
--------
>>> import vocalgrad
>>> vocalgrad.category("clarity").increase_means
'clearer (wider band)'
>>> vocalgrad.build_prompt("pitch")
'Does the voice pitch increase or decrease over time?\\n\\nAnswer with only one word: "increase" or "decrease".'
"""

from __future__ import annotations

from dataclasses import dataclass


class VocalGradError(Exception):
    """Base class of every error the toolkit raises: ``except vocalgrad.VocalGradError`` catches them all.

    Each toolkit error also keeps its natural built-in base (``ValueError`` for bad input,
    ``RuntimeError`` for a failed run), so existing ``except ValueError`` callers keep working.
    """


__all__ = [
    "VocalGradError",
    "CATEGORIES",
    "CATEGORY_NAMES",
    "Category",
    "DIRECTIONS",
    "HUB_COLUMNS",
    "MANIFEST_COLUMNS",
    "ANSWER_WORDS",
    "CONSTANT",
    "FEWSHOT_TEXT",
    "PARAPHRASES",
    "PROMPT_VARIANTS",
    "REWORDINGS",
    "SYNONYM_PARSER",
    "SYNONYM_WORDS",
    "TIERS",
    "TRAJECTORIES",
    "SOURCES_CONFIG",
    "SPLITS",
    "answer_words",
    "build_prompt",
    "paraphrase_prompt",
    "paraphrase_words",
    "prompt_variant_names",
    "category",
    "clip_id",
    "parse_clip_id",
]

HUB_REPO_ID = "ynklab/vocalgrad"
LICENSE = "cc-by-4.0"
PAPER = (
    'Ryu & Yanaka, "VocalGrad: Evaluating Acoustic Perception in Audio Language Models", '
    "NeurIPS 2026, arXiv:2610.23745"
)


@dataclass(frozen=True)
class Category:
    """One VocalGrad category (benchmark.md §2).

    Attributes
    ----------
    name : str
        Config name used everywhere in this toolkit (``"pitch"``).
    id : str
        The paper's internal id (``"voice_pitch"``).
    attribute : str
        Phrase inserted into the prompt (``"voice pitch"``).
    increase_means : str
        What the label ``increase`` means for a listener.
    decrease_means : str
        What the label ``decrease`` means for a listener.
    origin : {"speaker", "environment"}
        Speaker-intrinsic or environment-induced attribute.
    """

    name: str
    id: str
    attribute: str
    increase_means: str
    decrease_means: str
    origin: str


CATEGORIES: tuple[Category, ...] = (
    Category("speed", "speaking_speed", "speaking speed", "speech gets faster", "speech gets slower", "speaker"),
    Category("pitch", "voice_pitch", "voice pitch", "voice gets higher", "voice gets lower", "speaker"),
    Category("volume", "volume", "volume", "louder", "quieter", "speaker"),
    Category("distortion", "audio_distortion", "audio distortion", "more distortion (worse)",
             "less distortion (better)", "environment"),
    Category("roughness", "audio_roughness", "audio roughness", "more roughness (worse)",
             "less roughness (better)", "environment"),
    Category("noise", "background_noise", "background noise", "more noise", "less noise", "environment"),
    Category("echo", "echo", "echo", "more echo", "less echo", "environment"),
    Category("clarity", "voice_clarity", "voice clarity", "clearer (wider band)", "muffled (narrower band)",
             "environment"),
    Category("vibration", "voice_vibration", "voice vibration", "more tremor", "less tremor", "environment"),
)
CATEGORY_NAMES: tuple[str, ...] = tuple(c.name for c in CATEGORIES)
_BY_NAME = {c.name: c for c in CATEGORIES} | {c.id: c for c in CATEGORIES}

TIERS: tuple[str, ...] = ("low", "medium", "high")
TRAJECTORIES: tuple[str, ...] = ("linear", "quad_first_flat", "quad_last_flat", "jump")
DIRECTIONS: tuple[str, ...] = ("increase", "decrease")
SPLITS: tuple[str, ...] = ("test", "train", "beep")
#: Categories of the beep (pure-tone) ablation, benchmark.md §6.
BEEP_CATEGORIES: tuple[str, ...] = ("pitch", "volume", "noise", "vibration")

#: Clips per source utterance: 9 categories x 3 tiers x 4 trajectories x 2 directions (benchmark.md §1).
CONDITIONS_PER_CATEGORY = len(TIERS) * len(TRAJECTORIES) * len(DIRECTIONS)


def category(name: str) -> Category:
    """Return the :class:`Category` for a config name or internal id.

    Raises
    ------
    ValueError
        If ``name`` is neither, with the list of valid names.
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(
            f"unknown category {name!r}; choose from {', '.join(CATEGORY_NAMES)}"
        ) from None


def clip_id(source_id: str, category: str, trajectory: str, tier: str, direction: str) -> str:
    """Clip identifier ``{source_id}__{category}__{trajectory}__{tier}__{direction}``."""
    return "__".join((source_id, category, trajectory, tier, direction))


def parse_clip_id(cid: str) -> dict[str, str]:
    """Split a clip id made by :func:`clip_id` back into its fields."""
    parts = cid.rsplit("__", 4)
    if len(parts) != 5:
        raise ValueError(f"not a VocalGrad clip id: {cid!r}")
    keys = ("source_id", "category", "trajectory", "tier", "direction")
    return dict(zip(keys, parts))


# --------------------------------------------------------------------------------------------
# Prompt (benchmark.md §7)
# --------------------------------------------------------------------------------------------
#: Prompt variants: name -> (question template, answer instruction). ``{attribute}`` is filled in.
PROMPT_VARIANTS: dict[str, tuple[str, str]] = {
    "default": (
        "Does the {attribute} increase or decrease over time?",
        'Answer with only one word: "increase" or "decrease".',
    ),
    "swap": (
        "Does the {attribute} decrease or increase over time?",
        'Answer with only one word: "decrease" or "increase".',
    ),
    "audioref": (
        "Does the {attribute} of this audio clip increase or decrease over time?",
        'Answer with only one word: "increase" or "decrease".',
    ),
}


PROMPT_VARIANTS.update({
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
})

#: The paper's question paraphrases (prompt-sensitivity study, paper Tables 12-13; group
#: ``vocalgrad_paraphrase``): pattern -> (category, question, (word asked for increase, for decrease)).
#: The answer instruction is built as in the default prompt; answers are parsed with the shared
#: synonym vocabulary :data:`SYNONYM_WORDS` (parser ``synonym-unique-direction-v1``).
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
#: ``vocalgrad_reword``; not in the paper): category -> (question, answer instruction, answer
#: words). The first word of each label is the one the instruction asks for.
REWORDINGS: dict[str, tuple[str, str, dict[str, tuple[str, ...]]]] = {
    "speed": ("Does the person speak faster or slower as the audio progresses?",
              'Answer with only one word: "faster" or "slower".',
              {"increase": ("faster",), "decrease": ("slower",)}),
    "pitch": ("Does the tone rise or fall over time?",
              'Answer with only one word: "rise" or "fall".',
              {"increase": ("rise", "rises"), "decrease": ("fall", "falls")}),
    "volume": ("Does the loudness rise or fall as the audio progresses?",
               'Answer with only one word: "rise" or "fall".',
               {"increase": ("rise", "rises"), "decrease": ("fall", "falls")}),
    "distortion": ("Does the sound become more or less distorted over time?",
                   'Answer with only one word: "more" or "less".',
                   {"increase": ("more",), "decrease": ("less",)}),
    "roughness": ("Does the sound get rougher or smoother over time?",
                  'Answer with only one word: "rougher" or "smoother".',
                  {"increase": ("rougher",), "decrease": ("smoother",)}),
    "noise": ("Does the noise behind the voice get louder or quieter over time?",
              'Answer with only one word: "louder" or "quieter".',
              {"increase": ("louder",), "decrease": ("quieter",)}),
    "echo": ("Does the reverberation grow or fade as the audio progresses?",
             'Answer with only one word: "grow" or "fade".',
             {"increase": ("grow", "grows"), "decrease": ("fade", "fades")}),
    "clarity": ("Does the voice become clearer or more muffled over time?",
                'Answer with only one word: "clearer" or "muffled".',
                {"increase": ("clearer",), "decrease": ("muffled",)}),
    "vibration": ("Does the trembling of the voice get stronger or weaker over time?",
                  'Answer with only one word: "stronger" or "weaker".',
                  {"increase": ("stronger",), "decrease": ("weaker",)}),
}

#: Answer words of the variants that do not depend on the category: label -> whole words.
ANSWER_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "default": {"increase": ("increase", "increases"), "decrease": ("decrease", "decreases")},
    "yesno": {"yes": ("yes",), "no": ("no",)},
    "ternary": {"increase": ("increase", "increases"), "decrease": ("decrease", "decreases"),
                "constant": ("constant",)},
}
ANSWER_WORDS["swap"] = ANSWER_WORDS["audioref"] = ANSWER_WORDS["default"]

#: Label of the unmodified source clips in the ternary format.
CONSTANT = "constant"

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
    return f'{question}\n\nAnswer with only one word: "{inc}" or "{dec}".'


def paraphrase_words(pattern: str) -> dict[str, tuple[str, ...]]:
    """The synonym vocabulary with the pattern's own words first (the parser is the same for
    every pattern; the order only says which word the prompt asks for)."""
    _, _, asked = _paraphrase(pattern)
    return {label: (word, *(w for w in SYNONYM_WORDS[label] if w != word))
            for label, word in zip(DIRECTIONS, asked)}


def build_prompt(category_name: str, variant: str = "default") -> str:
    """Text prompt for a category: question, blank line, answer instruction (benchmark.md §7).

    Parameters
    ----------
    category_name : str
        Config name or internal id of the category.
    variant : str
        Key of :data:`PROMPT_VARIANTS`, or ``"reword"`` (:data:`REWORDINGS`). The paper's
        paraphrases are per pattern, not per category: :func:`paraphrase_prompt`. Audio order
        (text first or audio first) is a task/adapter setting, not part of the text.
    """
    cat = category(category_name)
    if variant == "reword":
        question, instruction, _ = REWORDINGS[cat.name]
        return question + "\n\n" + instruction
    if variant not in PROMPT_VARIANTS:
        raise ValueError(f"unknown prompt variant {variant!r}; choose from {', '.join(prompt_variant_names())}")
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
        return dict(REWORDINGS[category(category_name).name][2])
    if variant not in ANSWER_WORDS:
        raise ValueError(f"unknown prompt variant {variant!r}; choose from {', '.join(prompt_variant_names())}")
    return dict(ANSWER_WORDS[variant])


# --------------------------------------------------------------------------------------------
# Schema: the rendered manifest and the Hub columns (DESIGN "Data contract")
# --------------------------------------------------------------------------------------------
#: Manifest columns written by ``vocalgrad render``: (name, arrow-like type, description).
MANIFEST_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("clip_id", "string", "{source_id}__{category}__{trajectory}__{tier}__{direction}"),
    ("path", "string", "clip file relative to the render directory"),
    ("split", "string", "test, train or beep"),
    ("category", "string", "config name of the category (benchmark.md §2)"),
    ("attribute", "string", "attribute phrase used in the prompt"),
    ("direction", "string", "increase or decrease"),
    ("tier", "string", "low, medium or high"),
    ("trajectory", "string", "linear, quad_first_flat, quad_last_flat or jump"),
    ("source_id", "string", "id of the source utterance"),
    ("speaker_id", "string", "speaker of the source utterance"),
    ("sentence_id", "string", "utterance/sentence id within the corpus"),
    ("gender", "string", "speaker gender as given by the corpus (may be empty)"),
    ("accent", "string", "speaker accent group as given by the corpus (may be empty)"),
    ("text", "string", "transcript of the source utterance (may be empty)"),
    ("sample_rate", "int32", "sample rate of the clip file in Hz"),
    ("duration_sec", "float64", "clip duration in seconds"),
    ("onset_sec", "float64", "speech onset in the output clip, seconds"),
    ("offset_sec", "float64", "speech offset in the output clip, seconds"),
    ("source_onset_sec", "float64", "speech onset detected in the source, seconds"),
    ("source_offset_sec", "float64", "speech offset detected in the source, seconds"),
    ("speech_found", "bool", "False when no speech segment was found and the whole clip was used"),
    ("value_start", "float64", "value of the varied quantity at the start of the span"),
    ("value_end", "float64", "value of the varied quantity at the end of the span"),
    ("value_unit", "string", "unit of value_start/value_end"),
    ("clipped_ratio", "float64", "share of output samples that hit the int16 limits"),
    ("sha256", "string", "sha256 of the clip file bytes"),
    ("recipe", "string", "recipe name and version, e.g. faithful-v1"),
)
MANIFEST_COLUMN_NAMES: tuple[str, ...] = tuple(c[0] for c in MANIFEST_COLUMNS)

#: Hub columns: audio + these, in this order; manifest names that differ on the Hub are mapped.
HUB_RENAMES: dict[str, str] = {"clip_id": "id", "value_unit": "unit"}
HUB_COLUMNS: tuple[str, ...] = (
    "audio", "id", "category", "attribute", "direction", "tier", "trajectory", "source_id",
    "speaker_id", "sentence_id", "text", "prompt", "label", "duration_sec", "onset_sec",
    "offset_sec", "split", "value_start", "value_end", "unit",
)



# --------------------------------------------------------------------------------------------
# Hugging Face ``datasets`` side: Features, BuilderConfigs and the builder (created lazily)
# --------------------------------------------------------------------------------------------
#: Arrow-like type of every Hub column except ``audio`` (HUB_COLUMNS first, then the remaining
#: manifest columns, which carry the realised parameters and provenance of each clip).
def hub_column_types() -> dict[str, str]:
    """Hub column name -> value dtype, in column order (``audio`` excluded).

    The first names are :data:`HUB_COLUMNS`; after them come the manifest columns that
    :data:`HUB_COLUMNS` does not list (``gender``, ``sha256``, ``recipe``, ...), so that every
    manifest column except ``path`` (replaced by the audio) reaches the Hub. All vocabularies
    (category, direction, tier, trajectory, split, label) are plain strings; see docs/hub.md.
    """
    manifest = {HUB_RENAMES.get(name, name): dtype for name, dtype, _ in MANIFEST_COLUMNS}
    manifest.update(prompt="string", label="string")
    out = {name: manifest[name] for name in HUB_COLUMNS if name != "audio"}
    out.update((n, t) for n, t in manifest.items() if n not in out and n != "path")
    return out


def features(sample_rate: int | None = 48000):
    """The :class:`datasets.Features` of every VocalGrad config.

    Parameters
    ----------
    sample_rate : int or None
        Sampling rate given to :class:`datasets.Audio` (the rate of the rendered clips; decoding
        at that rate involves no resampling). ``None`` decodes at each file's own rate.

    Returns
    -------
    datasets.Features
        ``audio`` (:class:`datasets.Audio`, FLAC bytes) followed by :func:`hub_column_types`.
    """
    import datasets

    cols = {"audio": datasets.Audio(sampling_rate=sample_rate)}
    cols.update((name, datasets.Value(dtype)) for name, dtype in hub_column_types().items())
    return datasets.Features(cols)


def hub_record(row: dict, audio_bytes: bytes) -> dict:
    """Turn one manifest row and its clip bytes into a Hub example (all Hub columns).

    ``audio`` is ``{"bytes": ..., "path": "<clip_id>.flac"}``; ``prompt`` is
    :func:`build_prompt` of the category and ``label`` repeats ``direction``.
    """
    rec: dict = {"audio": {"bytes": audio_bytes, "path": str(row["path"]).rsplit("/", 1)[-1]}}
    for name, value in row.items():
        name = HUB_RENAMES.get(name, name)
        if name != "path":
            rec[name] = value
    rec["prompt"] = build_prompt(row["category"])
    rec["label"] = row["direction"]
    return {"audio": rec["audio"], **{name: rec[name] for name in hub_column_types()}}


#: Hub config of the unmodified source clips (``DIR/sources/<source_id>.flac`` of the test
#: render), used by the yes/no and ternary formats; label ``constant``.
SOURCES_CONFIG = "sources"


def source_record(row: dict, audio_bytes: bytes, *, duration_sec: float, sample_rate: int) -> dict:
    """Turn a source utterance into a Hub example of the ``sources`` config (all Hub columns).

    Parameters
    ----------
    row : dict
        Any manifest row of the source: speaker, sentence, text, gender, accent, recipe, split
        and the detected speech span are taken from it.
    audio_bytes : bytes
        The source file ``DIR/sources/<source_id>.flac``.
    duration_sec, sample_rate : float, int
        Length and rate of that file.

    Returns
    -------
    dict
        ``id`` ``<source_id>__source``, ``direction`` and ``label`` :data:`CONSTANT`; category,
        attribute, tier, trajectory, prompt and unit empty, the value columns and
        ``clipped_ratio`` null (each task fills in its category).
    """
    import hashlib

    sid = row["source_id"]
    rec = {
        "audio": {"bytes": audio_bytes, "path": f"{sid}.flac"}, "id": f"{sid}__source", "category": "",
        "attribute": "", "direction": CONSTANT, "tier": "", "trajectory": "", "source_id": sid,
        "speaker_id": row["speaker_id"], "sentence_id": row["sentence_id"], "text": row["text"], "prompt": "",
        "label": CONSTANT, "duration_sec": float(duration_sec), "onset_sec": row["source_onset_sec"],
        "offset_sec": row["source_offset_sec"], "split": row["split"], "value_start": None, "value_end": None,
        "unit": "", "gender": row["gender"], "accent": row["accent"], "sample_rate": int(sample_rate),
        "source_onset_sec": row["source_onset_sec"], "source_offset_sec": row["source_offset_sec"],
        "speech_found": row["speech_found"], "clipped_ratio": None,
        "sha256": hashlib.sha256(audio_bytes).hexdigest(), "recipe": row["recipe"],
    }
    return {"audio": rec["audio"], **{name: rec[name] for name in hub_column_types()}}


#: Config name -> (categories it holds, render split it is built from, Hub split name).
def builder_config_specs() -> dict[str, tuple[tuple[str, ...], str, str]]:
    """Every Hub config: the nine categories, ``all`` (default), ``beep``, ``train`` and
    ``sources`` (no category: the unmodified source clips of the test render)."""
    specs = {name: ((name,), "test", "test") for name in CATEGORY_NAMES}
    specs["all"] = (CATEGORY_NAMES, "test", "test")
    specs["beep"] = (BEEP_CATEGORIES, "beep", "test")
    specs["train"] = (CATEGORY_NAMES, "train", "train")
    specs[SOURCES_CONFIG] = ((), "test", "test")
    return specs


class RenderDirError(VocalGradError, ValueError):
    """A rendered directory cannot be read as VocalGrad data; the message lists what is wrong."""


# The builder's steps. Each reads the render folder through generation.render_dir.RenderDir (the one
# reader of that layout) or the authors' release through harness_tasks.published; both import lazily.
def _cache_hash(data_dir, config_name: str | None) -> str | None:
    """datasets cache key of a build: follows the render's content, so a re-render is never served stale."""
    import hashlib
    from pathlib import Path

    if not data_dir:
        return None
    if Path(data_dir, "metadata.csv").is_file():
        return hashlib.sha256(Path(data_dir, "metadata.csv").read_bytes()).hexdigest()[:16]
    from generation.render_dir import RenderDir

    rd = RenderDir(data_dir)
    return rd.content_hash(with_sources=config_name == SOURCES_CONFIG) if rd.manifest_path.is_file() else None


def _published_reader(data_dir):
    """harness_tasks.published when data_dir is the authors' release (docs/published.md), else None."""
    from harness_tasks import published  # lazy: the one reader of that layout

    return published if data_dir and published.published_folder(data_dir) else None


def _dataset_info(data_dir):
    """The :class:`datasets.DatasetInfo` of a build (features at the render's sample rate)."""
    import datasets

    published = _published_reader(data_dir)
    if published:
        return datasets.DatasetInfo(description="VocalGrad, as published by its authors",
                                    features=published.published_features(None),
                                    homepage=f"https://huggingface.co/datasets/{HUB_REPO_ID}",
                                    license=LICENSE, citation=PAPER)
    sr = 48000
    if data_dir:
        from generation.render_dir import RenderDir

        rd = RenderDir(data_dir)
        if rd.meta_path.is_file():
            sr = int(rd.meta.get("sample_rate", sr))
    return datasets.DatasetInfo(
        description="VocalGrad: does one acoustic attribute increase or decrease over the clip?",
        features=features(sr), homepage=f"https://huggingface.co/datasets/{HUB_REPO_ID}", license=LICENSE,
        citation=PAPER,
    )


def _published_rows(config, data_dir) -> list[dict]:
    """Rows of a test config from the authors' release (which holds the test set only)."""
    if config.render_split != "test" or config.name == SOURCES_CONFIG:
        raise RenderDirError(f"{data_dir}: the authors' release holds the test set only; config "
                             f"{config.name!r} needs a render (`vocalgrad render`)")
    return _published_reader(data_dir).load_published_rows(data_dir, categories=config.categories)


def _render_rows(config, rd) -> list[dict]:
    """Rows of a config from a render folder, after checking its split and every file the rows need."""
    meta = rd.meta
    if meta.get("split") != config.render_split:
        raise RenderDirError(
            f"{rd.meta_path}: split is {meta.get('split')!r} but config {config.name!r} is built from a "
            f"{config.render_split!r} render; pass the matching render folder as data_dir"
        )
    if config.name == SOURCES_CONFIG:
        firsts = list(rd.first_row_per_source().values())
        if not firsts:
            raise RenderDirError(f"{rd.manifest_path}: no clips, so no source utterances")
        missing = [str(rd.source_path(r["source_id"])) for r in firsts if not rd.source_path(r["source_id"]).is_file()]
        if missing:
            raise RenderDirError(
                f"{rd.path}: config 'sources' needs sources/<source_id>.flac for every source; "
                f"{len(missing)} missing (re-run the render, it resumes):\n  " + "\n  ".join(missing))
        return firsts
    rows = rd.rows(config.categories)
    missing, changed = rd.clip_problems(rows)  # check everything first: one error listing every bad clip
    if missing or changed:
        raise RenderDirError(
            f"{rd.path}: {len(missing)} clip(s) missing, {len(changed)} clip(s) whose sha256 differs from "
            "manifest.parquet; re-run the render (it resumes) to fix them:\n  "
            + "\n  ".join([f"missing: {p}" for p in missing] + [f"sha256 differs: {p}" for p in changed])
        )
    return rows


def _examples(config, data_dir, rows):
    """(key, example) pairs of a config's rows: published, source or clip records."""
    from pathlib import Path

    published = _published_reader(data_dir)
    if published:
        for row in rows:
            yield row["id"], published.hub_record(row, Path(row["audio"]["path"]).read_bytes())
    elif config.name == SOURCES_CONFIG:
        import soundfile as sf
        from generation.render_dir import RenderDir

        rd = RenderDir(data_dir)
        for row in rows:
            path = rd.source_path(row["source_id"])
            info = sf.info(path)
            rec = source_record(row, path.read_bytes(), duration_sec=info.frames / info.samplerate,
                                sample_rate=info.samplerate)
            yield rec["id"], rec
    else:
        for row in rows:
            yield row["clip_id"], hub_record(row, Path(data_dir, row["path"]).read_bytes())


def _config_description(name: str, cats: tuple[str, ...]) -> str:
    if name in CATEGORY_NAMES:
        return f"{category(name).attribute}: " + ", ".join(cats)
    if name == SOURCES_CONFIG:
        return "sources: the unmodified source clips (label constant)"
    return f"{name}: " + ", ".join(cats)


def _make_builder_classes() -> dict:
    """Create :class:`VocalGradConfig` and :class:`VocalGrad` (imports ``datasets``)."""
    from dataclasses import dataclass

    import datasets

    @dataclass
    class VocalGradConfig(datasets.BuilderConfig):
        """BuilderConfig of one VocalGrad config.

        Attributes
        ----------
        categories : tuple of str
            Categories whose clips the config holds.
        render_split : str
            ``split`` of the render (render.json) the config is built from.
        hub_split : str
            Name of the split it yields (``test`` or ``train``).
        """

        categories: tuple = CATEGORY_NAMES
        render_split: str = "test"
        hub_split: str = "test"

    class VocalGrad(datasets.GeneratorBasedBuilder):
        """Builds a VocalGrad config from a rendered directory (``data_dir=``), or from a local copy of
        the authors' published release (test configs only).

        Examples
        --------
        >>> b = VocalGrad(config_name="pitch", data_dir="build/")  # doctest: +SKIP
        >>> b.download_and_prepare(); ds = b.as_dataset(split="test")  # doctest: +SKIP
        """

        BUILDER_CONFIG_CLASS = VocalGradConfig
        BUILDER_CONFIGS = [
            VocalGradConfig(name=name, version=datasets.Version("1.0.0"), categories=cats, render_split=rs,
                            hub_split=hs, description=_config_description(name, cats))
            for name, (cats, rs, hs) in builder_config_specs().items()
        ]
        DEFAULT_CONFIG_NAME = "all"
        DEFAULT_WRITER_BATCH_SIZE = 100  # rows of audio per Arrow record batch

        def __init__(self, *args, **kwargs):
            key = _cache_hash(kwargs.get("data_dir"), kwargs.get("config_name")) if kwargs.get("hash") is None else None
            if key is not None:
                kwargs["hash"] = key
            super().__init__(*args, **kwargs)

        def _info(self):
            return _dataset_info(self.config.data_dir)

        def _split_generators(self, dl_manager):
            from pathlib import Path

            from generation.render_dir import RenderDir

            if not self.config.data_dir:
                raise RenderDirError(
                    "VocalGrad needs data_dir= pointing at a rendered folder (`vocalgrad render --out DIR`) or at "
                    f"a local copy of the authors' release {HUB_REPO_ID!r} (one AudioFolder config; "
                    "docs/published.md)"
                )
            data_dir = Path(self.config.data_dir)
            if _published_reader(data_dir):
                rows, name = _published_rows(self.config, data_dir), "test"
            else:
                rows, name = _render_rows(self.config, RenderDir(data_dir)), self.config.hub_split
            return [datasets.SplitGenerator(name=name, gen_kwargs={"data_dir": str(data_dir), "rows": rows})]

        def _generate_examples(self, data_dir, rows):
            yield from _examples(self.config, data_dir, rows)

    for cls in (VocalGradConfig, VocalGrad):  # picklable as vocalgrad.<name>
        cls.__qualname__ = cls.__name__
        cls.__module__ = __name__
    return {"VocalGradConfig": VocalGradConfig, "VocalGrad": VocalGrad}


_LAZY: dict = {}


def __getattr__(name: str):
    # Module-level lazy attributes (PEP 562): the builder classes import ``datasets`` only when used.
    if name in ("VocalGrad", "VocalGradConfig"):
        if not _LAZY:
            _LAZY.update(_make_builder_classes())
        return _LAZY[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"VocalGrad", "VocalGradConfig"})
