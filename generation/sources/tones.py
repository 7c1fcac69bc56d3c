"""``tones``: ten synthetic tone sources of 4 s (pure and harmonic), for tests and the beep ablation.

Items carry a :class:`ToneSpec` as their audio: picklable, synthesised on ``read()``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import SourceItem, SourceOptions, SourceSpecError, register_source

__all__ = ["TONE_FREQS", "ToneSpec"]


@dataclass(frozen=True)
class ToneSpec:
    """A synthetic tone source: silence, a tone with 10 ms raised-cosine ramps, silence.

    Parameters
    ----------
    f0 : float
        Fundamental frequency in Hz.
    harmonics : int
        Number of harmonics (1 = pure sine); harmonic k has amplitude 1/k.
    duration : float
        Total duration in seconds.
    lead, tail : float
        Silence before and after the tone, seconds.
    peak : float
        Peak amplitude of the tone.
    sr : int
        Sample rate in Hz.
    """

    f0: float
    harmonics: int = 1
    duration: float = 4.0
    lead: float = 0.3
    tail: float = 0.3
    peak: float = 0.3
    sr: int = 48000

    def read(self) -> tuple[np.ndarray, int]:
        n = int(round(self.duration * self.sr))
        a, b = int(round(self.lead * self.sr)), n - int(round(self.tail * self.sr))
        t = np.arange(b - a) / self.sr
        tone = sum(np.sin(2 * np.pi * k * self.f0 * t) / k for k in range(1, self.harmonics + 1))
        tone *= self.peak / np.max(np.abs(tone))
        ramp = int(0.01 * self.sr)
        env = np.ones(b - a)
        env[:ramp] = 0.5 - 0.5 * np.cos(np.pi * np.arange(ramp) / ramp)
        env[-ramp:] = env[:ramp][::-1]
        y = np.zeros(n)
        y[a:b] = tone * env
        return y.astype(np.float32), self.sr


#: Beep-ablation tone frequencies (Hz): ten pure tones spaced a whole tone apart from 220 Hz.
TONE_FREQS = tuple(round(220.0 * 2 ** (k / 6), 1) for k in range(10))


@register_source("tones")
def _tones(arg: str, options: SourceOptions) -> list[SourceItem]:
    """Ten 4-s tones: pure sines for the beep split, alternating pure/harmonic otherwise."""
    if arg:
        raise SourceSpecError(f"'tones' takes no argument, got {arg!r}")
    items = []
    for k, f0 in enumerate(TONE_FREQS):
        harmonic = options.split != "beep" and k % 2 == 1
        spec = ToneSpec(f0=f0 if not harmonic else f0 / 2, harmonics=8 if harmonic else 1)
        kind = "harm" if harmonic else "pure"
        sid = f"tone{k:02d}_{kind}_{int(round(spec.f0))}hz"
        items.append(SourceItem(sid, spec, speaker_id=f"tone_{kind}", sentence_id=f"{k:02d}",
                                extra={"selection": "tones"}))
    return items
