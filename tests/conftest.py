"""Shared pytest setup for the answer log (every adapter logs its answers by default).

Each test gets its own ``$VOCALGRAD_CACHE``, and the log is off unless a test passes
``answer_log=...`` itself: otherwise a test that compares two runs (batch sizes, processes) would
get the second run's answers from the first run's log.
"""

import pytest


@pytest.fixture(autouse=True)
def _isolated_answer_log(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("VOCALGRAD_CACHE", str(tmp_path_factory.mktemp("vocalgrad-cache")))
    monkeypatch.setenv("VOCALGRAD_ANSWER_LOG", "none")
