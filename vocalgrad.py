"""VocalGrad: the one definition of the benchmark's vocabulary and dataset schema.

Everything that names a category, tier, trajectory, direction, column or prompt imports it from
here (SPEC §1–§3, §7). The module is deliberately light (standard library only) so that the
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

__all__ = [
    "CATEGORIES",
    "CATEGORY_NAMES",
    "Category",
    "DIRECTIONS",
    "HUB_COLUMNS",
    "MANIFEST_COLUMNS",
    "PROMPT_VARIANTS",
    "TIERS",
    "TRAJECTORIES",
    "SPLITS",
    "build_prompt",
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
    """One VocalGrad category (SPEC §2).

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
#: Categories of the beep (pure-tone) ablation, SPEC §6.
BEEP_CATEGORIES: tuple[str, ...] = ("pitch", "volume", "noise", "vibration")

#: Clips per source utterance: 9 categories x 3 tiers x 4 trajectories x 2 directions (SPEC §1).
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
# Prompt (SPEC §7)
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


def build_prompt(category_name: str, variant: str = "default") -> str:
    """Text prompt for a category: question, blank line, answer instruction (SPEC §7).

    Parameters
    ----------
    category_name : str
        Config name or internal id of the category.
    variant : str
        Key of :data:`PROMPT_VARIANTS`. Audio order (text first or audio first) is a property of
        the model adapter, not of the text.
    """
    if variant not in PROMPT_VARIANTS:
        raise ValueError(f"unknown prompt variant {variant!r}; choose from {', '.join(PROMPT_VARIANTS)}")
    question, instruction = PROMPT_VARIANTS[variant]
    return question.format(attribute=category(category_name).attribute) + "\n\n" + instruction


# --------------------------------------------------------------------------------------------
# Schema: the rendered manifest and the Hub columns (DESIGN "Data contract")
# --------------------------------------------------------------------------------------------
#: Manifest columns written by ``vocalgrad render``: (name, arrow-like type, description).
MANIFEST_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("clip_id", "string", "{source_id}__{category}__{trajectory}__{tier}__{direction}"),
    ("path", "string", "clip file relative to the render directory"),
    ("split", "string", "test, train or beep"),
    ("category", "string", "config name of the category (SPEC §2)"),
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

