"""PESTO (``pesto-pitch``): a self-supervised pitch estimator on a harmonic CQT, weights
``pesto/weights/mir-1k_g7.ckpt`` (the package's default model), 10-ms frames at 16 kHz.

Each frame's CQT column goes through the package's own front end (``Preprocessor``, the crop the
model applies) and its ``Resnet1d``, run step by step here: layer 1 is the first conv, then each
pre-filter layer (residual sum included), each 1x1 conv block, and last the model's pitch
activations (softmax over 384 bins, rolled by the checkpoint's shift as the package does), then
the decoded f0 (:mod:`.f0`): the activations reduced ``pesto.predict``'s default way (``"alwa"``),
voiced where its confidence classifier gives >= :data:`CONFIDENCE`. Conv layers are averaged
over their channels, keeping the frequency axis (one value per CQT bin).
"""

from __future__ import annotations

from math import log
from pathlib import Path

import numpy as np

from .base import import_package, package_file
from .f0 import F0_LAYER, PitchTracker, log2_f0

__all__ = ["Pesto", "CHECKPOINT", "CONFIDENCE", "REDUCTION", "STEP_MS"]

CHECKPOINT = "mir-1k_g7"
#: Hop between CQT frames in milliseconds (the package's default).
STEP_MS = 10.0
#: Reduction of the activations to a pitch (``pesto.predict``'s default).
REDUCTION = "alwa"
#: Voicing threshold on PESTO's confidence (a sigmoid, "whether a frame is voiced"; the package names none).
CONFIDENCE = 0.5


class Pesto(PitchTracker):
    """``pesto``."""

    name = "pesto"
    distribution = "pesto-pitch"
    install = "pip install --no-deps pesto-pitch==2.0.1 && pip install omegaconf"
    sample_rate = 16000
    frame_rate = 1000 / STEP_MS
    layer_names = ("conv1", "prefilter1", "prefilter2", "conv1x1-1", "conv1x1-2", "conv1x1-3", "conv1x1-4",
                   "pitch activations", F0_LAYER)

    def _package(self):
        return import_package("pesto.loader", distribution=self.distribution, install=self.install)

    def weights_files(self) -> list[Path]:
        return [package_file(self._package(), "weights", f"{CHECKPOINT}.ckpt")]

    def _load(self) -> None:
        loader = self._package()
        # load_model reads the packaged checkpoint (torch.load) and builds the PESTO module from it
        self.model = loader.load_model(str(self.weights_files()[0]), STEP_MS,
                                       sampling_rate=self.sample_rate).to(self.device).eval()
        n_pre = self.model.encoder.n_prefilt_layers - 1
        if n_pre != 2:
            raise RuntimeError(f"pesto {CHECKPOINT}: expected 2 pre-filter layers, the checkpoint has {n_pre}")

    def sequences(self, y: np.ndarray, layers: list[int]) -> dict[int, np.ndarray]:
        import torch

        m, enc = self.model, self.model.encoder
        out: dict[int, np.ndarray] = {}

        def keep(i, x):
            if i in layers:
                out[i] = x.mean(dim=1).cpu().numpy()                     # (frames, bins)

        with torch.inference_mode():
            audio = torch.as_tensor(np.asarray(y, dtype=np.float32), device=self.device)[None]
            x = m.preprocessor(audio, sr=self.sample_rate).flatten(0, 1)  # (frames, 1, bins), dB
            x = x * (log(10) / 10.0)                                     # as PESTO.forward scales it in place
            energy = x.exp().squeeze(1)                                  # its confidence classifier's input
            x = enc.conv1(enc.layernorm(m.crop_cqt(x)))
            keep(1, x)
            for p in range(enc.n_prefilt_layers - 1):
                x = enc.prefilt_layers[p](x) + x if enc.residual else enc.prefilt_layers[p](x)
                keep(2 + p, x)
            first = 1 + enc.n_prefilt_layers
            for b in range(4):
                x = enc.conv_layers[3 * b:3 * b + 3](x)
                keep(first + b, x)
            if first + 4 in layers or self.f0_layer in layers:
                act = enc.final_norm(enc.fc(enc.flatten(x)))
                act = act.roll(-round(m.shift.cpu().item() * m.bins_per_semitone), -1)
                if first + 4 in layers:
                    out[first + 4] = act.cpu().numpy()
                if self.f0_layer in layers:
                    out[self.f0_layer] = self.decode(act, energy)
        return out

    def decoder_settings(self) -> dict:
        return {"reduction": REDUCTION, "confidence": CONFIDENCE, "step_ms": STEP_MS}

    def decode(self, act, energy) -> np.ndarray:
        """Decoded f0 (:mod:`.f0`) from the activations and the CQT energy of one clip's frames."""
        from pesto.utils import reduce_activations

        midi = reduce_activations(act, reduction=REDUCTION).cpu().numpy()
        voiced = self.model.confidence(energy).cpu().numpy() >= CONFIDENCE
        return log2_f0(440.0 * 2.0 ** ((midi - 69.0) / 12.0), voiced)
