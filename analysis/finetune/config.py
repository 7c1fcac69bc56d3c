"""Settings of one fine-tuning run, with the paper's defaults (benchmark.md §11)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

__all__ = ["FinetuneConfig"]


@dataclass
class FinetuneConfig:
    """Every setting of ``vocalgrad finetune`` (recorded in the adapter's provenance).

    Defaults are the paper's: train split of one category, stratified 10 % validation (seed
    1234), LoRA r 8 / alpha 16 / dropout 0.05, AdamW lr 2e-4 (weight decay 0, constant rate),
    1 epoch, batch 1 with gradient accumulation 16, gradient clipping at 1.0.
    """

    # what to train on
    model: str
    data: str
    category: str
    scope: str = "lm_head_only"
    include_audio_encoder: bool = False
    # validation split and seeds
    val_fraction: float = 0.1
    split_seed: int = 1234
    seed: int = 1234
    # LoRA
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    # optimiser and schedule
    learning_rate: float = 2e-4
    weight_decay: float = 0.0
    epochs: int = 1
    batch_size: int = 1
    grad_accum: int = 16
    max_grad_norm: float = 1.0
    # limits, checkpoints, validation batches
    max_train: int | None = None
    max_val: int | None = None
    save_every: int = 50
    eval_batch_size: int = 8
    # loading and prompting the model
    dtype: str = "auto"
    device: str = "auto"
    audio_first: bool = False
    system_prompt: str | None = None
    trust_remote_code: bool = False
    gradient_checkpointing: bool = False
    family: str | None = None

    def __post_init__(self) -> None:
        for name, low in (("lora_r", 1), ("epochs", 1), ("batch_size", 1), ("grad_accum", 1), ("save_every", 1),
                          ("eval_batch_size", 1)):
            if int(getattr(self, name)) < low:
                raise ValueError(f"{name} must be >= {low}, got {getattr(self, name)}")
        if not 0.0 <= self.lora_dropout < 1.0:
            raise ValueError(f"lora_dropout must be in [0, 1), got {self.lora_dropout}")
        if self.learning_rate <= 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")

    def to_dict(self) -> dict:
        return asdict(self)

    #: Settings that change the trained adapter (a resume must agree on all of them).
    def training_key(self) -> dict:
        skip = {"save_every", "eval_batch_size", "device", "max_val"} | ({"family"} if self.family is None else set())
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}
