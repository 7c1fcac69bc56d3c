"""Worker for Step-Audio 2 mini through its authors' ``stepaudio2`` module (not run here: needs
the weights, whose modelling code comes with the checkpoint, and a GPU for useful speed).

Environment: ``bash scripts/worker_env.sh step_audio2 DIR`` makes the locked one (Python 3.10,
transformers 4.49.0 as the authors pin it, torch and torchaudio 2.6.0: from torchaudio 2.9
``torchaudio.load`` needs torchcodec, so the authors' unpinned torchaudio would fail on every clip),
with the authors' code at the commit below; the weights are ``stepfun-ai/Step-Audio-2-mini``.
Then::

    python path/to/harness_tasks/workers/step_audio2.py repo=/path/to/Step-Audio2 \\
        model_path=/path/to/Step-Audio-2-mini

Written against ``stepaudio2.py`` of stepfun-ai/Step-Audio2 at commit
c22bfade1579c55aa6cffbce40094fd5770b5331 (docs/models.md says what was read). API used:
``stepaudio2.StepAudio2(model_path)`` (the repository root first on ``sys.path``: the module
imports its neighbours ``utils`` and ``device_utils`` as top-level modules), called as
``model(messages, **generation) -> (token_ids, text, audio_tokens)`` with messages ``system``
(text), ``human`` (a list of ``{"type": "text", "text": ...}`` and ``{"type": "audio", "audio":
path}`` items in the request's order) and ``assistant`` (None: the open assistant turn).

Decoding: the keyword arguments update the ``GenerationConfig`` handed to transformers'
``generate``; the worker passes ``do_sample=False, num_beams=1, repetition_penalty=1.0``
(greedy, whatever the checkpoint's own generation defaults say) and
``max_new_tokens=N + 1``: ``StepAudio2`` drops the last generated token (normally
``<|EOT|>``), so ``N + 1`` steps leave at most ``N`` answer tokens, as a ``max_new_tokens=N``
greedy ``generate``. Audio tokens in the output are dropped by ``StepAudio2`` itself.
"""

from __future__ import annotations

import sys

try:
    from .protocol import Request, parse_args, serve
except ImportError:  # run as a plain script
    from protocol import Request, parse_args, serve  # type: ignore[no-redef]

#: Upstream commit this worker was written against.
UPSTREAM = "stepfun-ai/Step-Audio2@c22bfade1579c55aa6cffbce40094fd5770b5331 (stepaudio2.py)"
DEFAULT_SYSTEM = "You are a helpful assistant."
#: Generation settings passed to ``StepAudio2.__call__`` besides the budget.
GREEDY = {"do_sample": False, "num_beams": 1, "repetition_penalty": 1.0}


def messages(req: Request, paths: list[str], system: str) -> list[dict]:
    """The request as Step-Audio 2 chat messages."""
    items = [{"type": "audio", "audio": paths[p["index"]]} if p["type"] == "audio"
             else {"type": "text", "text": p["text"]}
             for p in req.parts if p["type"] == "audio" or p.get("text")]
    return [{"role": "system", "content": req.system_prompt or system},
            {"role": "human", "content": items},
            {"role": "assistant", "content": None}]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.get("repo"):
        sys.path.insert(0, args["repo"])
    try:
        from stepaudio2 import StepAudio2
    except ImportError as exc:
        raise SystemExit(f"step_audio2 worker: cannot import stepaudio2 ({type(exc).__name__}: {exc}); pass "
                         f"repo=<a Step-Audio2 clone> and run in its environment ({UPSTREAM})") from None

    model_path = args.get("model_path", "Step-Audio-2-mini")
    model = StepAudio2(model_path)
    system = args.get("system_prompt", DEFAULT_SYSTEM)

    def answer(req: Request) -> str:
        _, text, _ = model(messages(req, req.audio_paths(), system), max_new_tokens=req.max_new_tokens + 1, **GREEDY)
        return text

    generation = {"decoding": "greedy", "upstream": UPSTREAM,
                  "call": "StepAudio2(messages, do_sample=False, num_beams=1, repetition_penalty=1.0, "
                          "max_new_tokens=request budget + 1)",
                  "system_prompt": system,
                  "not_controlled": "stop strings (gen_kwargs 'until') are not applied"}
    serve(answer, worker="step-audio-2", model=model_path, generation=generation)


if __name__ == "__main__":
    main()
