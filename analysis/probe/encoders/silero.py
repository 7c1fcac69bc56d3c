"""Silero VAD (``silero-vad``): a voice-activity detector, weights ``silero_vad/data/silero_vad.jit``
(what ``load_silero_vad()`` loads), one step per 512 samples (32 ms) at 16 kHz.

The TorchScript module runs a chunk at a time and returns only the speech probability, so its
16-kHz network is written here in torch (:class:`SileroNet`, after the package's reference
definition ``silero_vad/tinygrad_model.py``) and given the TorchScript module's own weights; a
test checks that its probabilities equal the TorchScript model's. (The package's
``silero_vad_16k.safetensors`` holds other weights than the TorchScript model: not used.) Each step sees
its 512 new samples with the 64 before them (zeros at the start), as the package streams audio.
Layers 1-4 are the four conv blocks (averaged over the step's frames), layer 5 the LSTM cell's
hidden state (128 each).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .base import Encoder, import_package, package_file

__all__ = ["CHUNK", "CONTEXT", "JIT_NAMES", "Silero", "SileroNet", "chunk_clip"]

CHUNK = 512
CONTEXT = 64
#: :class:`SileroNet` parameter -> the TorchScript 16-kHz model's (``._model``) parameter or buffer.
JIT_NAMES = {"stft_conv.weight": "stft.forward_basis_buffer",
             **{f"conv{i + 1}.{w}": f"encoder.{i}.reparam_conv.{w}" for i in range(4) for w in ("weight", "bias")},
             **{f"lstm_cell.{w}": f"decoder.rnn.{w}" for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")},
             **{f"final_conv.{w}": f"decoder.decoder.2.{w}" for w in ("weight", "bias")}}


def SileroNet():
    """The 16-kHz Silero VAD network as a torch module (the package's reference architecture)."""
    import torch
    from torch import nn

    class _Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cutoff = 129
            self.stft_conv = nn.Conv1d(1, 258, kernel_size=256, stride=128, padding=0, bias=False)
            self.conv1 = nn.Conv1d(129, 128, 3, 1, 1)
            self.conv2 = nn.Conv1d(128, 64, 3, 2, 1)
            self.conv3 = nn.Conv1d(64, 64, 3, 2, 1)
            self.conv4 = nn.Conv1d(64, 128, 3, 1, 1)
            self.lstm_cell = nn.LSTMCell(128, 128)
            self.final_conv = nn.Conv1d(128, 1, 1)

        def steps(self, chunks: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
            """``chunks`` (steps, 64 + 512): per-layer (steps, dim) and the speech probability (steps,)."""
            x = nn.functional.pad(chunks, (0, 64), mode="reflect")[:, None]
            x = self.stft_conv(x)
            x = torch.sqrt(x[:, :self.cutoff] ** 2 + x[:, self.cutoff:] ** 2)
            layers = []
            for conv in (self.conv1, self.conv2, self.conv3, self.conv4):
                x = torch.relu(conv(x))
                layers.append(x.mean(dim=-1))
            x = x.squeeze(-1)                                      # (steps, 128): one frame per step
            h = c = torch.zeros(1, 128, dtype=x.dtype, device=x.device)
            hs = []
            for t in range(x.shape[0]):                            # the state runs through the steps
                h, c = self.lstm_cell(x[t:t + 1], (h, c))
                hs.append(h)
            hidden = torch.cat(hs)
            layers.append(hidden)
            prob = torch.sigmoid(self.final_conv(torch.relu(hidden)[:, :, None])).squeeze(-1).mean(dim=1)
            return layers, prob

    return _Net()


def chunk_clip(y: np.ndarray):
    """A 16-kHz clip as the package streams it: (steps, 576) tensor; the last step zero-padded."""
    import torch

    y = torch.as_tensor(np.asarray(y, dtype=np.float32))
    n = -(-len(y) // CHUNK)
    y = torch.nn.functional.pad(y, (CONTEXT, n * CHUNK - len(y)))
    return torch.stack([y[i * CHUNK:i * CHUNK + CONTEXT + CHUNK] for i in range(n)])


class Silero(Encoder):
    """``silero-vad``."""

    name = "silero-vad"
    distribution = "silero-vad"
    install = "pip install silero-vad==6.2.3"
    sample_rate = 16000
    frame_rate = 16000 / CHUNK
    layer_names = ("conv1", "conv2", "conv3", "conv4", "lstm")

    def _package(self):
        import torch

        threads = torch.get_num_threads()
        try:
            return import_package("silero_vad.data", distribution=self.distribution, install=self.install)
        finally:
            torch.set_num_threads(threads)        # importing silero_vad sets torch to one thread

    def weights_files(self) -> list[Path]:
        return [package_file(self._package(), "silero_vad.jit")]

    def _load(self) -> None:
        import torch

        jit = torch.jit.load(str(self.weights_files()[0]), map_location="cpu")._model
        tensors = {**dict(jit.named_parameters()), **dict(jit.named_buffers())}
        net = SileroNet()
        net.load_state_dict({k: tensors[v].detach() for k, v in JIT_NAMES.items()}, strict=True)
        self.net = net.to(self.device).eval()

    def sequences(self, y: np.ndarray, layers: list[int]) -> dict[int, np.ndarray]:
        import torch

        with torch.inference_mode():
            seqs, _ = self.net.steps(chunk_clip(y).to(self.device))
        return {layer: seqs[layer - 1].cpu().numpy() for layer in layers}
