"""The paper's nine attributes, declared through the same interface as any other.

Each is built from the tables that define the benchmark, so nothing is written twice: the words
from :data:`vocalgrad.CATEGORIES` (the one vocabulary of the nine), the unit, tiers, transform and
its parameters from the reference recipe ``faithful-v1`` (:mod:`generation.recipe`), the
reference-free measure from :data:`generation.measures.MEASURES` and the paired measure, its unit
and minimum from :mod:`generation.label_validity`. A test checks that each declaration equals
those tables.
"""

from __future__ import annotations

import vocalgrad

from .. import label_validity as lv
from ..measures import MEASURES
from ..recipe import CATEGORY_KEYS, DEFAULT_RECIPE, load_recipe
from ..transforms import TRANSFORMS
from .base import Attribute
from .sweep import PAPER_SWEEPS

__all__ = ["declare"]

#: Definition and measure of each of the nine, as `vocalgrad attributes` prints them.
DESCRIPTIONS = {
    "speed": "time-stretch (phase vocoder) of the speech span; measured as the realised rate per step",
    "pitch": "pitch shift by resampling; measured as the log-spectrum shift against the source (semitones)",
    "volume": "gain in dB; measured as the level change against the source",
    "distortion": "sample-and-hold down to a lower effective rate; measured as the residual re the source",
    "roughness": "bit-depth reduction; measured as the residual re the source",
    "noise": "added white noise; measured as the residual RMS re the speech",
    "echo": "Freeverb-style reverb with a growing wet mix; measured as the residual re the source",
    "clarity": "STFT low-pass with a moving cut-off; measured as the energy above the cut-off kept",
    "vibration": "amplitude LFO whose depth and rate grow; measured as the residual re the source",
}


def _paired(name: str):
    def paired(x, span, y, onset, offset, sr, schedule, fade=240):
        return lv.measure_effect(name, x, span, y, onset, offset, sr, schedule, fade)

    paired.__name__ = f"paired_{name}"
    return paired


def declare() -> tuple[Attribute, ...]:
    """The nine declarations, in :data:`vocalgrad.CATEGORY_NAMES` order."""
    recipe = load_recipe(DEFAULT_RECIPE)
    out = []
    for c in vocalgrad.CATEGORIES:
        crec = recipe.category(c.name)
        out.append(Attribute(
            name=c.name, phrase=c.attribute, increase_means=c.increase_means, decrease_means=c.decrease_means,
            unit=crec.unit, tiers=dict(crec.tiers), transform=TRANSFORMS[crec.transform],
            measure=MEASURES[c.name], paired=_paired(c.name), effect_unit=lv.EFFECT_UNITS[c.name],
            min_change=lv.MIN_CHANGE[c.name],
            params={k: v for k, v in crec.params.items() if k not in CATEGORY_KEYS},
            layout=crec.layout, covary={k: tuple(v) for k, v in crec.params.get("covary", {}).items()},
            origin=c.origin, description=DESCRIPTIONS[c.name], sweep=PAPER_SWEEPS[c.name], paper=True,
        ))
    return tuple(out)
