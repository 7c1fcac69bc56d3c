"""Model-side probe features (torch): ``pre_lm``, ``lm_audio`` and ``lm_text``.

The inputs are built by the model layer that ``vocalgrad-hf`` uses
(:meth:`harness_tasks.models.families.LoadedModel.batch`): same chat template, same message
order (text then audio unless ``audio_first``), same resampling, left padding, same dtype. One
forward pass (:meth:`~harness_tasks.models.families.LoadedModel.hidden_states`) gives ``hidden_states[0]`` (the LM's input embeddings, in which
the processor's audio placeholder positions hold the audio encoder/projector output) and
``hidden_states[l]`` for every LM layer ``l`` = 1..N.

* ``pre_lm``: ``hidden_states[0]`` at the audio positions (audio features entering the LM);
* ``lm_audio`` (per layer): ``hidden_states[l]`` at the audio positions;
* ``lm_text`` (per layer): ``hidden_states[l]`` at the last input position (the one that
  predicts the first answer token; with left padding it is the last column for every row).

Audio positions are the layer's :meth:`~harness_tasks.models.families.LoadedModel.audio_positions`
(``input_ids == audio_token_id``, per row), so the shift that left padding introduces is
accounted for. Sequences are mean-pooled into 16 segments on the device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .pooling import N_SEGMENTS, segment_bounds

__all__ = ["MODEL_STAGES", "ModelFeatures", "audio_token_id", "num_lm_layers", "pooling_matrix"]

#: Stages computed from the model (the order of the pipeline).
MODEL_STAGES: tuple[str, ...] = ("pre_lm", "lm_audio", "lm_text")
_LAYERED = ("lm_audio", "lm_text")


def num_lm_layers(config: Any) -> int:
    """Number of decoder layers of the language model of a (multimodal) config."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    n = getattr(text, "num_hidden_layers", None)
    if not n:
        raise ValueError(f"cannot read num_hidden_layers from the {type(config).__name__} text config")
    return int(n)


def audio_token_id(model: Any, processor: Any) -> int:
    """Token id of the audio placeholder that the processor expands into one token per frame
    (the family's rule, :meth:`harness_tasks.models.families.Family.audio_token_id`).

    Raises
    ------
    ValueError
        If the config and processor name none.
    """
    from harness_tasks.models.families import detect_family

    try:
        return detect_family(model.config).audio_token_id(model, processor)
    except ValueError as exc:
        raise ValueError(f"{exc}; the probe needs it to locate the audio positions") from None


def pooling_matrix(mask, n_segments: int = N_SEGMENTS):
    """Per-row averaging weights over the ``True`` positions of ``mask``.

    Parameters
    ----------
    mask : torch.BoolTensor, shape (batch, tokens)
        Audio positions of each row (any number per row, at least one).

    Returns
    -------
    torch.Tensor, shape (batch, n_segments, tokens)
        float32 on ``mask``'s device; ``P[b] @ h[b]`` gives the ``n_segments`` segment means
        of ``h[b]`` over the row's positions, exactly as
        :func:`~analysis.probe.pooling.pool_segments` of the gathered sequence.
    """
    import torch

    b, t = mask.shape
    p = torch.zeros((b, n_segments, t), dtype=torch.float32)
    for row, m in enumerate(mask.cpu()):
        pos = torch.nonzero(m)[:, 0]
        for s, (start, stop) in enumerate(segment_bounds(len(pos), n_segments)):
            p[row, s, pos[start:stop]] = 1.0 / (stop - start)
    return p.to(mask.device)


