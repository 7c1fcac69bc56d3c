"""Pieces shared by the tiny-checkpoint builders (tests/_family_helpers.py, tests/_family_newest.py)."""

from __future__ import annotations

from pathlib import Path


def _save(model, tok, folder: Path) -> Path:
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.save_pretrained(folder)
    return Path(folder)


def _template(user_open: str, user_close: str, audio: str, assistant: str) -> str:
    """Chat template with ``{role}`` substituted in the turn header."""
    return ("{% for m in messages %}" + user_open + "{% if m['content'] is string %}{{ m['content'] }}{% else %}"
            "{% for c in m['content'] %}{% if c['type'] == 'audio' %}" + audio +
            "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}" + user_close +
            "{% endfor %}{% if add_generation_prompt %}" + assistant + "{% endif %}")


def _tokenizer_with_roles(specials: list[str], roles: dict[str, str], *, eos: str, pad: str, bos: str | None = None,
                          add_bos: bool = False):
    """Byte-level tokenizer whose named special tokens (``roles``: attribute -> token, e.g.
    ``audio_token``) are attributes of the tokenizer, with ``<attr>_id`` (what the Gemma and
    Qwen3-Omni processors read). ``add_bos``: it puts ``bos`` before every text it encodes with
    special tokens on, as the real Gemma tokenizers do (``add_bos_token``)."""
    from tokenizers.pre_tokenizers import ByteLevel
    from tokenizers.processors import TemplateProcessing
    from transformers import Qwen2Tokenizer

    vocab = {ch: i for i, ch in enumerate(sorted(ByteLevel.alphabet()))}
    tok = Qwen2Tokenizer(vocab=vocab, merges=[], unk_token=None, bos_token=bos, eos_token=eos, pad_token=pad,
                         extra_special_tokens=dict(roles))
    tok.add_special_tokens({"additional_special_tokens": specials + list(roles.values())})
    if add_bos:
        bos_id = tok.convert_tokens_to_ids(bos)
        tok._tokenizer.post_processor = TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
                                                           special_tokens=[(bos, bos_id)])
    return tok


def _ids(tok, *tokens: str) -> list[int]:
    return [tok.convert_tokens_to_ids(t) for t in tokens]
