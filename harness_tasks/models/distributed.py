"""Several processes (``accelerate launch`` / ``torchrun``): lm-eval's rank, world size and its
gather / barrier primitives, mixed into :class:`harness_tasks.models.base.VocalGradLM`."""

from __future__ import annotations

import logging
import os
from typing import Any

log = logging.getLogger("vocalgrad")

__all__ = ["Distributed"]


class Distributed:
    """lm-eval's distributed primitives over ``accelerate`` (no-ops in one process)."""

    def _setup_distributed(self, device: Any = None) -> None:
        """Under ``accelerate launch`` / ``torchrun``: lm-eval's rank and world size.

        CPU processes (``--device cpu`` or no CUDA) talk over gloo, GPU processes over NCCL, one
        GPU per process.
        """
        self.accelerator = None
        try:
            world = int(os.environ.get("WORLD_SIZE", "1") or 1)
        except ValueError:
            world = 1
        if world <= 1:
            return
        import torch
        from accelerate import Accelerator

        cpu = str(device or "").startswith("cpu") or not torch.cuda.is_available()
        acc = Accelerator(cpu=cpu)
        self.accelerator = acc
        self._rank, self._world_size = acc.process_index, acc.num_processes
        if acc.device.type == "cuda":  # "cuda" then means this process's GPU
            torch.cuda.set_device(acc.device)
        self._device = acc.device
        log.info("%s: process %d of %d on %s", type(self).__name__, self._rank, self._world_size, acc.device)

    def all_gather(self, tensor):
        if self.accelerator is None:
            return tensor
        return self.accelerator.gather(tensor)

    def gather_object(self, obj, dst=0):
        if self.accelerator is None:
            return [obj]
        import torch.distributed as dist

        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, obj)
        return out if self.rank == dst else None

    def barrier(self) -> None:
        if self.accelerator is not None:
            self.accelerator.wait_for_everyone()
