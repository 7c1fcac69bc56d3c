"""Worker for MiMo-Audio-7B-Instruct through its authors' ``mimo_audio`` package (not run here:
needs the weights and a CUDA GPU).

Environment (the authors' instructions: Python 3.12, CUDA >= 12): ``git clone
https://github.com/XiaomiMiMo/MiMo-Audio``, ``pip install -r requirements.txt``, ``pip install
flash-attn==2.7.4.post1``; download ``XiaomiMiMo/MiMo-Audio-7B-Instruct`` and
``XiaomiMiMo/MiMo-Audio-Tokenizer``. Then::

    python path/to/harness_tasks/workers/mimo_audio.py repo=/path/to/MiMo-Audio \\
        model_path=models/MiMo-Audio-7B-Instruct tokenizer_path=models/MiMo-Audio-Tokenizer

API used (public): ``mimo_audio.mimo_audio.MimoAudio(model_path, tokenizer_path)`` (the repo's
``src`` folder on ``sys.path``) and ``MimoAudio.audio_understanding_sft(input_speech=path,
input_text=text, thinking=False) -> str``. That call takes one clip and one text and no token
budget: few-shot requests (several clips) are refused with an error answer, and the audio/text
order is the package's own.
"""

from __future__ import annotations

import os
import sys

try:
    from .protocol import Request, parse_args, serve
except ImportError:  # run as a plain script
    from protocol import Request, parse_args, serve  # type: ignore[no-redef]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.get("repo"):
        sys.path.insert(0, os.path.join(args["repo"], "src"))
    from mimo_audio.mimo_audio import MimoAudio

    model_path = args.get("model_path", "XiaomiMiMo/MiMo-Audio-7B-Instruct")
    model = MimoAudio(model_path, args.get("tokenizer_path", "XiaomiMiMo/MiMo-Audio-Tokenizer"))
    thinking = args.get("thinking", "false").lower() in ("1", "true", "yes")

    def answer(req: Request) -> str:
        paths = req.audio_paths()
        if len(paths) != 1:
            raise ValueError(f"the MiMo-Audio worker takes one clip per request, got {len(paths)}")
        text = req.text() if not req.system_prompt else f"{req.system_prompt}\n\n{req.text()}"
        return str(model.audio_understanding_sft(input_speech=paths[0], input_text=text, thinking=thinking))

    serve(answer, worker="mimo-audio", model=model_path)


if __name__ == "__main__":
    main()
