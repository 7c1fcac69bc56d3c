"""LoRA fine-tuning study (paper §5.4; benchmark.md §11): ``vocalgrad finetune``,
``vocalgrad transfer`` and ``vocalgrad finetune-report``. See docs/finetune.md.

Modules: :mod:`.config` (settings), :mod:`.split` (validation split, data fingerprint),
:mod:`.targets` (LoRA scopes), :mod:`.train` (training loop), :mod:`.checkpoint` (resume),
:mod:`.distributed` (one or several processes), :mod:`.alignment` and :mod:`.directions`
(direction alignment), :mod:`.transfer` and :mod:`.transfer_metrics` (multiple-choice transfer),
:mod:`.report` (the report).
"""

from .cli import register_cli

__all__ = ["register_cli"]
