"""How the hf route decodes, pinned on GenerationConfig objects made here (no model is loaded): the end
tokens greedy decoding stops at (the checkpoint's, then the chat template's stop ids), the pad id, what
each generation mode keeps of the checkpoint's config, the settings ``generate`` applies, and which special
tokens the decoded answer keeps. What mutation testing of harness_tasks/models/families/decoding.py found
unchecked (docs/testing.md)."""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")
GenerationConfig = transformers.GenerationConfig

from harness_tasks.models.families.decoding import (  # noqa: E402
    GENERATION_MODES, decode_answers, generating_model, generation_config, resolved_generation)


def _af3_like(**over):
    """A checkpoint config like the newer Audio Flamingo 3 conversion's: sampling, a repetition penalty."""
    kw = dict(do_sample=True, temperature=0.7, top_k=20, top_p=0.8, repetition_penalty=1.05, bos_token_id=1,
              eos_token_id=2)
    kw.update(over)
    return GenerationConfig(**kw)


def _model(cfg):
    return NS(generation_config=cfg)


def _set(cfg) -> dict:
    """The fields a config sets (what differs from a bare GenerationConfig)."""
    return cfg.to_diff_dict() if hasattr(cfg, "to_diff_dict") else cfg.to_dict()


def test_the_generating_model_is_the_base_model_under_a_peft_wrapper():
    base = _model(_af3_like())
    wrapper = NS(get_base_model=lambda: base, generation_config=GenerationConfig(eos_token_id=99))
    assert generating_model(wrapper) is base
    assert generating_model(base) is base
    # greedy reads the base model's token ids, not the wrapper's
    assert generation_config(wrapper, stop_ids=()).eos_token_id == 2


def test_greedy_keeps_only_the_token_ids_and_adds_the_stop_ids_after_the_checkpoints_end_token():
    own = _af3_like()
    cfg = generation_config(_model(own), pad_token_id=0, stop_ids=[7, 2, 8])
    assert cfg.eos_token_id == [2, 7, 8]          # the checkpoint's first, a stop id already there not twice
    assert cfg.bos_token_id == 1 and cfg.pad_token_id == 0
    assert cfg.do_sample is False and cfg.num_beams == 1
    assert cfg.repetition_penalty in (None, 1.0) and cfg.temperature in (None, 1.0) and cfg.top_k in (None, 50)
    assert cfg is not own and own.do_sample is True and own.eos_token_id == 2   # the model's own is unchanged
    assert generation_config(_model(own), mode="greedy").eos_token_id == 2     # one end token: an int


def test_greedy_end_tokens_from_a_list_or_none():
    cfg = generation_config(_model(_af3_like(eos_token_id=[2, 3])), stop_ids=(3, 9))
    assert cfg.eos_token_id == [2, 3, 9]
    assert generation_config(_model(_af3_like(eos_token_id=[4, 5]))).eos_token_id == [4, 5]
    none = generation_config(_model(GenerationConfig()), stop_ids=())
    assert none.eos_token_id is None and none.pad_token_id is None
    only_stops = generation_config(_model(GenerationConfig()), stop_ids=[11])
    assert only_stops.eos_token_id == 11
    assert generation_config(NS(), pad_token_id=4, stop_ids=[5, 6]).eos_token_id == [5, 6]   # no config at all


def test_greedy_pad_is_the_checkpoints_when_it_sets_one():
    assert generation_config(_model(_af3_like(pad_token_id=3)), pad_token_id=0).pad_token_id == 3
    assert generation_config(_model(_af3_like()), pad_token_id=0).pad_token_id == 0


def test_checkpoint_mode_is_a_copy_of_the_checkpoints_config():
    own = _af3_like(pad_token_id=3)
    cfg = generation_config(_model(own), mode="checkpoint", pad_token_id=0, stop_ids=[7])
    assert cfg is not own and _set(cfg) == _set(own)
    assert cfg.do_sample is True and cfg.eos_token_id == 2 and cfg.pad_token_id == 3   # stop ids not added
    cfg.temperature = 0.1
    assert own.temperature == 0.7
    # a model without a config of its own: greedy over nothing but the given ids
    bare = generation_config(NS(), mode="checkpoint", pad_token_id=0, stop_ids=[7])
    assert bare.do_sample is False and bare.eos_token_id == 7 and bare.pad_token_id == 0


