"""Command-line options shared by the commands that run a model over clips (``align``, ``transfer``)."""

from __future__ import annotations

__all__ = ["add_model_arguments", "add_run_arguments"]


def add_model_arguments(p) -> None:
    """``--model`` and ``--adapter``."""
    p.add_argument("--model", required=True, metavar="HF_ID_OR_PATH",
                   help="base model: a transformers audio LM folder or Hub id")
    p.add_argument("--adapter", metavar="DIR", help="peft adapter folder (RUN/adapter of `vocalgrad finetune`)")


def add_run_arguments(p, *, batch_size: int = 8) -> None:
    """Batch size, device, dtype, prompt order, system prompt, remote code, quiet."""
    p.add_argument("--batch-size", type=int, default=batch_size, help="clips per forward pass (default %(default)d)")
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default %(default)s)")
    p.add_argument("--dtype", default="auto", help="float32, bfloat16, float16 or auto (default %(default)s)")
    p.add_argument("--audio-first", action="store_true", help="audio before the question (as the harness option)")
    p.add_argument("--system-prompt", help="optional system turn (as the harness option)")
    p.add_argument("--trust-remote-code", action="store_true",
                   help="let transformers run the checkpoint's own model code (only for checkpoints you trust)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
