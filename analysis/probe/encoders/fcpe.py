"""FCPE (``torchfcpe``): a conformer pitch estimator on a 128-mel spectrogram, weights
``torchfcpe/assets/fcpe_c_v001.pt`` (the package's bundled model), 10-ms frames at 16 kHz.

The package's own mel front end (``Wav2MelModule``) and network (``CFNaiveMelPE``), run layer by
layer: layer 1 is the input stack (two 1-D convs, 512 channels), layers 2-7 the six conformer
layers (512 each), layer 8 the output: layer norm, projection and sigmoid, the 360-bin pitch
latent the package decodes into f0; layer 9 that f0 (:mod:`.f0`), decoded as
``InferCFNaiveMelPE.infer`` does by default: ``local_argmax`` at threshold 0.006, unvoiced below
the checkpoint's ``f0_min``.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np

from .base import import_package, package_file
from .f0 import F0_LAYER, PitchTracker, log2_f0

__all__ = ["Fcpe", "THRESHOLD"]

#: ``InferCFNaiveMelPE.infer``'s default threshold on the latent's peak (its default decoder:
#: ``local_argmax``, i.e. ``latent2cents_local_decoder``).
THRESHOLD = 0.006


class Fcpe(PitchTracker):
    """``fcpe``."""

    name = "fcpe"
    distribution = "torchfcpe"
    install = "pip install --no-deps torchfcpe==0.0.4 && pip install einops local-attention"
    sample_rate = 16000
    frame_rate = 100.0
    layer_names = ("input stack",) + tuple(f"conformer{i}" for i in range(1, 7)) + ("pitch latent", F0_LAYER)

    def _package(self):
        return import_package("torchfcpe", distribution=self.distribution, install=self.install)

    def weights_files(self) -> list[Path]:
        return [package_file(self._package(), "assets", "fcpe_c_v001.pt")]

    def _load(self) -> None:
        import torch

        fcpe = self._package()
        # the package's own loader of its bundled checkpoint (dropout off, as it sets); it prints notes
        with contextlib.redirect_stdout(io.StringIO()):
            infer = fcpe.spawn_infer_model_from_pt(str(self.weights_files()[0]), "cpu", bundled_model=True)
        if int(infer.get_model_sr()) != self.sample_rate:
            raise RuntimeError(f"fcpe: the checkpoint's mel rate is {infer.get_model_sr()}, expected {self.sample_rate}")
        self.infer = infer.to(self.device).eval()
        n = len(self.infer.model.net.encoder_layers)
        if n + 3 != self.n_layers:
            raise RuntimeError(f"fcpe: expected 6 conformer layers, the checkpoint has {n}")
        self._torch = torch

    def sequences(self, y: np.ndarray, layers: list[int]) -> dict[int, np.ndarray]:
        torch = self._torch
        net = self.infer.model
        out: dict[int, np.ndarray] = {}
        with torch.inference_mode():
            wav = torch.as_tensor(np.asarray(y, dtype=np.float32), device=self.device)[None, :, None]
            with contextlib.redirect_stdout(io.StringIO()):   # it prints a note for samples beyond +-1
                mel = self.infer.wav2mel(wav, self.sample_rate)               # (1, frames, 128), audio unchanged
            x = net.input_stack(mel.transpose(-1, -2)).transpose(-1, -2)
            if 1 in layers:
                out[1] = x[0].cpu().numpy()
            for i, layer in enumerate(net.net.encoder_layers, start=2):
                if i > max(layers):
                    break
                x = layer(x, None)
                if i in layers:
                    out[i] = x[0].cpu().numpy()
            if max(layers) >= self.f0_layer - 1:
                latent = torch.sigmoid(net.output_proj(net.norm(x)))                # (1, frames, 360)
                if self.f0_layer - 1 in layers:
                    out[self.f0_layer - 1] = latent[0].cpu().numpy()
                if self.f0_layer in layers:
                    out[self.f0_layer] = self.decode(latent)
        return out

    def decoder_settings(self) -> dict:
        return {"decoder": "local_argmax", "threshold": THRESHOLD}

    def decode(self, latent) -> np.ndarray:
        """Decoded f0 (:mod:`.f0`) of a ``(1, frames, 360)`` latent, as ``InferCFNaiveMelPE.infer``."""
        net = self.infer.model
        f0 = net.cent_to_f0(net.latent2cents_local_decoder(latent, threshold=THRESHOLD))[0, :, 0].cpu().numpy()
        return log2_f0(f0, f0 >= float(self.infer.args_dict["model"]["f0_min"]))
