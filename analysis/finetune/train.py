"""``vocalgrad finetune``: LoRA on one category of the train split (benchmark.md §11).

Steps: load the train clips of the category (:func:`analysis.probe.data.load_clips`), split them
(:func:`~analysis.finetune.split.stratified_split`), load the model through the model layer
(:func:`harness_tasks.models.families.load`), wrap the scope's linear layers with LoRA
(:func:`~analysis.finetune.targets.lora_targets`), train with loss on the answer tokens only
(the model layer's ``labels``: the answer word and the end-of-turn token), checkpoint every
``save_every`` optimizer steps, score the validation clips by answer logits before and after, and
save the adapter with its provenance (``adapter/vocalgrad_finetune.json``).

The input of every clip is built exactly as at evaluation: the benchmark prompt of the category
(:func:`harness_tasks.prompts.build_prompt`) and the clip, in the same order (text, then audio, unless
``audio_first``), through the same chat template (the model layer's ``batch``).

Several processes (``accelerate launch``) split each epoch's shuffled order by rank; the
gradients are averaged across processes at every optimizer step, so the effective batch is
``processes x batch_size x grad_accum``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import vocalgrad
from generation.audio import atomic_write_text
from harness_tasks import prompts

from .config import FinetuneConfig
from .split import Split, data_fingerprint, stratified_split

__all__ = ["FinetuneData", "load_finetune_data", "run_finetune", "validation_scores", "PROVENANCE_FILE"]

#: Provenance file inside the adapter folder.
PROVENANCE_FILE = "vocalgrad_finetune.json"
#: Answer words scored for validation (the default prompt's words, label order).
_WORDS = tuple(prompts.answer_words("default")[d][0] for d in vocalgrad.DIRECTIONS)


class _Killed(vocalgrad.VocalGradError, RuntimeError):
    """Raised by the test hook that simulates a kill (no checkpoint is written)."""


@dataclass
class FinetuneData:
    """Train clips of one category with the train/validation split."""

    clips: Any                  # analysis.probe.data.ClipSet
    split: Split
    train_rows: list[int]
    val_rows: list[int]
    fingerprint: str

    def label(self, row: int) -> str:
        return vocalgrad.DIRECTIONS[0] if self.clips.labels[row] == 1 else vocalgrad.DIRECTIONS[1]


def _audio_digest(clips, row: int) -> str:
    import hashlib

    data = clips.audio_bytes(row)
    return hashlib.sha1(data).hexdigest() if data else ""


def load_finetune_data(cfg: FinetuneConfig) -> FinetuneData:
    """Clips, split and fingerprint of ``cfg.category`` (train split of ``cfg.data``)."""
    from analysis.probe.data import load_clips

    clips = load_clips(cfg.data, "train", cfg.category)
    labels = [vocalgrad.DIRECTIONS[0] if v == 1 else vocalgrad.DIRECTIONS[1] for v in clips.labels]
    split = stratified_split(clips.ids, labels, val_fraction=cfg.val_fraction, seed=cfg.split_seed)
    pos = {cid: i for i, cid in enumerate(clips.ids)}
    train = [pos[c] for c in split.train][: cfg.max_train]
    val = [pos[c] for c in split.val][: cfg.max_val]
    if not train:
        raise ValueError(f"{cfg.data}: no training clips of category {cfg.category!r} after the split")
    digests = [_audio_digest(clips, i) for i in range(len(clips))]
    return FinetuneData(clips=clips, split=split, train_rows=train, val_rows=val,
                        fingerprint=data_fingerprint(clips.ids, labels, digests))


def _item(data: FinetuneData, row: int, cfg: FinetuneConfig, *, target: bool):
    from harness_tasks.models.families import Item

    word = prompts.answer_words("default")[data.label(row)][0] if target else None
    return Item(prompt=data.clips.prompt, audios=[data.clips.audio(row)], audio_first=cfg.audio_first,
                system=cfg.system_prompt, target=word)


def validation_scores(lm, data: FinetuneData, rows: list[int], cfg: FinetuneConfig, *, progress: bool = False,
                      desc: str = "validation") -> dict | None:
    """Accuracy and balanced accuracy by answer logits: argmax of the log-probs of the words
    ``increase`` / ``decrease`` (first token) after the prompt; also the clip ids and their
    ``[log p(increase), log p(decrease)]``."""
    from tqdm.auto import tqdm

    if not rows:
        return None
    was_training = lm.model.training
    lm.model.eval()
    preds, logprobs = [], []
    bs = cfg.eval_batch_size
    for start in tqdm(range(0, len(rows), bs), desc=desc, disable=not progress, leave=False):
        chunk = rows[start:start + bs]
        lp = lm.answer_logprobs(lm.batch([_item(data, r, cfg, target=False) for r in chunk]), _WORDS)
        preds.extend(int(k) for k in lp.argmax(dim=1))
        logprobs.extend([float(a), float(b)] for a, b in lp.tolist())
    if was_training:
        lm.model.train()
    gold = np.array([0 if data.label(r) == vocalgrad.DIRECTIONS[0] else 1 for r in rows])
    pred = np.array(preds)
    recalls = [float(np.mean(pred[gold == k] == k)) for k in (0, 1) if np.any(gold == k)]
    return {"accuracy": float(np.mean(pred == gold)), "balanced_accuracy": float(np.mean(recalls)),
            "n": len(rows), "predicted_increase": int(np.sum(pred == 0)),
            "ids": [data.clips.ids[r] for r in rows], "logprobs": logprobs}


def _toolkit_versions() -> dict:
    from importlib import metadata

    out = {}
    for pkg in ("vocalgrad", "torch", "transformers", "peft", "accelerate"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def _base_revision(model) -> str | None:
    cfg = getattr(model, "config", None)
    return getattr(cfg, "_commit_hash", None)


def _wrap_lora(lm, cfg: FinetuneConfig):
    import torch
    from peft import LoraConfig, get_peft_model

    from .targets import lora_targets

    targets = lora_targets(lm.model, cfg.scope, include_audio_encoder=cfg.include_audio_encoder)
    lcfg = LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout, bias="none",
                      target_modules=targets)
    torch.manual_seed(cfg.seed)
    model = get_peft_model(lm.model, lcfg)
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        if hasattr(model, "enable_input_require_grads"):
            model.enable_input_require_grads()
    lm.model = model
    return targets


def _counts(model) -> tuple[int, int]:
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    return int(trainable), int(total)


def _epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    order = list(range(n))
    random.Random(seed + epoch).shuffle(order)
    return order


def _write_json(path: Path, obj: dict) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, default=str))


@dataclass
class _Run:
    """What the steps of :func:`run_finetune` share: runner, data, model, optimizer and state."""

    cfg: FinetuneConfig
    out: Path
    key: dict                   # cfg.training_key()
    acc: Any                    # the runner of analysis.finetune.distributed
    data: FinetuneData
    lm: Any                     # the model layer's LM; ``lm.model`` is the peft model once wrapped
    base_prov: dict
    val_before: dict | None
    targets: list[str]
    trainable: int
    total: int
    params: list
    optimizer: Any
    ddp_model: Any
    state: dict


def _finished_run(out: Path, key: dict, *, overwrite: bool) -> dict | None:
    """Clear ``out`` if ``overwrite``; the finished run's ``finetune.json`` if it holds one with ``key``.

    A file or folder of the run that is a symbolic link leading outside ``out`` is refused
    (:class:`generation.contained.OutsideFolderError`); ``overwrite`` removes the links first."""
    if overwrite:
        for p in ("adapter", "checkpoint", "checkpoint.old", "finetune.json"):
            q = out / p
            shutil.rmtree(q) if q.is_dir() and not q.is_symlink() else q.unlink(missing_ok=True)  # a link: itself only
    from generation.contained import refuse_links_out

    # what a run reads and writes: never through a link leading out (a resumed checkpoint is unpickled)
    refuse_links_out(out, ["adapter", "adapter.tmp", "checkpoint", "checkpoint.tmp", "checkpoint.old", "finetune.json"])
    result_path = out / "finetune.json"
    if result_path.is_file():
        done = json.loads(result_path.read_text())
        if done.get("training_key") != key:
            raise ValueError(f"{out} holds a finished run with other settings; use another --out or --overwrite")
        return done
    return None


def _prepare(cfg: FinetuneConfig, out: Path, key: dict, *, progress: bool) -> _Run:
    """Runner, data, base model scored on validation, LoRA wrapping and optimizer."""
    import torch

    from harness_tasks.models.families import load

    from .distributed import make_runner

    acc = make_runner(cfg.device)
    device = str(acc.device)
    data = load_finetune_data(cfg)
    lm = load(cfg.model, dtype=cfg.dtype, device=device, trust_remote_code=cfg.trust_remote_code, family=cfg.family)
    base_prov = {**lm.provenance(), "commit_hash": _base_revision(lm.model)}
    val_before = validation_scores(lm, data, data.val_rows, cfg, progress=progress and acc.is_main_process,
                                   desc="validation (base)") if acc.is_main_process else None
    targets = _wrap_lora(lm, cfg)
    trainable, total = _counts(lm.model)
    lm.model.train()
    params = [p for p in lm.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    ddp_model, optimizer = acc.prepare(lm.model, optimizer)
    state = {"training_key": key, "epoch": 0, "position": 0, "step": 0, "history": []}
    return _Run(cfg=cfg, out=out, key=key, acc=acc, data=data, lm=lm, base_prov=base_prov,
                val_before=val_before, targets=targets, trainable=trainable, total=total, params=params,
                optimizer=optimizer, ddp_model=ddp_model, state=state)


def _resume(run: _Run, *, progress: bool) -> None:
    """Restore ``out/checkpoint`` (weights, optimizer, RNGs, position) if there is one."""
    from .checkpoint import load_checkpoint

    acc = run.acc
    saved = load_checkpoint(run.out, model=acc.unwrap_model(run.ddp_model), optimizer=run.optimizer)
    if saved is None:
        return
    if saved.get("training_key") != run.key:
        raise ValueError(f"{run.out}/checkpoint was made with other settings; use another --out or --overwrite")
    run.state = saved
    if progress and acc.is_main_process:
        print(f"resuming from step {saved['step']} (epoch {saved['epoch'] + 1}, clip {saved['position']})")


def _micro_step(run: _Run, batch, *, last: bool) -> float:
    """Forward and backward of one micro-batch (no gradient sync unless ``last``); its loss."""
    acc = run.acc
    ctx = acc.no_sync(run.ddp_model) if not last else contextlib.nullcontext()
    with ctx:
        loss = run.ddp_model(**batch, use_cache=False).loss
        acc.backward(loss / run.cfg.grad_accum)
    return float(loss.detach().float().cpu())


def _optimizer_step(run: _Run, bar, *, epoch: int, pos: int, n_order: int, losses: list[float]) -> None:
    """Clip, step, log the mean loss, and checkpoint every ``save_every`` steps (not at an epoch's end)."""
    from .checkpoint import save_checkpoint

    cfg, acc, state = run.cfg, run.acc, run.state
    if cfg.max_grad_norm > 0:
        acc.clip_grad_norm_(run.params, cfg.max_grad_norm)
    run.optimizer.step()
    run.optimizer.zero_grad(set_to_none=True)
    state["step"] += 1
    state["history"].append({"step": state["step"], "epoch": epoch + 1, "clips": pos * acc.num_processes,
                             "loss": float(np.mean(losses))})
    bar.set_postfix(loss=f"{np.mean(losses):.4f}", step=state["step"])
    state.update(epoch=epoch, position=pos)
    if state["step"] % cfg.save_every == 0 and pos < n_order:
        acc.wait_for_everyone()
        if acc.is_main_process:
            save_checkpoint(run.out, model=acc.unwrap_model(run.ddp_model), optimizer=run.optimizer, state=state)


def _train_epoch(run: _Run, epoch: int, *, progress: bool, kill_at: int | None) -> None:
    """One epoch over this rank's share of the shuffled order, from the saved position."""
    from tqdm.auto import tqdm

    cfg, acc, data, state = run.cfg, run.acc, run.data, run.state
    order = _epoch_order(len(data.train_rows), cfg.seed, epoch)[acc.process_index::acc.num_processes]
    start = state["position"] if epoch == state["epoch"] else 0
    bar = tqdm(total=len(order), initial=start, desc=f"finetune {cfg.category} {cfg.scope} e{epoch + 1}",
               disable=not (progress and acc.is_main_process), unit="clip")
    losses: list[float] = []
    micro = 0
    pos = start
    while pos < len(order):
        if kill_at is not None and pos == kill_at:
            raise _Killed(f"simulated kill at clip {pos}")
        chunk = order[pos:pos + cfg.batch_size]
        batch = run.lm.batch([_item(data, data.train_rows[i], cfg, target=True) for i in chunk])
        pos += len(chunk)
        micro += 1
        last = micro >= cfg.grad_accum or pos >= len(order)
        losses.append(_micro_step(run, batch, last=last))
        bar.update(len(chunk))
        if last:
            _optimizer_step(run, bar, epoch=epoch, pos=pos, n_order=len(order), losses=losses)
            losses, micro = [], 0
    bar.close()


def _result(run: _Run, val_after: dict | None, train_seconds: float) -> dict:
    """The content of ``finetune.json`` (and of the adapter's provenance file)."""
    cfg, data, state = run.cfg, run.data, run.state
    labels = {cid: data.label(i) for i, cid in enumerate(data.clips.ids)}
    return {
        "training_key": run.key,
        "base_model": run.base_prov,
        "data": {"source": str(cfg.data), "category": data.clips.category, "split": "train",
                 "fingerprint": data.fingerprint, "n_clips": len(data.clips),
                 "n_train": len(data.train_rows), "n_val": len(data.val_rows),
                 "label_counts": data.split.counts(labels)},
        "settings": cfg.to_dict(),
        "lora": {"scope": cfg.scope, "include_audio_encoder": cfg.include_audio_encoder,
                 "target_modules": run.targets, "n_target_modules": len(run.targets)},
        "trainable_parameters": run.trainable, "total_parameters": run.total,
        "processes": run.acc.num_processes, "steps": state["step"], "history": state["history"],
        "final_loss": state["history"][-1]["loss"] if state["history"] else None,
        "train_seconds": train_seconds,
        "validation_before": run.val_before, "validation_after": val_after,
        "toolkit": _toolkit_versions(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _save_run(out: Path, model, result: dict) -> None:
    """Adapter + provenance (via ``adapter.tmp``, renamed), ``finetune.json``; remove the checkpoints."""
    tmp = out / "adapter.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    model.save_pretrained(str(tmp), save_embedding_layers=False)
    _write_json(tmp / PROVENANCE_FILE, result)
    if (out / "adapter").exists():
        shutil.rmtree(out / "adapter")
    os.replace(tmp, out / "adapter")
    _write_json(out / "finetune.json", result)
    for p in ("checkpoint", "checkpoint.old"):
        if (out / p).exists():
            shutil.rmtree(out / p)


def run_finetune(cfg: FinetuneConfig, out, *, progress: bool = True, overwrite: bool = False,
                 _kill_at: int | None = None) -> dict:
    """Train one adapter; resume from ``out/checkpoint`` if a previous run was killed.

    Parameters
    ----------
    cfg : FinetuneConfig
    out : path
        Run folder: ``adapter/`` (peft adapter + provenance), ``finetune.json`` (settings, loss
        history, validation scores), ``checkpoint/`` while training.
    progress : bool
        tqdm bar with the running loss.
    overwrite : bool
        Start afresh even if ``out`` holds a finished run or a checkpoint.

    Returns
    -------
    dict
        The content of ``finetune.json``.

    Raises
    ------
    ValueError
        If ``out`` holds a run (finished or checkpointed) with other training settings.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    key = cfg.training_key()
    done = _finished_run(out, key, overwrite=overwrite)
    if done is not None:
        return done
    run = _prepare(cfg, out, key, progress=progress)
    _resume(run, progress=progress)
    t0 = time.perf_counter()
    for epoch in range(run.state["epoch"], cfg.epochs):
        _train_epoch(run, epoch, progress=progress, kill_at=_kill_at)
        run.state.update(epoch=epoch + 1, position=0)
    train_seconds = time.perf_counter() - t0

    run.acc.wait_for_everyone()
    model = run.acc.unwrap_model(run.ddp_model)
    run.lm.model = model
    if not run.acc.is_main_process:
        return {}
    val_after = validation_scores(run.lm, run.data, run.data.val_rows, cfg, progress=progress,
                                  desc="validation (adapted)")
    result = _result(run, val_after, train_seconds)
    _save_run(out, model, result)
    return result
