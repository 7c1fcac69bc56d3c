"""Worker for Kimi-Audio-7B-Instruct through its authors' ``kimia_infer`` package (not run here:
needs the weights and a CUDA GPU).

Environment (the authors' instructions): ``git clone https://github.com/MoonshotAI/Kimi-Audio``,
``git submodule update --init --recursive``, ``pip install -r requirements.txt`` (or their
Docker image ``moonshotai/kimi-audio:v0.1``). Then::

    python path/to/harness_tasks/workers/kimi_audio.py repo=/path/to/Kimi-Audio \\
        model_path=moonshotai/Kimi-Audio-7B-Instruct

API used (public): ``kimia_infer.api.kimia.KimiAudio(model_path=..., load_detokenizer=False)``
and ``KimiAudio.generate(messages, output_type="text", text_temperature=0.0,
max_new_tokens=N) -> (wav, text)``, with messages ``{"role": "user", "message_type":
"text" | "audio", "content": text or WAV path}`` in the request's order.
"""

from __future__ import annotations

import sys

try:
    from .protocol import Request, parse_args, serve
except ImportError:  # run as a plain script
    from protocol import Request, parse_args, serve  # type: ignore[no-redef]


def messages(req: Request, paths: list[str]) -> list[dict]:
    """The request as Kimi-Audio chat messages (text and clips in the request's order)."""
    out = []
    if req.system_prompt:
        out.append({"role": "user", "message_type": "text", "content": req.system_prompt})
    for part in req.parts:
        if part["type"] == "text":
            out.append({"role": "user", "message_type": "text", "content": part["text"]})
        else:
            out.append({"role": "user", "message_type": "audio", "content": paths[part["index"]]})
    return out


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.get("repo"):
        sys.path.insert(0, args["repo"])
    from kimia_infer.api.kimia import KimiAudio

    model_path = args.get("model_path", "moonshotai/Kimi-Audio-7B-Instruct")
    model = KimiAudio(model_path=model_path, load_detokenizer=False)

    def answer(req: Request) -> str:
        _, text = model.generate(messages(req, req.audio_paths()), output_type="text", text_temperature=0.0,
                                 max_new_tokens=req.max_new_tokens)
        return text

    serve(answer, worker="kimi-audio", model=model_path)


if __name__ == "__main__":
    main()
