"""Resemblyzer's speaker encoder (``resemblyzer``, GE2E): a 3-layer LSTM on a 40-mel spectrogram,
weights ``resemblyzer/pretrained.pt``, 10-ms frames at 16 kHz.

The package's mel front end (``wav_to_mel_spectrogram``) on the whole clip, without its volume
normalisation and silence trimming (they would erase the volume change and move the time axis).
Layers 1-3 are the LSTM's layers (256 each; the packaged 3-layer LSTM is split into three
single-layer LSTMs with the same weights), layer 4 the speaker embedding computed at every frame
(ReLU of the linear projection, L2-normalised: what ``VoiceEncoder.forward`` returns for the
last frame).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .base import Encoder, import_package, package_file

__all__ = ["Resemblyzer"]


class Resemblyzer(Encoder):
    """``resemblyzer``."""

    name = "resemblyzer"
    distribution = "resemblyzer"
    install = "pip install --no-deps resemblyzer==0.1.4 && pip install webrtcvad-wheels"
    sample_rate = 16000
    frame_rate = 100.0
    layer_names = ("lstm1", "lstm2", "lstm3", "speaker embedding")

    def _package(self):
        return import_package("resemblyzer", distribution=self.distribution, install=self.install)

    def weights_files(self) -> list[Path]:
        return [package_file(self._package(), "pretrained.pt")]

    def _load(self) -> None:
        import torch

        pkg = self._package()
        self.encoder = pkg.VoiceEncoder(device="cpu", verbose=False, weights_fpath=self.weights_files()[0]).eval()
        lstm = self.encoder.lstm
        self.lstms = []
        for k in range(lstm.num_layers):
            one = torch.nn.LSTM(lstm.input_size if k == 0 else lstm.hidden_size, lstm.hidden_size, 1, batch_first=True)
            one.load_state_dict({f"{n}_l0": getattr(lstm, f"{n}_l{k}")
                                 for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")})
            self.lstms.append(one.to(self.device).eval())
        self.encoder.to(self.device)
        self._mel = pkg.wav_to_mel_spectrogram

    def mel(self, y: np.ndarray) -> np.ndarray:
        """The package's encoder input for a 16-kHz clip: (frames, 40)."""
        return self._mel(np.asarray(y, dtype=np.float32))

    def sequences(self, y: np.ndarray, layers: list[int]) -> dict[int, np.ndarray]:
        import torch

        out: dict[int, np.ndarray] = {}
        with torch.inference_mode():
            x = torch.as_tensor(self.mel(y), device=self.device)[None]
            for k, lstm in enumerate(self.lstms, start=1):
                if k > max(layers):
                    break
                x, _ = lstm(x)
                if k in layers:
                    out[k] = x[0].cpu().numpy()
            if 4 in layers:
                e = self.encoder.relu(self.encoder.linear(x[0]))
                out[4] = (e / torch.norm(e, dim=1, keepdim=True).clamp_min(1e-12)).cpu().numpy()
        return out
