"""Generic worker: a ``vocalgrad-hf`` model in another Python environment.

Use it when a model needs a transformers version (or other packages) that differ from the
evaluation environment. Run in the model's environment (with this checkout on ``PYTHONPATH``)::

    python -m harness_tasks.workers.transformers_worker pretrained=nvidia/audio-flamingo-3-hf dtype=bfloat16

Environment: the toolkit's own requirements (the worker imports :mod:`harness_tasks.models.hf`,
which imports lm-eval, numpy, soxr ...) with the transformers the model needs, at least
:data:`MIN_TRANSFORMERS` (the first release whose ``from_pretrained`` takes ``dtype=`` and whose
audio processors take ``audio=``, as the model layer passes them); an older one stops the worker
with one line. ``scripts/worker_env.sh transformers_worker DIR`` makes the locked one
(harness_tasks/workers/envs/transformers_worker.txt: transformers 4.57.6, the last 4.x).

Arguments are ``vocalgrad-hf`` model arguments (``key=value`` words). Each request becomes one
:class:`harness_tasks.models.base.Query` answered through the adapter's public
``answer(queries)``; the request's order (``audio_first``), token budget, stop strings and answer
words travel with it. A thinking checkpoint's reasoning budget is added here, where its family is
known. A family the installed transformers cannot serve (the lock's 4.57.6: Audio Flamingo 3, Music
Flamingo, Gemma 4) stops the worker in one line naming the family and the release it needs.
"""

from __future__ import annotations

import sys

try:
    from .protocol import Request, parse_args, serve
except ImportError:  # run as a plain script
    from protocol import Request, parse_args, serve  # type: ignore[no-redef]

__all__ = ["MIN_TRANSFORMERS", "check_transformers", "main"]

#: The oldest transformers the model layer runs under (the toolkit's ``hf`` extra says the same).
MIN_TRANSFORMERS = "4.57"


def check_transformers(version: str) -> None:
    """Stop in one line when ``version`` is older than :data:`MIN_TRANSFORMERS`."""
    def release(v: str) -> tuple[int, ...]:
        out = []
        for part in v.split(".")[:3]:
            digits = "".join(c for c in part if c.isdigit()) if part[:1].isdigit() else ""
            if not digits:
                break
            out.append(int(digits))
        return tuple(out)

    if release(version) < release(MIN_TRANSFORMERS):
        raise SystemExit(f"transformers_worker: transformers {version} is installed; the model layer needs "
                         f">= {MIN_TRANSFORMERS} (from_pretrained(dtype=...), processors taking audio=); make the "
                         f"locked environment: scripts/worker_env.sh transformers_worker DIR")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not args.get("pretrained"):
        raise SystemExit("transformers_worker: pass pretrained=<model folder or Hub id>")
    import transformers

    check_transformers(transformers.__version__)
    from harness_tasks.clip_audio import ClipAudio
    from harness_tasks.models.base import Query
    from harness_tasks.models.hf import HFAudioLM

    from harness_tasks.models.families import FamilyUnavailable

    try:
        lm = HFAudioLM(**args, answer_log="none")
    except FamilyUnavailable as exc:       # e.g. Gemma 4 under the lock's transformers 4.57.6: one line
        raise SystemExit(f"transformers_worker: {exc}") from None
    extra = lm.reasoning_budget            # a thinking checkpoint's reasoning tokens, added here

    def answer(req: Request) -> str:
        clips = [ClipAudio(a.get("clip_id") or f"clip{i}", {"bytes": data, "path": None})
                 for i, (a, data) in enumerate(zip(req.audios, req.audio_bytes()))]
        words = req.answer_words
        if words is not None:
            words = {str(k): tuple(v) for k, v in words.items()}
        q = Query(prompt=req.prompt, audios=clips, max_new_tokens=req.max_new_tokens + extra,
                  gen_kwargs=dict(req.gen_kwargs), audio_first=req.audio_first, answer_words=words)
        (text,) = lm.answer([q])
        return lm.restore_opening(text)

    serve(answer, worker="transformers", model=args["pretrained"], version=f"transformers {transformers.__version__}")


if __name__ == "__main__":
    main()
