"""Worker for Kimi-Audio-7B-Instruct through its authors' ``kimia_infer`` package (not run here:
needs the weights and a CUDA GPU).

Environment: ``bash scripts/worker_env.sh kimi_audio DIR`` makes the locked one
(harness_tasks/workers/envs/kimi_audio.txt: the authors' code at the commit below with its
submodules, torch 2.4.1, transformers 4.57.6 (< 5: the checkpoint's code passes ``position_ids`` to
``apply_rotary_pos_emb``) and flash-attn 2.6.3, which their tokenizer imports unconditionally and
their ``requirements.txt`` lacks). Then::

    python path/to/harness_tasks/workers/kimi_audio.py repo=/path/to/Kimi-Audio \\
        model_path=moonshotai/Kimi-Audio-7B-Instruct

Written against MoonshotAI/Kimi-Audio at commit 2607d515f5b7dffa1dcc7526f9f26feb48e356c4
(docs/models.md says what was read and run). API used: ``kimia_infer.api.kimia.KimiAudio(
model_path=..., load_detokenizer=False)`` and ``KimiAudio.generate(chats, output_type="text",
text_temperature=0.0, max_new_tokens=N) -> (wav, text)``, with messages ``{"role": "user",
"message_type": "text" | "audio", "content": text or WAV path}`` in the request's order (the
prompt manager knows only the roles ``user`` and ``assistant``, so a system prompt is sent as the
first user text).

Decoding: ``text_temperature=0.0`` makes Kimi's sampler take the arg-max text token (its top-k is
then unused; the repetition penalties stay at their default 1.0, i.e. off). ``generate`` runs at
most ``max_new_tokens`` steps of one text token each and stops at the text end token, so the
answer has at most ``N`` tokens, as a greedy ``max_new_tokens=N`` ``generate`` of transformers.
"""

from __future__ import annotations

import sys

try:
    from .protocol import Request, parse_args, serve
except ImportError:  # run as a plain script
    from protocol import Request, parse_args, serve  # type: ignore[no-redef]

#: Upstream commit this worker was written against.
UPSTREAM = "MoonshotAI/Kimi-Audio@2607d515f5b7dffa1dcc7526f9f26feb48e356c4"
#: Keyword arguments of ``KimiAudio.generate`` the worker passes (checked at load).
GENERATE_ARGS = ("output_type", "text_temperature", "max_new_tokens")


def messages(req: Request, paths: list[str]) -> list[dict]:
    """The request as Kimi-Audio chat messages (text and clips in the request's order)."""
    out = []
    if req.system_prompt:
        out.append({"role": "user", "message_type": "text", "content": req.system_prompt})
    for part in req.parts:
        if part["type"] == "text":
            if part["text"]:
                out.append({"role": "user", "message_type": "text", "content": part["text"]})
        else:
            out.append({"role": "user", "message_type": "audio", "content": paths[part["index"]]})
    return out


def check_api(cls) -> None:
    """One-line error when ``KimiAudio.generate`` does not take the arguments this worker passes."""
    import inspect

    params = inspect.signature(cls.generate).parameters
    missing = [p for p in GENERATE_ARGS if p not in params]
    if missing:
        raise SystemExit(f"kimi_audio worker: KimiAudio.generate takes no {', '.join(missing)}; the worker was "
                         f"written for {UPSTREAM}")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.get("repo"):
        sys.path.insert(0, args["repo"])
    try:
        from kimia_infer.api.kimia import KimiAudio
    except ImportError as exc:
        raise SystemExit(f"kimi_audio worker: cannot import kimia_infer ({type(exc).__name__}: {exc}); pass "
                         f"repo=<a Kimi-Audio clone> and run in its environment ({UPSTREAM})") from None
    check_api(KimiAudio)

    model_path = args.get("model_path", "moonshotai/Kimi-Audio-7B-Instruct")
    model = KimiAudio(model_path=model_path, load_detokenizer=False)

    def answer(req: Request) -> str:
        _, text = model.generate(messages(req, req.audio_paths()), output_type="text", text_temperature=0.0,
                                 max_new_tokens=req.max_new_tokens)
        return text

    generation = {"decoding": "greedy", "upstream": UPSTREAM,
                  "call": "KimiAudio.generate(output_type='text', text_temperature=0.0, max_new_tokens=request budget)",
                  "not_controlled": "stop strings (gen_kwargs 'until') are not applied"}
    serve(answer, worker="kimi-audio", model=model_path, generation=generation)


if __name__ == "__main__":
    main()
