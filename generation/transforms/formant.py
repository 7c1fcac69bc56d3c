"""Formant shift (extension attribute): the spectral envelope scaled in frequency, pitch kept.

Shortening the vocal tract raises every formant by the same ratio while the voice's pitch (the
harmonic spacing) stays. Per frame: the log-magnitude spectrum is smoothed by liftering its
cepstrum below ``lifter_ms`` (:func:`._framewise.cepstral_envelope`: the envelope ``E(f)``, without
the harmonics), and the spectrum is multiplied by ``E(f / scale) / E(f)``: a feature of the envelope
at ``f`` moves to ``scale * f``. The harmonics and the phases are untouched, so the pitch does not
move; the frame keeps its energy. The schedule's value is the scale (``> 1``: formants up, a
shorter tract).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._framewise import FrameParams, cepstral_envelope, framewise
from .base import ParamError, Result, ValueRange, per_sample, register

__all__ = ["FormantParams", "formant_shift", "envelope_ratio"]


@dataclass(frozen=True, kw_only=True)
class FormantParams(FrameParams):
    """Envelope smoothing and the band the envelope is moved in.

    Attributes
    ----------
    lifter_ms : float
        Cepstral lifter cut-off (ms), 0.2-5: below the pitch period of a voice (2.5-10 ms).
    max_hz : float
        The envelope is moved below this frequency (Hz, > 1000) and left as it is above.
    """

    n_fft: int = 2048
    lifter_ms: float = 1.5
    max_hz: float = 8000.0

    value_name = "envelope scale"

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        return ValueRange(0.5, 2.0)

    def check(self) -> None:
        super().check()
        if not 0.2 <= self.lifter_ms <= 5.0:
            raise ParamError("lifter_ms", f"must be in [0.2, 5] ms, got {self.lifter_ms}")
        if not self.max_hz > 1000.0:
            raise ParamError("max_hz", f"must be > 1000 Hz, got {self.max_hz}")


def envelope_ratio(specs: np.ndarray, freqs: np.ndarray, scales: np.ndarray, params: FormantParams,
                   sr: int) -> np.ndarray:
    """Gains ``E(f / scale) / E(f)`` of frames ``(frames, bins)`` (1 above ``max_hz`` and where ``scale == 1``)."""
    specs = np.atleast_2d(specs)
    scales = np.broadcast_to(np.asarray(scales, dtype=np.float64), (specs.shape[0],))
    n_fft = 2 * (freqs.size - 1)
    log_env = cepstral_envelope(np.log(np.abs(specs) + 1e-9), n_fft, sr, params.lifter_ms / 1000.0)
    # linear interpolation of each frame's envelope at f / scale (bins are evenly spaced)
    pos = np.clip(np.multiply.outer(1.0 / scales, np.arange(freqs.size, dtype=np.float64)), 0.0, freqs.size - 1.0)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, freqs.size - 1)
    frac = pos - lo
    moved = (np.take_along_axis(log_env, lo, axis=1) * (1.0 - frac)
             + np.take_along_axis(log_env, hi, axis=1) * frac)
    fade = np.clip((params.max_hz * 1.25 - freqs) / (params.max_hz * 0.25), 0.0, 1.0)  # back to 1 above max_hz
    gains = np.exp((moved - log_env) * fade)
    gains[scales == 1.0] = 1.0
    return gains


@register("formant_shift", FormantParams, np.float64)
def formant_shift(x, sr, schedule, params: FormantParams, *, cache=None) -> Result:
    """Formants: frame-wise envelope scaling by the schedule's ratio, pitch kept, float64 out."""
    values = per_sample(schedule, len(x))
    y = framewise(x, values, params.n_fft, lambda specs, freqs, v: envelope_ratio(specs, freqs, v, params, sr), sr)
    return Result(y, schedule.span.onset, schedule.span.offset)
