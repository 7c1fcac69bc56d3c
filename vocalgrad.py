"""VocalGrad: the one definition of the benchmark's vocabulary, dataset schema and builder.

Everything that names a category, tier, trajectory, direction or column, and the benchmark's
prompt, imports it from here (benchmark.md §1–§3, §7). The evaluation's other prompts (variants,
paraphrases, their answer words) are in :mod:`harness_tasks.prompts`. The module is deliberately
light (standard library only) so that the render workers, the harness and the report can import
it without pulling in ``datasets``.

The module imports nothing of the toolkit, at any depth: what only the toolkit knows is handed
in. The installed extension attributes come through :func:`register_extensions` and the steps of
the Hugging Face ``datasets`` builder (:class:`VocalGrad`: reading a render folder or the authors'
release) through :func:`register_builder_steps`; the toolkit's ``generation`` package registers
both when it is imported (``generation/__init__.py``). The builder class is created lazily on
first access, so that importing the vocabulary stays cheap.

Examples
--------
>>> import vocalgrad
>>> vocalgrad.category("clarity").increase_means
'clearer (wider band)'
>>> vocalgrad.default_prompt("pitch")
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
    "VocalGradError", "BuilderStepsMissing", "CATEGORIES", "CATEGORY_NAMES", "Category", "DIRECTIONS", "HUB_COLUMNS",
    "MANIFEST_COLUMNS", "SWEEP_COLUMNS", "CONSTANT", "DEFAULT_INSTRUCTION", "DEFAULT_QUESTION", "TIERS",
    "TRAJECTORIES", "SOURCES_CONFIG", "SPLITS", "category", "default_prompt", "register_builder_steps",
    "register_extensions", "clip_id", "parse_clip_id"
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

    The paper's nine are defined here; a name that is none of them is looked up among the
    installed extension attributes (:func:`register_extensions`).

    Raises
    ------
    ValueError
        If ``name`` is neither, with the list of valid names.
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        pass
    extensions = _extension_categories()
    if name in extensions:
        return extensions[name]
    more = f" (extension attributes: {', '.join(extensions)})" if extensions else ""
    raise ValueError(f"unknown category {name!r}; choose from {', '.join(CATEGORY_NAMES)}{more}") from None


# ---- what the toolkit hands in (this file imports none of it) ----------------------------------
_HANDED_IN: dict = {}


def register_extensions(lookup) -> None:
    """Hand in the installed extension attributes: ``lookup()`` returns ``{name: Category}``.

    Called by :func:`category` for a name that is not one of the nine. The toolkit's ``generation``
    package registers its attribute registry (which reads the ``vocalgrad.attributes`` entry points on
    demand) when imported; registering again replaces the lookup.
    """
    _HANDED_IN["extensions"] = lookup


def register_builder_steps(provider) -> None:
    """Hand in the steps of :class:`VocalGrad`: ``provider()`` returns an object with ``cache_hash(data_dir,
    config_name)``, ``dataset_info(data_dir)``, ``split_rows(config)`` and ``examples(config, data_dir, rows)``.

    Called when a builder first needs them; ``generation`` registers ``generation.builder_steps`` when imported.
    """
    _HANDED_IN["builder_steps"] = provider


def _extension_categories() -> dict[str, Category]:
    """Installed extension attributes; empty when none were handed in (this file read alone)."""
    lookup = _HANDED_IN.get("extensions")
    return dict(lookup()) if lookup else {}


class BuilderStepsMissing(VocalGradError, RuntimeError):
    """:class:`VocalGrad` was used before its steps were handed in (:func:`register_builder_steps`)."""


def _builder_steps():
    if "builder_steps" not in _HANDED_IN:
        raise BuilderStepsMissing("vocalgrad.VocalGrad has no steps: import the toolkit's generation package first "
                                  "(`import generation`), which hands them in (vocalgrad.register_builder_steps)")
    return _HANDED_IN["builder_steps"]()


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
# Prompt (benchmark.md §7): the benchmark's question; the evaluation's variants are in harness_tasks.prompts
# --------------------------------------------------------------------------------------------
#: The question (``{attribute}`` is the category's attribute phrase) and the answer instruction.
DEFAULT_QUESTION = "Does the {attribute} increase or decrease over time?"
DEFAULT_INSTRUCTION = 'Answer with only one word: "increase" or "decrease".'


def default_prompt(category_name: str) -> str:
    """The benchmark's prompt for a category: question, blank line, answer instruction (benchmark.md §7).

    It is the Hub's ``prompt`` column and the ``default`` variant of
    :func:`harness_tasks.prompts.build_prompt`. ``category_name`` is a config name or internal id.
    """
    return DEFAULT_QUESTION.format(attribute=category(category_name).attribute) + "\n\n" + DEFAULT_INSTRUCTION


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

#: Columns of a magnitude-sweep clip only (``render --sweep`` manifests and the ``sweep_<attribute>``
#: Hub configs, after the others; docs/sweep.md): what the clip's level declares and what it realised.
SWEEP_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("magnitude", "float64", "declared magnitude of the clip's sweep level (0: the zero-change control)"),
    ("magnitude_unit", "string", "unit of magnitude (the sweep's: semitones, dB, octaves...)"),
    ("magnitude_realised", "float64", "the change measured on the clip as heard (clipped at the 16-bit limits), "
                                      "in the increase sense"),
    ("realised_unit", "string", "unit of magnitude_realised (the sweep's own measure, else the attribute's paired one)"),
    ("diff_from_zero_db", "float64", "energy of the clip minus its zero-change clip (same source, trajectory, "
                                     "direction), dB re that clip; null for the zero-change clip itself"),
    ("level_null", "bool", "the level cannot change this source (the clip equals its zero-change clip within "
                           "16-bit rounding); never a change in a fit"),
    ("level_change_db", "float64", "level change over the clip that comes with the transform: last eighth of the "
                                   "speech span minus the first, clip minus source, dB"),
)
SWEEP_COLUMN_NAMES: tuple[str, ...] = tuple(c[0] for c in SWEEP_COLUMNS)

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
def hub_column_types(*, sweep: bool = False) -> dict[str, str]:
    """Hub column name -> value dtype, in column order (``audio`` excluded).

    The first names are :data:`HUB_COLUMNS`; after them come the manifest columns that
    :data:`HUB_COLUMNS` does not list (``gender``, ``sha256``, ``recipe``, ...), so that every
    manifest column except ``path`` (replaced by the audio) reaches the Hub. All vocabularies
    (category, direction, tier, trajectory, split, label) are plain strings; see docs/hub.md.
    With ``sweep`` (a ``sweep_<attribute>`` config) the :data:`SWEEP_COLUMNS` follow.
    """
    manifest = {HUB_RENAMES.get(name, name): dtype for name, dtype, _ in MANIFEST_COLUMNS}
    manifest.update(prompt="string", label="string")
    out = {name: manifest[name] for name in HUB_COLUMNS if name != "audio"}
    out.update((n, t) for n, t in manifest.items() if n not in out and n != "path")
    if sweep:
        out.update((n, t) for n, t, _ in SWEEP_COLUMNS)
    return out


def features(sample_rate: int | None = 48000, *, sweep: bool = False):
    """The :class:`datasets.Features` of every VocalGrad config.

    Parameters
    ----------
    sample_rate : int or None
        Sampling rate given to :class:`datasets.Audio` (the rate of the rendered clips; decoding
        at that rate involves no resampling). ``None`` decodes at each file's own rate.

    sweep : bool
        The features of a ``sweep_<attribute>`` config (with :data:`SWEEP_COLUMNS`).

    Returns
    -------
    datasets.Features
        ``audio`` (:class:`datasets.Audio`, FLAC bytes) followed by :func:`hub_column_types`.
    """
    import datasets

    cols = {"audio": datasets.Audio(sampling_rate=sample_rate)}
    cols.update((name, datasets.Value(dtype)) for name, dtype in hub_column_types(sweep=sweep).items())
    return datasets.Features(cols)


def hub_record(row: dict, audio_bytes: bytes) -> dict:
    """Turn one manifest row and its clip bytes into a Hub example (all Hub columns).

    ``audio`` is ``{"bytes": ..., "path": "<clip_id>.flac"}``; ``prompt`` is
    :func:`default_prompt` of the category and ``label`` repeats ``direction``. A sweep clip's row
    (one holding the :data:`SWEEP_COLUMNS`) keeps them.
    """
    rec: dict = {"audio": {"bytes": audio_bytes, "path": str(row["path"]).rsplit("/", 1)[-1]}}
    for name, value in row.items():
        name = HUB_RENAMES.get(name, name)
        if name != "path":
            rec[name] = value
    rec["prompt"] = default_prompt(row["category"])
    rec["label"] = row["direction"]
    sweep = SWEEP_COLUMN_NAMES[0] in row
    return {"audio": rec["audio"], **{name: rec.get(name) if name in SWEEP_COLUMN_NAMES else rec[name]
                                      for name in hub_column_types(sweep=sweep)}}


#: Hub config of the unmodified source clips (``DIR/sources/<source_id>.flac`` of the test
#: render), used by the yes/no and ternary formats; label ``constant``.
SOURCES_CONFIG = "sources"
#: Label (and ``direction``) of the source clips: the third answer of the ternary format.
CONSTANT = "constant"


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


def _config_description(name: str, cats: tuple[str, ...]) -> str:
    if name in CATEGORY_NAMES:
        return f"{category(name).attribute}: " + ", ".join(cats)
    if name == SOURCES_CONFIG:
        return "sources: the unmodified source clips (label constant)"
    return f"{name}: " + ", ".join(cats)


def _make_builder_classes() -> dict:
    """Create :class:`VocalGradConfig` and :class:`VocalGrad` (imports ``datasets``).

    The builder's steps (cache key, info, rows, examples) are handed in (:func:`register_builder_steps`)
    and looked up when a builder runs, not when the classes are made.
    """
    from dataclasses import dataclass
    from pathlib import Path

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
            if kwargs.get("hash") is None:
                key = _builder_steps().cache_hash(kwargs.get("data_dir"), kwargs.get("config_name"))
                if key is not None:
                    kwargs["hash"] = key
            super().__init__(*args, **kwargs)

        def _info(self):
            return _builder_steps().dataset_info(self.config.data_dir)

        def _split_generators(self, dl_manager):
            rows, name = _builder_steps().split_rows(self.config)  # checks data_dir first
            gen_kwargs = {"data_dir": str(Path(self.config.data_dir)), "rows": rows}
            return [datasets.SplitGenerator(name=name, gen_kwargs=gen_kwargs)]

        def _generate_examples(self, data_dir, rows):
            yield from _builder_steps().examples(self.config, data_dir, rows)

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
