"""The listening page in a real headless Chromium: answer, reload, resume, two annotators, practice."""

from __future__ import annotations

import json

import pytest

from analysis.listen import ListenApp, open_catalog

from _listen_helpers import chromium, make_render, serving
from _timing import hang_guard

pytestmark = pytest.mark.timeout(180)


def _wait(driver, cond, timeout=20):
    """Waits until ``cond`` holds; ``timeout`` (for a free machine, scaled by its load) only ends a hang."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, hang_guard(timeout), poll_frequency=0.05).until(lambda d: cond(d))


def _text(driver, el_id):
    return driver.find_element("id", el_id).text


def _visible(driver, el_id):
    return driver.find_element("id", el_id).is_displayed()


def _answer(driver, how: str):
    """Wait until the answer buttons unlock (clip played to the end), then answer."""
    from selenium.webdriver.common.keys import Keys

    before = _text(driver, "progress-text")
    _wait(driver, lambda d: d.find_element("id", "btn-increase").is_enabled())
    if how == "key-up":
        driver.find_element("tag name", "body").send_keys(Keys.ARROW_UP)
    elif how == "key-d":
        driver.find_element("tag name", "body").send_keys("d")
    else:  # a double click must still record one answer
        btn = driver.find_element("id", f"btn-{how}")
        driver.execute_script("arguments[0].click(); arguments[0].click();", btn)
    _wait(driver, lambda d: _text(d, "progress-text") != before or _visible(d, "finished")
          or _visible(d, "feedback"))


def _start(driver, url):
    from selenium.webdriver.common.keys import Keys

    driver.get(url)
    _wait(driver, lambda d: _visible(d, "intro") or _visible(d, "trial") or _visible(d, "finished"))
    if _visible(driver, "intro"):
        driver.find_element("tag name", "body").send_keys(Keys.ENTER)
        _wait(driver, lambda d: _visible(d, "trial"))


def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_answer_reload_resume_two_annotators(tmp_path):
    data = make_render(tmp_path / "render", categories=("pitch", "volume"))
    answers = tmp_path / "answers.jsonl"
    cat = open_catalog(data)
    app_a = ListenApp(cat, "alice", answers, per_category=2)
    app_b = ListenApp(cat, "bob", answers, per_category=2)
    assert [c.clip_id for c in app_a.study] != [c.clip_id for c in app_b.study]  # own order each
    with serving(app_a) as url_a, serving(app_b) as url_b, chromium(tmp_path) as driver:
        _start(driver, url_a)
        assert _text(driver, "progress-text").startswith("0 / 4")
        assert "Does the" in _text(driver, "question")
        _answer(driver, "key-up")
        _answer(driver, "decrease")  # double click
        assert _text(driver, "progress-text").startswith("2 / 4")

        # a second annotator in another tab, on their own server, same answers file
        first = driver.current_window_handle
        driver.switch_to.new_window("tab")
        _start(driver, url_b)
        _answer(driver, "key-d")
        driver.switch_to.window(first)

        driver.refresh()  # closing/reloading the page resumes where alice stopped
        _start(driver, url_a)
        assert _text(driver, "progress-text").startswith("2 / 4")
        _answer(driver, "increase")
        _answer(driver, "key-d")
        _wait(driver, lambda d: _visible(d, "finished"))
        assert _text(driver, "progress-text").startswith("4 / 4")

    lines = _lines(answers)
    alice = [x for x in lines if x["annotator"] == "alice"]
    bob = [x for x in lines if x["annotator"] == "bob"]
    assert [x["answer"] for x in alice] == ["increase", "decrease", "increase", "decrease"]
    assert [x["clip_id"] for x in alice] == [c.clip_id for c in app_a.study]  # asked in alice's order
    assert len({x["clip_id"] for x in alice}) == 4
    assert [x["answer"] for x in bob] == ["decrease"] and bob[0]["clip_id"] == app_b.study[0].clip_id
    for x in lines:
        assert x["rt_sec"] is not None and 0 <= x["rt_sec"] < 60
        assert x["plays"] >= 1 and x["practice"] is False
        assert x["direction"] == cat.clips[x["clip_id"]].direction


def test_practice_feedback_with_figure(tmp_path):
    data = make_render(tmp_path / "render", categories=("volume",))
    answers = tmp_path / "answers.jsonl"
    app = ListenApp(open_catalog(data), "carol", answers, per_category=2, practice=1)
    practice_clip = app.practice[0]
    assert practice_clip.clip_id not in {c.clip_id for c in app.study}
    with serving(app) as url, chromium(tmp_path) as driver:
        driver.get(url)
        _wait(driver, lambda d: _visible(d, "intro"))
        assert _visible(driver, "intro-practice")
        driver.find_element("id", "start").click()
        _wait(driver, lambda d: "Practice" in _text(d, "phase"))
        _answer(driver, "increase")
        _wait(driver, lambda d: _visible(d, "feedback"))
        assert "practice 1 / 1" in _text(driver, "progress-text")
        text = _text(driver, "feedback-text")
        assert text.startswith("Correct" if practice_clip.direction == "increase" else "Not quite")
        assert practice_clip.direction in text
        _wait(driver, lambda d: d.execute_script(
            "const i = document.getElementById('feedback-img'); return i.complete && i.naturalWidth > 300;"),
            timeout=90)
        driver.find_element("id", "continue").click()
        _wait(driver, lambda d: _visible(d, "trial") and _text(d, "phase") == "")
        assert "practice 1 / 1" in _text(driver, "progress-text")
    lines = _lines(answers)
    assert len(lines) == 1 and lines[0]["practice"] is True and lines[0]["clip_id"] == practice_clip.clip_id
