"""The chat adapters' base (hf, openai, worker), pinned without a model: the exact text each reply keeps
after the task's stop strings (a leading reasoning block kept whole), where the clips go (the task's
``audio_first`` over the adapter's), the system turn and the 256-token retry flag. What mutation testing of
harness_tasks/models/chat.py found unchecked (docs/testing.md)."""

from __future__ import annotations

import pytest

from harness_tasks.models.base import Query
from harness_tasks.models.chat import ChatLM


class _Chat(ChatLM):
    def answer(self, queries):  # pragma: no cover - never asked here
        raise AssertionError


def _q(*until, **kw) -> Query:
    return Query("Does the pitch increase or decrease?", gen_kwargs={"until": list(until)}, **kw)


@pytest.mark.parametrize("text, until, kept", [
    ("increase\n\nBecause it rises.", ["\n\n"], "increase"),
    ("increase. It rises\n\nso", ["\n\n", "."], "increase"),              # every stop string, in turn
    ("It rises. increase\n\nso", [".", "\n\n"], "It rises"),
    ("no stop here", ["\n\n"], "no stop here"),
    ("increase\n\nso", [], "increase\n\nso"),                              # no stop strings: unchanged
    ("increase\n\nso", [""], "increase\n\nso"),                            # an empty stop string is none
    ("increase\n\nso", ["", "\n\n"], "increase"),
    ("increase\n\nso\n\nthen", ["\n\n"], "increase"),           # a second stop string: cut at the first
    # a reasoning block is kept whole; only the answer after it is cut
    ("<think>rises?\n\nfalls?</think>increase\n\nso", ["\n\n"], "<think>rises?\n\nfalls?</think>increase"),
    ("<think></think>decrease\n\nso", ["\n\n"], "<think></think>decrease"),   # an empty block, still kept
    ("rises?\n\nfalls?</think>increase\n\nso", ["\n\n"], "rises?\n\nfalls?</think>increase"),  # opened in the prompt
    # the reply ended inside the reasoning (token budget): nothing to cut
    ("<think>it rises\n\nor falls", ["\n\n"], "<think>it rises\n\nor falls"),
])
def test_cut_at_stops_keeps_the_text_before_the_first_stop(text, until, kept):
    assert ChatLM.cut_at_stops(text, _q(*until)) == kept


def test_cut_at_stops_is_called_on_an_adapter_too():
    # the routes call it as ``self.cut_at_stops(text, q)``
    assert _Chat(answer_log="none").cut_at_stops("decrease\n\nso", _q("\n\n")) == "decrease"


def test_the_adapters_settings_are_keyword_only():
    with pytest.raises(TypeError):
        _Chat(True)                                           # audio_first=True must be named
    with pytest.raises(TypeError):
        _Chat(False, "Be brief.")


def test_cut_at_stops_passes_a_missing_reply_through():
    assert ChatLM.cut_at_stops(None, _q("\n\n")) is None
    q = Query("p", gen_kwargs={})
    assert ChatLM.cut_at_stops("a\n\nb", q) == "a\n\nb"     # no ``until`` at all


def test_the_tasks_audio_first_wins_over_the_adapters():
    lm, first = _Chat(answer_log="none"), _Chat(answer_log="none", audio_first="true")
    assert lm.audio_first is False and first.audio_first is True
    assert lm.audio_first_of(_q()) is False and first.audio_first_of(_q()) is True        # the task says nothing
    assert lm.audio_first_of(_q(audio_first=True)) is True
    assert first.audio_first_of(_q(audio_first=False)) is False


def test_system_turn_and_retry_flag():
    assert _Chat(answer_log="none").system_prompt is None
    assert _Chat(answer_log="none", system_prompt="").system_prompt is None      # an empty one is none
    assert _Chat(answer_log="none", system_prompt="Be brief.").system_prompt == "Be brief."
    assert ChatLM.RETRIES is True
    assert _Chat(answer_log="none").retry_unparsed is True
    assert _Chat(answer_log="none", retry_unparsed="false").retry_unparsed is False
    with pytest.raises(ValueError, match="audio_first"):
        _Chat(answer_log="none", audio_first="sometimes")