def test_checkpoint_greedy_turns_sampling_off_and_keeps_the_penalty():
    own = _af3_like()
    cfg = generation_config(_model(own), mode="checkpoint_greedy", pad_token_id=0, stop_ids=[7])
    assert cfg.do_sample is False and cfg.num_beams == 1
    assert (cfg.temperature, cfg.top_p, cfg.top_k, cfg.min_p, cfg.typical_p) == (None,) * 5
    assert cfg.repetition_penalty == 1.05 and cfg.eos_token_id == 2 and cfg.pad_token_id == 0
    assert own.do_sample is True and own.temperature == 0.7 and own.pad_token_id is None   # a copy
    kept = generation_config(_model(_af3_like(pad_token_id=3)), mode="checkpoint_greedy", pad_token_id=0)
    assert kept.pad_token_id == 3
    bare = generation_config(NS(), mode="checkpoint_greedy", pad_token_id=5)
    assert bare.do_sample is False and bare.pad_token_id == 5 and bare.eos_token_id is None


def test_an_unknown_mode_is_refused_naming_the_modes():
    with pytest.raises(ValueError) as err:
        generation_config(_model(_af3_like()), mode="sample")
    assert str(err.value) == "generation must be one of greedy, checkpoint, checkpoint_greedy, got 'sample'"
    assert GENERATION_MODES == ("greedy", "checkpoint", "checkpoint_greedy")


def test_resolved_generation_fills_transformers_defaults_and_leaves_out_the_per_call_fields():
    cfg = GenerationConfig(eos_token_id=[2, 7], temperature=0.7, do_sample=True, max_new_tokens=64)
    out = resolved_generation(cfg)
    assert out["temperature"] == 0.7 and out["do_sample"] is True and out["eos_token_id"] == [2, 7]   # set: kept
    assert out["repetition_penalty"] == 1.0 and out["top_k"] == 50 and out["num_beams"] == 1    # unset: defaults
    assert "max_new_tokens" not in out and "max_length" not in out and "transformers_version" not in out
    assert list(out) == sorted(out) and None not in out.values()
    assert not any(k.startswith("_") for k in out)
    assert "pad_token_id" not in out   # unset, no default


class _Tok:
    """A tokenizer double: ids 0 (pad), 5 and 6 are special, 9 an added special token, 10 an added plain one,
    11 an added token that does not say (not special)."""

    all_special_ids = [0, 5, 6]
    added_tokens_decoder = {9: NS(special=True), 10: NS(special=False), 11: NS()}

    def __init__(self):
        self.calls = []

    def batch_decode(self, rows, **kw):
        self.calls.append(("batch_decode", rows, kw))
        return ["batch"]

    def decode(self, ids, **kw):
        self.calls.append(("decode", ids, kw))
        return " ".join(map(str, ids))


def test_decode_answers_keeps_only_the_reasoning_delimiters_among_special_tokens():
    tok = _Tok()
    rows = np.array([[5, 1, 9, 10, 6, 0], [2, 6, 5, 0, 11, 9]])
    assert decode_answers(tok, rows, keep=[5]) == ["5 1 10", "2 5 11"]
    assert all(kind == "decode" and kw == {"skip_special_tokens": False} for kind, _, kw in tok.calls)
    assert all(type(i) is int for _, ids, _ in tok.calls for i in ids)
    assert decode_answers(tok, rows, keep=(9, 6)) == ["1 9 10 6", "2 6 11 9"]


def test_decode_answers_without_keep_is_batch_decode_skipping_special_tokens():
    tok = _Tok()
    rows = np.array([[5, 1]])
    assert decode_answers(tok, rows) == ["batch"]
    assert tok.calls == [("batch_decode", rows, {"skip_special_tokens": True})]


def test_decode_answers_for_tokenizers_without_special_lists():
    class Bare(_Tok):
        all_special_ids = None
        added_tokens_decoder = None      # e.g. mistral-common's: no mapping

    assert decode_answers(Bare(), np.array([[5, 9, 1]]), keep=[5]) == ["5 9 1"]

    class OnlyAdded(_Tok):
        all_special_ids = None

    assert decode_answers(OnlyAdded(), np.array([[5, 9, 1, 0]]), keep=[5]) == ["5 1 0"]


def test_keep_and_the_token_settings_are_keyword_only():
    rows = np.array([[5, 1]])
    with pytest.raises(TypeError):
        decode_answers(_Tok(), rows, [5])                     # keep must be named
    with pytest.raises(TypeError):
        generation_config(_model(_af3_like()), "greedy", 0)   # pad_token_id must be named
