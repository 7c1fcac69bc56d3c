"""One process or several (``accelerate launch``): the few operations the trainer needs.

Without a launcher (``WORLD_SIZE`` unset or 1) a plain single-process runner is used, so that a
normal run never touches ``accelerate``'s global state; under ``accelerate launch`` (or
``torchrun``) an :class:`accelerate.Accelerator` does the gradient averaging.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

__all__ = ["make_runner"]


class _Single:
    """Single-process stand-in with the :class:`accelerate.Accelerator` methods used here."""

    process_index = 0
    num_processes = 1
    is_main_process = True

    def __init__(self, device: str) -> None:
        self.device = device

    def prepare(self, *objs: Any):
        return objs

    def backward(self, loss) -> None:
        loss.backward()

    def no_sync(self, model):
        return contextlib.nullcontext()

    def clip_grad_norm_(self, params, max_norm: float):
        import torch

        return torch.nn.utils.clip_grad_norm_(params, max_norm)

    def unwrap_model(self, model):
        return model

    def wait_for_everyone(self) -> None:
        return None


def make_runner(device: str):
    """The runner for this process: :class:`_Single` or an ``Accelerator`` when launched with several.

    Parameters
    ----------
    device : str
        Requested device (``auto``, ``cpu``, ``cuda`` ...); under a launcher each process uses
        the launcher's device (its own GPU, or the CPU with ``--cpu``).
    """
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        from harness_tasks.models.families import pick_device

        return _Single(pick_device(device))
    from accelerate import Accelerator

    return Accelerator(cpu=device == "cpu")
