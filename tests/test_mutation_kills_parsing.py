"""The answer parser under a prompt variant's own words, and its refusals: what mutation testing of
harness_tasks/parsing.py found unchecked (docs/testing.md). The default words are in test_parsing.py."""

import pytest

from harness_tasks.parsing import classify_answer, error_answer, is_error_answer, is_exact_match, parse_label

WORDS = {"increase": ["rise", "rises", "UP"], "decrease": ["fall", "falls"]}


@pytest.mark.parametrize("text, expected", [
    ("It rises.", ("increase", "parsed")),
    ("FALLS, then falls", ("decrease", "parsed")),
    ("up", ("increase", "parsed")),                   # a word given in capitals matches any case
    ("rise and fall", (None, "ambiguous")),
    ("it rose", (None, "unparsed")),                  # forms not listed are unparsed
    ("sunrise", (None, "unparsed")),                  # whole words only
    ("increase", (None, "unparsed")),                 # the default words are not this variant's
])
def test_a_variants_words_follow_the_unique_label_rule(text, expected):
    assert classify_answer(text, WORDS) == expected
    assert parse_label(text, WORDS) == expected[0]


def test_words_given_as_tuples_or_as_a_mapping_parse_alike():
    frozen = (("increase", ("rise", "rises", "UP")), ("decrease", ("fall", "falls")))
    for text in ("It rises.", "falls", "rise or fall", "nothing"):
        assert classify_answer(text, frozen) == classify_answer(text, WORDS)


@pytest.mark.parametrize("words, message", [
    ({"increase": [], "decrease": ["fall"]}, "answer label 'increase' has no words"),
    ({"increase": ["go up"], "decrease": ["fall"]}, "answer word 'go up' of label 'increase' must be one word"),
    ({"increase": ["up"], "decrease": ["Up"]}, "answer word 'Up' names two labels ('increase' and 'decrease')"),
])
def test_a_bad_vocabulary_is_refused_naming_the_word(words, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        classify_answer("x", words)


def test_words_that_are_not_a_mapping_are_refused():
    with pytest.raises(TypeError, match="answer words must map label -> list of words, got list"):
        classify_answer("x", ["rise", "fall"])


def test_the_exact_forms_of_a_variant_are_the_first_word_of_each_label():
    assert is_exact_match(" Rise.\n", WORDS) and is_exact_match("fall", WORDS)
    assert not is_exact_match("rises", WORDS)        # listed, but not the word the prompt asks for
    assert not is_exact_match("increase", WORDS)     # the default word, not this variant's
    assert not is_exact_match("rise fall", WORDS)


def test_an_error_answer_keeps_its_reason_on_one_line():
    assert error_answer("HTTP 500\n  after   4 tries") == "<<vocalgrad:error>> HTTP 500 after 4 tries"
    assert classify_answer(error_answer("x"), WORDS) == (None, "error")
    assert not is_error_answer(None) and not is_error_answer(b"<<vocalgrad:error>> x")
