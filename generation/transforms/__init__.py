"""The nine VocalGrad transforms, one registry.

``TRANSFORMS[name]`` maps a recipe's ``transform`` field to a function
``(x, sr, schedule, params, *, cache=None) -> Result`` (see :mod:`.base`).

========== ============== =============================================
category   transform      module
========== ============== =============================================
volume     gain           :mod:`.envelope`
noise      white_noise    :mod:`.envelope`
vibration  tremolo        :mod:`.envelope`
echo       reverb         :mod:`.reverb`
distortion sample_hold    :mod:`.chunked`
roughness  quantize       :mod:`.chunked`
clarity    lowpass        :mod:`.fast`
speed      time_stretch   :mod:`.fast`
pitch      pitch_shift    :mod:`.fast`
========== ============== =============================================
"""

from . import chunked, envelope, fast, reverb  # noqa: F401  (registration)
from .base import TRANSFORMS, Result

__all__ = ["TRANSFORMS", "Result", "get_transform"]


def get_transform(name: str):
    """Transform function registered under ``name`` (ValueError listing the known names)."""
    try:
        return TRANSFORMS[name]
    except KeyError:
        raise ValueError(f"unknown transform {name!r}; known: {', '.join(sorted(TRANSFORMS))}") from None
