"""Generic worker: a ``vocalgrad-hf`` model in another Python environment.

Use it when a model needs a transformers version (or other packages) that differ from the
evaluation environment. Run in the model's environment (with this checkout on ``PYTHONPATH``)::

    python -m harness_tasks.workers.transformers_worker pretrained=nvidia/audio-flamingo-3-hf dtype=bfloat16

Arguments are ``vocalgrad-hf`` model arguments (``key=value`` words). Each request becomes one
:class:`harness_tasks.models.base.Query` answered through the adapter's public
``answer(queries)``; the request's order (``audio_first``), token budget, stop strings and answer
words travel with it.
"""

from __future__ import annotations

import sys

try:
    from .protocol import Request, parse_args, serve
except ImportError:  # run as a plain script
    from protocol import Request, parse_args, serve  # type: ignore[no-redef]

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not args.get("pretrained"):
        raise SystemExit("transformers_worker: pass pretrained=<model folder or Hub id>")
    import transformers

    from harness_tasks.clip_audio import ClipAudio
    from harness_tasks.models.base import Query
    from harness_tasks.models.hf import HFAudioLM

    lm = HFAudioLM(**args, answer_log="none")

    def answer(req: Request) -> str:
        clips = [ClipAudio(a.get("clip_id") or f"clip{i}", {"bytes": data, "path": None})
                 for i, (a, data) in enumerate(zip(req.audios, req.audio_bytes()))]
        words = req.answer_words
        if words is not None:
            words = {str(k): tuple(v) for k, v in words.items()}
        q = Query(prompt=req.prompt, audios=clips, max_new_tokens=req.max_new_tokens,
                  gen_kwargs=dict(req.gen_kwargs), audio_first=req.audio_first, answer_words=words)
        (text,) = lm.answer([q])
        return text

    serve(answer, worker="transformers", model=args["pretrained"], version=f"transformers {transformers.__version__}")


if __name__ == "__main__":
    main()
