"""Worker for MiMo-Audio-7B-Instruct through its authors' code (not run here: needs the weights,
flash-attn and a CUDA GPU).

Environment: ``bash scripts/worker_env.sh mimo_audio DIR`` makes the locked one (Python 3.12, the
authors' pins torch 2.6.0 / transformers 4.49.0 and flash-attn 2.7.4.post1; CUDA >= 12);
download ``XiaomiMiMo/MiMo-Audio-7B-Instruct`` and ``XiaomiMiMo/MiMo-Audio-Tokenizer``. Then::

    python path/to/harness_tasks/workers/mimo_audio.py repo=/path/to/MiMo-Audio \\
        model_path=models/MiMo-Audio-7B-Instruct tokenizer_path=models/MiMo-Audio-Tokenizer

Written against XiaomiMiMo/MiMo-Audio at commit 691ce54144a6844cc641fd96046a6ba20776c8b0
(docs/models.md says what was read and run). The code is imported as the authors' scripts do:
the repository root on ``sys.path`` and ``from src.mimo_audio.mimo_audio import MimoAudio``
(``src/`` and ``src/mimo_audio/`` have no ``__init__.py``; ``mimo_audio.py`` imports
``..mimo_audio_tokenizer`` relatively, so ``src/`` itself cannot be the path entry).

Decoding. ``MimoAudio.audio_understanding_sft`` samples (its ``audio_understanding`` sampler:
``do_sample=True``, temperature 0.3, top-p 0.95) and has no token budget, so the worker does what
that method does with its own settings: it registers a greedy sampler pair
(``MiMoSampler(do_sample=False)`` for the text and for the audio channels) in the model's
``task_sampler_configs`` under :data:`TASK`, builds the same chat prompt from
``InputSegment``\\ s (``<|im_start|>user\\n``, the request's text and clips in the request's order,
``<|im_end|>\\n<|im_start|>assistant\\n`` and the empty thinking block ``<think>\\n\\n</think>\\n``)
and calls ``MimoAudio.forward(input_ids, stopping_criteria=[MiMoStopper(<eos>, <|im_end|>)],
max_new_tokens=N + 1, task_name=TASK)``. ``forward`` drops the last generated text step (the stop
token when there is one), so ``N + 1`` steps leave at most ``N`` answer tokens, as a
``max_new_tokens=N`` greedy ``generate`` of transformers does. With audio first and one clip the
prompt is token for token the one ``get_audio_understanding_sft_prompt`` builds. A system prompt
becomes a ``<|im_start|>system`` turn (the form MiMo's other prompts use). Worker arguments:
``repo``, ``model_path``, ``tokenizer_path``, ``device`` (MiMo's default: cuda if available) and
``thinking`` (``on``/``off``, as on every route; default off; ``true``/``false`` read the same).
"""

from __future__ import annotations

import os
import sys

try:
    from .protocol import Request, parse_args, serve
except ImportError:  # run as a plain script
    from protocol import Request, parse_args, serve  # type: ignore[no-redef]

#: Upstream commit this worker was written against.
UPSTREAM = "XiaomiMiMo/MiMo-Audio@691ce54144a6844cc641fd96046a6ba20776c8b0"
#: Key of the worker's greedy samplers in ``MimoAudio.task_sampler_configs``.
TASK = "vocalgrad_greedy"
#: What ``MimoAudio`` must offer (checked at load, one-line error otherwise).
NEEDED = ("tokenizer", "im_end_idx", "group_size", "audio_channels", "speech_zeroemb_idx", "empty_token",
          "task_sampler_configs", "preprocess_input", "get_input_ids", "forward")


