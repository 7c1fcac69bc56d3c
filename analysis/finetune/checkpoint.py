"""Resumable training state: adapter weights, optimizer, RNG states and position, written atomically.

A checkpoint is the folder ``OUT/checkpoint/`` (``state.json`` + ``weights.pt``); it is written to
``checkpoint.tmp`` and renamed, so a kill during a save leaves the previous one intact.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

__all__ = ["load_checkpoint", "save_checkpoint"]

_DIR = "checkpoint"


def save_checkpoint(out: Path, *, model: Any, optimizer: Any, state: dict) -> Path:
    """Write the trainable (LoRA) weights, the optimizer and the RNG states with ``state``."""
    import torch
    from peft import get_peft_model_state_dict

    out = Path(out)
    tmp, final = out / (_DIR + ".tmp"), out / _DIR
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    rng = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        rng["cuda"] = torch.cuda.get_rng_state_all()
    torch.save({"adapter": get_peft_model_state_dict(model, save_embedding_layers=False), "optimizer": optimizer.state_dict(), "rng": rng},
               tmp / "weights.pt")
    (tmp / "state.json").write_text(json.dumps(state, indent=2))
    old = out / (_DIR + ".old")
    if final.exists():
        if old.exists():
            shutil.rmtree(old)
        os.replace(final, old)
    os.replace(tmp, final)
    if old.exists():
        shutil.rmtree(old)
    return final


def load_checkpoint(out: Path, *, model: Any, optimizer: Any) -> dict | None:
    """Restore a checkpoint into ``model`` / ``optimizer`` and the RNGs; ``None`` if there is none.

    Returns the saved ``state`` dict.
    """
    import torch
    from peft import set_peft_model_state_dict

    out = Path(out)
    folder = out / _DIR
    if not (folder / "state.json").is_file():
        old = out / (_DIR + ".old")            # killed between the two renames
        if not (old / "state.json").is_file():
            return None
        folder = old
    state = json.loads((folder / "state.json").read_text())
    blob = torch.load(folder / "weights.pt", map_location="cpu", weights_only=False)
    set_peft_model_state_dict(model, blob["adapter"])
    optimizer.load_state_dict(blob["optimizer"])
    torch.set_rng_state(blob["rng"]["torch"])
    random.setstate(blob["rng"]["python"])
    if "cuda" in blob["rng"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(blob["rng"]["cuda"])
    return state
