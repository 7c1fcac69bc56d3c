"""``vocalgrad finetune``: command-line entry of the LoRA study (docs/finetune.md)."""

from __future__ import annotations

from analysis.cli_options import RUN_ERRORS, add_command, add_option, add_options

__all__ = ["register_cli"]


def register_cli(subparsers) -> None:
    """Add ``vocalgrad finetune --model M --data HUB --category C --scope S --out DIR``."""
    from .config import FinetuneConfig
    from .targets import SCOPES

    d = FinetuneConfig(model="", data="", category="")
    p = add_command(
        subparsers, "finetune", _run_cli, errors=RUN_ERRORS + (ImportError,),
        help="LoRA fine-tuning on one category of the train split (paper §5.4)",
        description="""Fine-tune a transformers audio LM with LoRA on one category of the VocalGrad train split,
            input = the evaluation prompt + clip exactly as at evaluation, loss on the answer tokens only
            (benchmark.md §11). Resumes after a kill. Several GPUs:
            `accelerate launch -m vocalgrad_commands.cli finetune ...`. See docs/finetune.md.""")
    add_option(p, "--model", help="base model (transformers audio LM)")
    p.add_argument("--data", required=True, metavar="HUB_OR_REPO", help="Hub folder with the train config, or repo id")
    p.add_argument("--category", required=True, help="category to train on (e.g. volume)")
    p.add_argument("--scope", choices=SCOPES, default=d.scope, help="LoRA scope (default %(default)s)")
    p.add_argument("--include-audio-encoder", action="store_true",
                   help="all_linear only: also adapt the audio encoder and projector (default: language model only)")
    p.add_argument("--out", required=True, metavar="DIR", help="run folder (adapter/, finetune.json, checkpoint/)")
    g = p.add_argument_group("hyper-parameters (defaults: the paper's)")
    g.add_argument("--lora-r", type=int, default=d.lora_r, help="LoRA rank (default %(default)d)")
    g.add_argument("--lora-alpha", type=int, default=d.lora_alpha, help="LoRA alpha (default %(default)d)")
    g.add_argument("--lora-dropout", type=float, default=d.lora_dropout, help="LoRA dropout (default %(default)g)")
    g.add_argument("--lr", type=float, default=d.learning_rate, help="learning rate (default %(default)g)")
    g.add_argument("--weight-decay", type=float, default=d.weight_decay, help="AdamW weight decay (default %(default)g)")
    g.add_argument("--epochs", type=int, default=d.epochs, help="passes over the training clips (default %(default)d)")
    g.add_argument("--batch-size", type=int, default=d.batch_size, help="clips per micro-batch (default %(default)d)")
    g.add_argument("--grad-accum", type=int, default=d.grad_accum, help="micro-batches per step (default %(default)d)")
    g.add_argument("--max-grad-norm", type=float, default=d.max_grad_norm, help="0 = no clipping")
    g.add_argument("--val-fraction", type=float, default=d.val_fraction,
                   help="stratified validation share per label (default %(default)g)")
    g.add_argument("--split-seed", type=int, default=d.split_seed, help="seed of the validation split")
    g.add_argument("--seed", type=int, default=d.seed, help="seed of the LoRA init, dropout and clip order")
    g.add_argument("--max-train", type=int, help="use only the first N training clips (smoke runs)")
    g.add_argument("--max-val", type=int, help="use only the first N validation clips")
    g.add_argument("--gradient-checkpointing", action="store_true", help="trade compute for memory (big models)")
    r = p.add_argument_group("running")
    r.add_argument("--save-every", type=int, default=d.save_every, help="checkpoint every N optimizer steps")
    r.add_argument("--eval-batch-size", type=int, default=d.eval_batch_size,
                   help="clips per forward pass of the validation scoring (default %(default)d)")
    add_option(r, "--device", default=d.device)
    add_option(r, "--dtype", default=d.dtype)
    add_options(r, "--audio-first", "--system-prompt", "--trust-remote-code")
    r.add_argument("--family", help="model family, overriding the detection (e.g. kimi_audio; docs/model-layer.md)")
    r.add_argument("--overwrite", action="store_true", help="discard a finished run or checkpoint in --out")
    add_options(r, "--quiet")


def _run_cli(args) -> int:
    from .config import FinetuneConfig
    from .train import run_finetune

    cfg = FinetuneConfig(
        model=args.model, data=args.data, category=args.category, scope=args.scope,
        include_audio_encoder=args.include_audio_encoder, val_fraction=args.val_fraction,
        split_seed=args.split_seed, seed=args.seed, lora_r=args.lora_r, lora_alpha=args.lora_alpha,
        lora_dropout=args.lora_dropout, learning_rate=args.lr, weight_decay=args.weight_decay,
        epochs=args.epochs, batch_size=args.batch_size, grad_accum=args.grad_accum,
        max_grad_norm=args.max_grad_norm, max_train=args.max_train, max_val=args.max_val,
        save_every=args.save_every, eval_batch_size=args.eval_batch_size, dtype=args.dtype, device=args.device,
        audio_first=args.audio_first, system_prompt=args.system_prompt,
        trust_remote_code=args.trust_remote_code, gradient_checkpointing=args.gradient_checkpointing,
        family=args.family)
    res = run_finetune(cfg, args.out, progress=not args.quiet, overwrite=args.overwrite)
    if not res:            # a non-main process of a multi-process run
        return 0
    vb, va = res.get("validation_before"), res.get("validation_after")
    fmt = (lambda v: "n/a" if not v else f"{100 * v['accuracy']:.1f} % (bal {100 * v['balanced_accuracy']:.1f} %)")
    print(f"{res['data']['category']} {res['lora']['scope']}: {res['trainable_parameters']:,} trainable parameters "
          f"in {res['lora']['n_target_modules']} LoRA modules; {res['steps']} steps on {res['data']['n_train']} clips, "
          f"final loss {res['final_loss']:.4f}")
    print(f"validation accuracy (answer logits, {res['data']['n_val']} clips): base {fmt(vb)} -> adapted {fmt(va)}")
    print(f"adapter: {args.out}/adapter")
    return 0