class ModelFeatures:
    """Runs a ``vocalgrad-hf`` model and returns pooled probe features for batches of clips.

    Parameters
    ----------
    model : str or PreTrainedModel
        Model folder / Hub id, or a loaded model (then pass ``processor``).
    processor : str or ProcessorMixin, optional
    device, dtype, audio_first, system_prompt, model_class, trust_remote_code, revision, family, peft
        As the ``vocalgrad-hf`` model arguments.
    """

    def __init__(self, model: Any, *, processor: Any = None, device: str = "auto", dtype: str = "auto",
                 audio_first: bool = False, system_prompt: str | None = None, model_class: str | None = None,
                 trust_remote_code: bool = False, revision: str | None = None, family: str | None = None,
                 peft: str | None = None) -> None:
        from harness_tasks.models.families import load

        self.lm = load(model, processor=processor, device=device, dtype=dtype, model_class=model_class,
                       trust_remote_code=trust_remote_code, revision=revision, family=family, peft=peft)
        self.audio_first = bool(audio_first)
        self.system_prompt = system_prompt or None
        self.audio_token_id = self.lm.audio_token_id
        self.n_layers = num_lm_layers(self.lm.model.config)

    @property
    def device(self) -> str:
        return self.lm.device

    def prepare(self, prompts: list[str], audios: list[tuple[np.ndarray, int]]):
        """Model inputs of a batch, built by the model layer (left-padded, model dtype)."""
        from harness_tasks.models.families import Item

        return self.lm.batch([Item(prompt=p, audios=[(y, int(sr))], audio_first=self.audio_first,
                                   system=self.system_prompt) for p, (y, sr) in zip(prompts, audios)])

    def hidden_states(self, inputs):
        """``(hidden_states, audio_mask)`` of one forward pass; ``audio_mask`` is (batch, tokens)."""
        hs = self.lm.hidden_states(inputs)
        if len(hs) != self.n_layers + 1:
            raise RuntimeError(
                f"{self.lm.name}: expected {self.n_layers + 1} hidden states (embeddings + layers), got "
                f"{len(hs)}; this architecture does not return LM hidden states "
                f"through output_hidden_states (see docs/probe.md)")
        return hs, self.lm.audio_positions(inputs)

    def features(self, prompts: list[str], audios: list[tuple[np.ndarray, int]], *,
                 wanted: list[tuple[str, int | None]], n_segments: int = N_SEGMENTS,
                 ids: list[str] | None = None) -> dict[tuple[str, int | None], np.ndarray]:
        """Pooled features of one batch.

        Parameters
        ----------
        prompts, audios : list
            One prompt and one ``(samples, sample_rate)`` per clip.
        wanted : list of (stage, layer)
            ``("pre_lm", None)``, ``("lm_audio", l)``, ``("lm_text", l)`` with ``l`` in 0..N.
        ids : list of str, optional
            Clip ids for error messages.

        Returns
        -------
        dict
            ``(stage, layer) -> float32 array (batch, dim)``; dim is ``n_segments * hidden`` for
            audio-position stages and ``hidden`` for ``lm_text``.
        """
        import torch

        inputs = self.prepare(prompts, audios)
        am = inputs.get("attention_mask")
        if am is not None and not bool(am[:, -1].all()):
            raise RuntimeError(f"{self.lm.name}: inputs are not left-padded; the last position would be padding")
        hs, mask = self.hidden_states(inputs)
        counts = mask.sum(dim=1)
        if bool((counts == 0).any()):
            bad = [(ids or [f"row {i}" for i in range(len(prompts))])[i] for i in torch.nonzero(counts == 0)[:, 0]]
            raise RuntimeError(f"{self.lm.name}: no audio placeholder tokens (id {self.audio_token_id}) in the "
                               f"inputs of {', '.join(map(str, bad))}")
        for stage, layer in wanted:
            if stage in _LAYERED and not (0 <= int(layer) <= self.n_layers):
                raise ValueError(f"layer {layer} out of range 0..{self.n_layers} for {self.lm.name}")
        out: dict[tuple[str, int | None], np.ndarray] = {}
        audio_layers = sorted({0 if s == "pre_lm" else int(l) for s, l in wanted if s in ("pre_lm", "lm_audio")})
        if audio_layers:
            weights = pooling_matrix(mask, n_segments)                     # (B, S, T)
            pooled = {l: torch.bmm(weights, hs[l].float()).flatten(1).cpu().numpy() for l in audio_layers}
            for stage, layer in wanted:
                if stage == "pre_lm":
                    out[(stage, layer)] = pooled[0]
                elif stage == "lm_audio":
                    out[(stage, layer)] = pooled[int(layer)]
        for stage, layer in wanted:
            if stage == "lm_text":
                out[(stage, layer)] = hs[int(layer)][:, -1, :].float().cpu().numpy()
            elif stage not in MODEL_STAGES:
                raise ValueError(f"unknown model stage {stage!r}; choose from {', '.join(MODEL_STAGES)}")
        return out
