"""A transformers audio encoder from a local folder (``--encoder PATH``): what ``AutoModel`` and
``AutoFeatureExtractor`` load (Whisper's encoder, wav2vec2, HuBERT, WavLM, ...).

The clip goes through the folder's feature extractor at its ``sampling_rate``; the model runs
with ``output_hidden_states=True`` (an encoder-decoder such as Whisper: its encoder alone, via
``get_encoder()``). Layer ``l`` is ``hidden_states[l]``, the output of encoder layer ``l``
(``hidden_states[0]``, the embeddings, is not a layer here). The speech span: a feature extractor
that pads (Whisper's 30-s window) gives input features longer than the clip; only the output
frames covering the clip's own input frames are pooled (the fraction ``clip frames / input
frames`` of the output, rounded up).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .base import Encoder

__all__ = ["TransformersFolder", "WEIGHT_FILES"]

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


class TransformersFolder(Encoder):
    """An encoder folder saved by transformers (``save_pretrained``)."""

    distribution = "transformers"
    install = "pip install 'vocalgrad[hf]'"

    def __init__(self, path) -> None:
        super().__init__()
        self.path = Path(path).expanduser()
        if not (self.path / "config.json").is_file():
            raise FileNotFoundError(f"--encoder {path}: no config.json; pass a built-in encoder name or a folder "
                                    f"written by transformers' save_pretrained")
        self.name = str(path)
        import transformers

        cfg = transformers.AutoConfig.from_pretrained(str(self.path))
        enc = getattr(cfg, "encoder_layers", None) if getattr(cfg, "is_encoder_decoder", False) else None
        n = enc or getattr(cfg, "num_hidden_layers", None)
        if not n:
            raise ValueError(f"--encoder {path}: the config ({type(cfg).__name__}) names no number of layers")
        self.layer_names = tuple(f"layer{i}" for i in range(1, int(n) + 1))
        self.fe = transformers.AutoFeatureExtractor.from_pretrained(str(self.path))
        self.sample_rate = int(self.fe.sampling_rate)

    def weights_files(self) -> list[Path]:
        found = [self.path / f for f in WEIGHT_FILES if (self.path / f).is_file()]
        shards = sorted(self.path.glob("model-*-of-*.safetensors"))
        if not (found or shards):
            raise FileNotFoundError(f"--encoder {self.path}: no {' or '.join(WEIGHT_FILES)} in the folder")
        return found + shards

    def _load(self) -> None:
        import transformers

        model = transformers.AutoModel.from_pretrained(str(self.path))
        if getattr(model.config, "is_encoder_decoder", False) and hasattr(model, "get_encoder"):
            model = model.get_encoder()
        self.model = model.to(self.device).eval()

    def sequences(self, y: np.ndarray, layers: list[int]) -> dict[int, np.ndarray]:
        import torch

        inputs = self.fe(np.asarray(y, dtype=np.float32), sampling_rate=self.sample_rate, return_tensors="pt")
        key = "input_features" if "input_features" in inputs else "input_values"
        x = inputs[key].to(self.device)
        with torch.inference_mode():
            hs = self.model(x, output_hidden_states=True).hidden_states
        if len(hs) != self.n_layers + 1:
            raise RuntimeError(f"{self.name}: expected {self.n_layers + 1} hidden states, got {len(hs)}")
        t_out = hs[0].shape[1]
        span = t_out
        if key == "input_features":
            hop = int(getattr(self.fe, "hop_length", 160))
            t_in = x.shape[-1]
            span = min(t_out, max(1, math.ceil(t_out * min(t_in, len(y) // hop + 1) / t_in)))
        return {layer: hs[layer][0, :span].float().cpu().numpy() for layer in layers}
