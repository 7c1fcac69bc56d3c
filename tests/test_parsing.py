"""The answer parser follows benchmark.md §7 exactly."""

import pytest

from harness_tasks.parsing import (
    ERROR_MARKER, classify_answer, error_answer, is_error_answer, is_exact_match, parse_direction,
)


@pytest.mark.parametrize("text, expected", [
    ("increase", "increase"),
    ("decrease", "decrease"),
    ("Increase.", "increase"),
    ("DECREASE", "decrease"),
    ("The pitch increases.", "increase"),
    ("It decreases", "decrease"),
    ("increase increase INCREASE", "increase"),          # repeats allowed
    ("increase, and it increases!", "increase"),         # both forms of one direction
    ('"decrease"', "decrease"),                          # punctuation around the word
    ("Answer: (decrease)", "decrease"),
    ("decrease\n", "decrease"),
    ("It does not increase.", "increase"),               # no negation handling
    ("non-increase", "increase"),                        # hyphen is a word boundary
])
def test_parsed(text, expected):
    assert parse_direction(text) == expected
    assert classify_answer(text) == (expected, "parsed")


@pytest.mark.parametrize("text, status", [
    ("", "unparsed"),
    ("   ", "unparsed"),
    (None, "unparsed"),
    ("louder", "unparsed"),
    ("It increased", "unparsed"),
    ("increasing", "unparsed"),
    ("decreased over time", "unparsed"),
    ("increasingly quiet", "unparsed"),
    ("increase_rate", "unparsed"),                       # underscore joins words
    ("increase or decrease", "ambiguous"),
    ("It decreases, then increases", "ambiguous"),
    ("Increase. No wait, decrease.", "ambiguous"),
])
def test_unparsed(text, status):
    assert parse_direction(text) is None
    assert classify_answer(text) == (None, status)


def test_error_answers_are_unparsed_even_with_direction_words():
    err = error_answer("HTTP 500 after 4 tries: cannot increase quota")
    assert err.startswith(ERROR_MARKER) and is_error_answer(err)
    assert classify_answer(err) == (None, "error")
    assert not is_error_answer("increase")


def test_non_string_is_rejected():
    with pytest.raises(TypeError, match="string or None"):
        parse_direction(3)


@pytest.mark.parametrize("text, exact", [
    ("increase", True), (" Decrease.\n", True), ("INCREASE", True),
    ("increase..", False), ('"increase"', False), ("increases", False),
    ("The answer is increase", False), ("", False), (None, False),
    (error_answer("x"), False),
])
def test_exact_match(text, exact):
    assert is_exact_match(text) is exact