def import_mimo(repo: str | None):
    """``(MimoAudio, MiMoSampler, MiMoStopper, InputSegment)`` from a MiMo-Audio clone, imported as
    the authors' scripts import them (``repo`` first on ``sys.path``)."""
    if repo:
        if not os.path.isdir(os.path.join(repo, "src", "mimo_audio")):
            raise SystemExit(f"mimo_audio worker: {repo} has no src/mimo_audio; pass repo=<a MiMo-Audio clone>")
        sys.path.insert(0, os.path.abspath(repo))
    try:
        from src.mimo_audio.mimo_audio import MimoAudio
        from src.mimo_audio.modeling_mimo_audio import MiMoSampler, MiMoStopper
        from src.mimo_audio.process_speechdata import InputSegment
    except ImportError as exc:
        raise SystemExit(f"mimo_audio worker: cannot import the MiMo-Audio code ({type(exc).__name__}: {exc}); "
                         f"pass repo=<a MiMo-Audio clone> and run in its environment ({UPSTREAM})") from None
    return MimoAudio, MiMoSampler, MiMoStopper, InputSegment


def check_api(model) -> None:
    """One-line error when ``model`` lacks what this worker calls (another MiMo-Audio version)."""
    import inspect

    missing = [n for n in NEEDED if not hasattr(model, n)]
    if not missing:
        params = inspect.signature(model.forward).parameters
        missing = [f"forward({p}=...)" for p in ("stopping_criteria", "max_new_tokens", "task_name")
                   if p not in params]
    if missing:
        raise SystemExit(f"mimo_audio worker: this MimoAudio has no {', '.join(missing)}; the worker was written "
                         f"for {UPSTREAM}")


def prompt(model, segment, req: Request, paths: list[str], *, system: str | None, thinking: bool) -> list:
    """The request as MiMo ``InputSegment``\\ s (text and clips in the request's order)."""
    def text(t: str):
        return segment(text=t, speech_zeroemb_idx=model.speech_zeroemb_idx, text_zeroemb_idx=model.empty_token)

    out = [text("<|im_start|>system\n"), text(system), text("<|im_end|>\n")] if system else []
    out.append(text("<|im_start|>user\n"))
    for part in req.parts:
        if part["type"] == "audio":
            out.append(segment(audio=model.preprocess_input(paths[part["index"]]),
                               speech_zeroemb_idx=model.speech_zeroemb_idx, text_zeroemb_idx=model.empty_token))
        elif part.get("text"):
            out.append(text(part["text"]))
    out += [text("<|im_end|>\n"), text("<|im_start|>assistant\n"),
            text("<think>\n" if thinking else "<think>\n\n</think>\n")]
    return out


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    word = str(args.get("thinking", "off")).strip().lower()
    if word not in ("on", "true", "yes", "1", "off", "false", "no", "0", "auto"):
        raise SystemExit(f"mimo_audio worker: thinking must be on or off (auto: off, MiMo's default), got {word!r}")
    thinking = word in ("on", "true", "yes", "1")
    MimoAudio, MiMoSampler, MiMoStopper, InputSegment = import_mimo(args.get("repo"))

    model_path = args.get("model_path", "XiaomiMiMo/MiMo-Audio-7B-Instruct")
    model = MimoAudio(model_path, args.get("tokenizer_path", "XiaomiMiMo/MiMo-Audio-Tokenizer"),
                      device=args.get("device") or None)
    check_api(model)
    model.task_sampler_configs[TASK] = {"global": MiMoSampler(do_sample=False), "local": MiMoSampler(do_sample=False)}
    stops = [model.tokenizer.eos_token_id, model.im_end_idx]

    def answer(req: Request) -> str:
        segs = prompt(model, InputSegment, req, req.audio_paths(), system=req.system_prompt, thinking=thinking)
        stopper = MiMoStopper(stop_tokens=stops, group_size=model.group_size, audio_channels=model.audio_channels)
        return str(model.forward(model.get_input_ids(segs), stopping_criteria=[stopper],
                                 max_new_tokens=req.max_new_tokens + 1, task_name=TASK))

    generation = {"decoding": "greedy", "upstream": UPSTREAM,
                  "call": f"MimoAudio.forward(task_name={TASK!r}, max_new_tokens=request budget + 1)",
                  "global_sampler": "MiMoSampler(do_sample=False)", "local_sampler": "MiMoSampler(do_sample=False)",
                  "stop_tokens": ["<eos>", "<|im_end|>"], "thinking": thinking,
                  "not_controlled": "stop strings (gen_kwargs 'until') are not applied"}
    serve(answer, worker="mimo-audio", model=model_path, generation=generation)


if __name__ == "__main__":
    main()
