"""Model types that have no family here and are refused with the reason, instead of falling to
the ``generic`` route unverified (``family=generic`` still forces that route).

- ``nemotron_h_omni`` (NVIDIA Nemotron-3-Nano-Omni; config class
  ``NemotronH_Omni_Reasoning_V3_Config`` in transformers 5.25, hybrid Mamba/attention LM with a
  Parakeet audio encoder and a RADIO vision encoder): a reasoning model whose processor (audio,
  image and video processors together) and chat template were not read or run here.
- ``gemma4_unified`` (Gemma 4 12B unified; ``Gemma4UnifiedConfig``): its processor and template differ
  from Gemma 4's and were not read or run here.
"""

from __future__ import annotations

from typing import Any

from .base import Family

__all__ = ["Gemma4Unified", "NemotronHOmni", "Refused"]


class Refused(Family):
    """A model type that is refused at load, before any weight is read (:meth:`refusal`)."""

    #: Why (one line, after the checkpoint's name).
    reason: str = ""

    def refusal(self, config: Any, name: str) -> str | None:
        return f"{name}: model type {getattr(config, 'model_type', '?')} has no VocalGrad family: {self.reason}"


class NemotronHOmni(Refused):
    name = "nemotron_h_omni"
    model_types = ("nemotron_h_omni",)
    reason = ("Nemotron-3-Nano-Omni (a reasoning model) needs its own processor (Parakeet audio with RADIO "
              "image/video) and chat template, not verified here; pass family=generic to try it unverified")


class Gemma4Unified(Refused):
    name = "gemma4_unified"
    model_types = ("gemma4_unified",)
    min_transformers = "5.5"
    reason = ("Gemma 4 unified's processor and chat template differ from Gemma 4's and were not verified here; "
              "pass family=generic to try it unverified")
