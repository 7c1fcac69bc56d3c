"""The VocalGrad transforms, one effect per module, one registry.

``TRANSFORMS[name]`` maps a recipe's ``transform`` field to a :class:`~.base.Transform`: a function
``(x, sr, schedule, params, *, cache=None) -> Result`` that carries its ``name``, its frozen
parameter class ``params_type`` (checked when the recipe loads) and the dtype of ``Result.y``
(``output_dtype``). See :mod:`.base` for the contract and the shared chunk/stitch machinery and
:mod:`._stft` for the batched STFT helpers of speed, pitch and clarity.

========== ============== ==================== ================== ============
category   transform      module               parameters         ``y`` dtype
========== ============== ==================== ================== ============
volume     gain           :mod:`.volume`       GainParams         float64
speed      time_stretch   :mod:`.speed`        TimeStretchParams  float32
pitch      pitch_shift    :mod:`.pitch`        PitchShiftParams   float32
noise      white_noise    :mod:`.noise`        NoiseParams        float64
distortion sample_hold    :mod:`.distortion`   SampleHoldParams   float32
roughness  quantize       :mod:`.roughness`    QuantizeParams     float32
clarity    lowpass        :mod:`.clarity`      LowpassParams      float32
vibration  tremolo        :mod:`.vibration`    TremoloParams      float32
echo       reverb         :mod:`.echo`         ReverbParams       float64
========== ============== ==================== ================== ============

The extension attributes (not the paper's nine; :mod:`generation.attributes`) add two, sharing the
frame-wise filter of :mod:`._framewise`:

========== ============== ==================== ================== ============
attribute  transform      module               parameters         ``y`` dtype
========== ============== ==================== ================== ============
brightness spectral_tilt  :mod:`.tilt`         TiltParams         float64
formants   formant_shift  :mod:`.formant`      FormantParams      float64
========== ============== ==================== ================== ============

The category -> transform mapping is the recipe's (``generation/recipes/*.toml``).
"""

from . import clarity, distortion, echo, formant, noise, pitch, roughness, speed, tilt, vibration, volume  # noqa: F401
from .base import TRANSFORMS, ClipKey, ParamError, Params, Result, Transform

__all__ = ["TRANSFORMS", "Transform", "Params", "ParamError", "ClipKey", "Result", "get_transform"]


def get_transform(name: str) -> Transform:
    """Transform registered under ``name`` (ValueError listing the known names)."""
    try:
        return TRANSFORMS[name]
    except KeyError:
        raise ValueError(f"unknown transform {name!r}; known: {', '.join(sorted(TRANSFORMS))}") from None
