"""Shared pytest setup: every test gets its own answer-log root (adapters log by default)."""

import pytest


@pytest.fixture(autouse=True)
def _isolated_answer_log(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("VOCALGRAD_CACHE", str(tmp_path_factory.mktemp("vocalgrad-cache")))
