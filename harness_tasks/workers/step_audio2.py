"""Worker for Step-Audio 2 mini through its authors' ``stepaudio2`` module (not run here: needs
the weights and a GPU).

Environment (the authors' instructions): Python >= 3.10, ``pip install transformers==4.49.0
torchaudio librosa onnxruntime s3tokenizer diffusers hyperpyyaml``, ``git clone
https://github.com/stepfun-ai/Step-Audio2`` and the weights ``stepfun-ai/Step-Audio-2-mini``.
Then::

    python path/to/harness_tasks/workers/step_audio2.py repo=/path/to/Step-Audio2 \\
        model_path=/path/to/Step-Audio-2-mini

API used (public): ``stepaudio2.StepAudio2(model_path)`` (the repo root on ``sys.path``), called
as ``model(messages, max_new_tokens=N, do_sample=False) -> (token_ids, text, audio_tokens)``
with messages ``system`` (text), ``human`` (a list of ``{"type": "text", "text": ...}`` and
``{"type": "audio", "audio": path}`` items in the request's order) and ``assistant`` (None).
"""

from __future__ import annotations

import sys

try:
    from .protocol import Request, parse_args, serve
except ImportError:  # run as a plain script
    from protocol import Request, parse_args, serve  # type: ignore[no-redef]

DEFAULT_SYSTEM = "You are a helpful assistant."


def messages(req: Request, paths: list[str], system: str) -> list[dict]:
    """The request as Step-Audio 2 chat messages."""
    items = [{"type": "text", "text": p["text"]} if p["type"] == "text" else {"type": "audio", "audio": paths[p["index"]]}
             for p in req.parts]
    return [{"role": "system", "content": req.system_prompt or system},
            {"role": "human", "content": items},
            {"role": "assistant", "content": None}]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.get("repo"):
        sys.path.insert(0, args["repo"])
    from stepaudio2 import StepAudio2

    model_path = args.get("model_path", "Step-Audio-2-mini")
    model = StepAudio2(model_path)
    system = args.get("system_prompt", DEFAULT_SYSTEM)

    def answer(req: Request) -> str:
        _, text, _ = model(messages(req, req.audio_paths(), system), max_new_tokens=req.max_new_tokens,
                           do_sample=False)
        return text

    serve(answer, worker="step-audio-2", model=model_path)


if __name__ == "__main__":
    main()
