"""The attribute interface: one object declares everything the toolkit needs about an attribute.

An :class:`Attribute` is what ``vocalgrad render``, ``verify``, ``hub``, the tasks, the oracle,
``show``, ``listen`` and ``report`` read about one varied quantity: its name and prompt phrase,
what ``increase`` means, the unit and tier ranges of its value schedule, the transform (with its
checked parameter dataclass) and parameters, a reference-free measure (the oracle's), a paired
measure (clip against its source: label validity, ``show``, the label audit) and any requirement
on the source (a minimum bandwidth). The paper's nine are declared this way in
:mod:`generation.attributes.paper`, the extension set in :mod:`generation.attributes.brightness`
and :mod:`generation.attributes.formants`; third-party packages add theirs through the entry
point group ``vocalgrad.attributes`` (docs/attributes.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

import vocalgrad

from ..transforms.base import ParamError, Params, Transform
from .sweep import Sweep

#: Rate at which declared tiers are range-checked: the processing rate of every shipped recipe.
CHECK_SAMPLE_RATE = 48000

__all__ = ["Attribute", "AttributeDeclarationError", "NAME_PATTERN", "LAYOUTS", "RESERVED_NAMES", "PairedMeasure",
           "WindowMeasure", "window_values"]

#: Attribute names: lower-case letters and digits (they end task names ``vocalgrad_ext_<name>``
#: and sit between ``__`` in clip ids, so no underscores).
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]{1,31}$")
#: Names that are Hub configs or groups already.
RESERVED_NAMES = frozenset({"all", "beep", "train", "test", "sources", "ext", "default"})
#: How a schedule is laid over the span (generation.schedule): fixed blocks, even chunks, or per sample.
LAYOUTS = ("blocks", "even_chunks", "samples")

#: ``measure(window, sr) -> float``: larger = more of the attribute (reference-free).
WindowMeasure = Callable[[np.ndarray, int], float]
#: ``paired(x, span, y, onset, offset, sr, schedule, fade) -> float``: the clip's change (last part
#: of the span minus the first) measured against its source ``x``; positive = the attribute grew.
PairedMeasure = Callable[..., float]


class AttributeDeclarationError(vocalgrad.VocalGradError, ValueError):
    """An attribute declaration is invalid, or an installed one cannot be loaded (the message names it)."""


@dataclass(frozen=True)
class Attribute:
    """Declaration of one attribute.

    Attributes
    ----------
    name : str
        Config, category and task name (:data:`NAME_PATTERN`), e.g. ``"brightness"``.
    phrase : str
        Prompt phrase: "Does the {phrase} increase or decrease over time?".
    increase_means, decrease_means : str
        What the labels mean for a listener.
    unit : str
        Unit of the value schedule (the manifest's ``value_unit``).
    tiers : mapping
        ``{"low": (start, end), "medium": ..., "high": ...}``: values at the start and the end of an
        *increase* clip (a decrease clip runs from end to start).
    transform : Transform
        A registered transform (:func:`generation.transforms.base.register`): the function and its
        frozen parameter dataclass ``transform.params_type``.
    measure : WindowMeasure
        Reference-free measurement of a window of audio (the oracle compares the span's ends).
    paired : PairedMeasure
        Measured change of a clip against its source (label validity, the label audit).
    effect_unit : str
        Unit of ``paired``.
    min_change : float
        Smallest ``|paired|`` that counts as carrying the label (else ``weak_effect``).
    params : mapping
        The transform's parameters as a recipe table (per-tier tables allowed); checked by
        building ``transform.params_type`` for every tier when the attribute is declared.
    layout : {"blocks", "even_chunks", "samples"}
        Steps of the schedule (benchmark.md §4a) or one value per sample.
    covary : mapping
        Co-varying quantities ``{name: (start, end)}`` (as vibration's LFO rate).
    origin : {"speaker", "environment"}
    min_bandwidth_hz : float or None
        Source requirement: the source's speech must have energy (> -40 dB of the total) above
        this frequency, else its clips are flagged ``band_limited``.
    curve : callable or None
        ``curve(y, sr, source) -> (times, values, label, same_unit)`` for ``vocalgrad show``.
    description : str
        One paragraph: definition and measure (``vocalgrad attributes``, the card).
    sweep : Sweep or None
        Magnitudes of the psychometric sweep (:mod:`generation.attributes.sweep`,
        ``vocalgrad render --sweep``); the paper's tiers must be points of it. None: no sweep.
    paper : bool
        One of the paper's nine (set only by :mod:`generation.attributes.paper`).
    package, builtin : str, bool
        Distribution that provides it and whether it ships with the toolkit (set by the registry).
    """

    name: str
    phrase: str
    increase_means: str
    decrease_means: str
    unit: str
    tiers: Mapping[str, tuple[float, float]]
    transform: Transform
    measure: WindowMeasure
    paired: PairedMeasure
    effect_unit: str
    min_change: float
    params: Mapping[str, Any] = field(default_factory=dict)
    layout: str = "samples"
    covary: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    origin: str = "speaker"
    min_bandwidth_hz: float | None = None
    curve: Callable | None = None
    description: str = ""
    sweep: Sweep | None = None
    paper: bool = False
    package: str = "vocalgrad"
    builtin: bool = True

    def __post_init__(self):
        self.check()

    # ---- checks -----------------------------------------------------------------------------
    def _fail(self, fld: str, message: str) -> AttributeDeclarationError:
        return AttributeDeclarationError(f"attribute {self.name!r}: {fld}: {message}")

    def check(self) -> None:
        """Check every field (raises :class:`AttributeDeclarationError` naming the field)."""
        if not isinstance(self.name, str) or not NAME_PATTERN.match(self.name):
            raise AttributeDeclarationError(f"attribute name {self.name!r}: use 2-32 lower-case letters and digits, "
                                  "starting with a letter (no underscores)")
        if self.name in RESERVED_NAMES:
            raise self._fail("name", f"{self.name!r} is a Hub config or task group name; choose another")
        for fld in ("phrase", "increase_means", "decrease_means", "unit", "effect_unit"):
            if not isinstance(getattr(self, fld), str) or not getattr(self, fld).strip():
                raise self._fail(fld, "must be a non-empty string")
        if set(self.tiers) != set(vocalgrad.TIERS):
            raise self._fail("tiers", f"must give exactly {', '.join(vocalgrad.TIERS)}, got {sorted(self.tiers)}")
        for tier, pair in self.tiers.items():
            if (not isinstance(pair, (tuple, list)) or len(pair) != 2
                    or not all(isinstance(v, (int, float)) and np.isfinite(v) for v in pair)):
                raise self._fail(f"tiers.{tier}", f"must be (start, end) numbers, got {pair!r}")
            if pair[0] == pair[1]:
                raise self._fail(f"tiers.{tier}", f"start and end are equal ({pair[0]}): no change to hear")
        if self.layout not in LAYOUTS:
            raise self._fail("layout", f"must be one of {', '.join(LAYOUTS)}, got {self.layout!r}")
        if not isinstance(self.transform, Transform) or not (isinstance(self.transform.params_type, type)
                                                             and issubclass(self.transform.params_type, Params)):
            raise self._fail("transform", "must be a function registered with generation.transforms.base.register")
        for fld in ("measure", "paired"):
            if not callable(getattr(self, fld)):
                raise self._fail(fld, "must be callable")
        if self.curve is not None and not callable(self.curve):
            raise self._fail("curve", "must be callable or None")
        if not (isinstance(self.min_change, (int, float)) and self.min_change > 0):
            raise self._fail("min_change", f"must be a number > 0, got {self.min_change!r}")
        if self.origin not in ("speaker", "environment"):
            raise self._fail("origin", f"must be speaker or environment, got {self.origin!r}")
        if self.min_bandwidth_hz is not None and not self.min_bandwidth_hz > 0:
            raise self._fail("min_bandwidth_hz", f"must be > 0 Hz or None, got {self.min_bandwidth_hz!r}")
        for q in self.transform.params_type.needs_covary:
            if q not in self.covary:
                raise self._fail(f"covary.{q}", f"missing (transform {self.transform.name!r} reads it)")
        for tier, pair in self.tiers.items():  # the transform's own range and direction rules, as for a recipe
            try:
                self.transform.params_type.check_tier(list(pair), sample_rate=CHECK_SAMPLE_RATE)
            except ParamError as exc:
                raise self._fail(f"tiers.{tier}", exc.message) from None
        self.tier_params()  # builds the parameter dataclass of every tier: range checks run now
        if self.sweep is not None:
            if not isinstance(self.sweep, Sweep):
                raise self._fail("sweep", "must be a generation.attributes.sweep.Sweep or None")
            problems = self.sweep.problems(self, sample_rate=CHECK_SAMPLE_RATE)
            if problems:
                raise self._fail("sweep", "; ".join(problems))

    def tier_params(self, crossfade: int = 0) -> dict[str, Params]:
        """The transform's checked parameters per tier (``crossfade``: the recipe's, for chunked effects)."""
        out = {}
        for tier in vocalgrad.TIERS:
            try:
                out[tier] = self.transform.params_type.from_table(dict(self.params), tier=tier, tiers=vocalgrad.TIERS,
                                                                  engine={"crossfade": crossfade})
            except ParamError as e:
                raise self._fail(f"params.{e.field}", f"{e.message} (transform {self.transform.name!r})") from None
        return out

    # ---- views ------------------------------------------------------------------------------
    @property
    def extension(self) -> bool:
        """Not one of the paper's nine: its own Hub config and the ``vocalgrad_ext`` task group."""
        return not self.paper

    def category(self) -> vocalgrad.Category:
        """The attribute as a :class:`vocalgrad.Category` (the nine: equal to ``vocalgrad.category(name)``)."""
        return vocalgrad.Category(self.name, self.name if not self.paper else vocalgrad.category(self.name).id,
                                  self.phrase, self.increase_means, self.decrease_means, self.origin)

    def summary(self) -> dict:
        """What ``vocalgrad attributes --json`` prints for it."""
        return {
            "name": self.name, "phrase": self.phrase, "increase_means": self.increase_means,
            "decrease_means": self.decrease_means, "unit": self.unit,
            "tiers": {t: list(self.tiers[t]) for t in vocalgrad.TIERS}, "transform": self.transform.name,
            "measure_unit": self.effect_unit, "min_bandwidth_hz": self.min_bandwidth_hz,
            "kind": "built-in" if self.builtin else "plugin", "set": "paper" if self.paper else "extension",
            "package": self.package, "description": self.description,
            "sweep": None if self.sweep is None else {
                "unit": self.sweep.unit, "scale": self.sweep.scale, "magnitudes": list(self.sweep.magnitudes)},
        }


def window_values(y: np.ndarray, sr: int, value: Callable[[np.ndarray, np.ndarray], float], *,
                  source: np.ndarray | None = None, win_sec: float, hop_sec: float = 0.05,
                  floor_rms: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """Frame-by-frame values for an attribute's ``show`` curve.

    ``value(seg, ref)`` on windows of ``win_sec`` every ``hop_sec``: ``ref`` is the source's window
    (or ``seg`` itself without a source); NaN where ``ref`` has an RMS of at most ``floor_rms``.

    Returns
    -------
    (times, values)
        Window centres (s) and one value per window.
    """
    win, hop = int(win_sec * sr), int(hop_sec * sr)
    n = y.size if source is None else min(y.size, source.size)
    starts = np.arange(0, max(1, n - win + 1), hop)
    vals = []
    for s in starts:
        seg = y[s:s + win]
        ref = seg if source is None else source[s:s + win]
        vals.append(value(seg, ref) if np.sqrt(np.mean(ref ** 2)) > floor_rms else np.nan)
    return (starts + win / 2) / sr, np.array(vals)
