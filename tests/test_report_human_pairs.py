"""A human row (several annotators) in a paired comparison: per annotator, order-free, hand-checked.

The comparison used to key the human answers by (category, clip) and keep the last annotator's, so
the same answers file in another line order gave another comparison. Now each annotator's answer is
paired with the model's on the same clip, the intervals resample clips with all their pairs and the
test is the exact sign-flip McNemar test over clips (:func:`analysis.report.stats.mcnemar_clustered`).
"""

from __future__ import annotations

import itertools
import json
import random

import pytest

import vocalgrad
from analysis.listen import human_evaluation
from analysis.report.analysis import compare
from analysis.report.evaluation import Evaluation
from analysis.report.markdown import _comparisons
from analysis.report.stats import mcnemar_clustered, mcnemar_exact, mcnemar_midp, paired_bootstrap_diff
from harness_tasks.metrics import score_answer

FLIP = {"increase": "decrease", "decrease": "increase"}
DRAWS = 200


def _clips(n: int, sources: int = 1) -> list[str]:
    out = []
    for s in range(sources):
        for traj, tier, d in itertools.product(vocalgrad.TRAJECTORIES, vocalgrad.TIERS, vocalgrad.DIRECTIONS):
            out.append(vocalgrad.clip_id(f"spk{s:02d}_01", "pitch", traj, tier, d))
    return out[:n]


def _model(right: dict[str, bool]) -> Evaluation:
    recs = []
    for cid, ok in right.items():
        f = vocalgrad.parse_clip_id(cid)
        raw = f["direction"] if ok else FLIP[f["direction"]]
        recs.append(dict(score_answer(raw, f["direction"]), id=cid, category=f["category"], tier=f["tier"],
                         trajectory=f["trajectory"], direction=f["direction"], source_id=f["source_id"],
                         raw=raw, retried=False))
    return Evaluation("model", "m", "", "default", records=recs, n_samples={"pitch": len(recs)})


def _answers(path, answers: list[tuple[str, str, bool]]):
    """Write (annotator, clip, right) answers in the given line order; the human Evaluation."""
    lines = []
    for ann, cid, ok in answers:
        gold = vocalgrad.parse_clip_id(cid)["direction"]
        lines.append({"annotator": ann, "clip_id": cid, "answer": gold if ok else FLIP[gold], "direction": gold})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return human_evaluation([path])


def test_two_annotators_match_a_hand_computation_in_any_line_order(tmp_path):
    c = _clips(6)
    model = _model(dict(zip(c, [True, True, False, True, False, True])))
    # ann1 answers the six clips, ann2 the first four
    answers = [("ann1", x, ok) for x, ok in zip(c, [True, False, True, False, False, True])]
    answers += [("ann2", x, ok) for x, ok in zip(c, [False, False, True, True])]
    # By hand, pairs (model, annotator): ann1 TT TF FT TF FF TT, ann2 TF TF FT TT -> 10 pairs on 6 clips;
    # model right in 7, humans in 5; only the model right: ann1 c2 c4, ann2 c1 c2 (4); only the human: c3 twice (2).
    # Per clip d = b - c: c1 +1, c2 +2, c3 -2, c4 +1; S = 2; of the 16 sign flips of (1, 2, 2, 1) only the
    # four with sum 0 have |S| < 2, so p = 12/16; six have |S| = 2 exactly, so the printed mid-p is (6 + 3) / 16.
    results = []
    for k, order in enumerate([answers, answers[::-1], random.Random(3).sample(answers, len(answers))]):
        human = _answers(tmp_path / f"a{k}.jsonl", order)
        results.append(compare(model, human, draws=DRAWS, seed=1))
    assert results[0] == results[1] == results[2]
    o = results[0]["overall"]
    assert (o["n"], o["n_clips"], o["only_a"], o["only_b"]) == (10, 6, 4, 2)
    assert o["acc_a"] == pytest.approx(0.7) and o["acc_b"] == pytest.approx(0.5) and o["diff"] == pytest.approx(0.2)
    assert o["mcnemar_p_exact"] == pytest.approx(12 / 16) and o["mcnemar_p"] == pytest.approx(9 / 16)
    per = results[0]["by_annotator"]
    assert set(per) == {"ann1", "ann2"}
    assert (per["ann1"]["n"], per["ann1"]["only_a"], per["ann1"]["only_b"]) == (6, 2, 1)
    assert (per["ann2"]["n"], per["ann2"]["acc_a"], per["ann2"]["acc_b"]) == (4, 0.75, 0.5)
    assert per["ann1"]["mcnemar_p_exact"] == mcnemar_exact(2, 1)   # one pair per clip: the plain exact test
    assert per["ann1"]["mcnemar_p"] == mcnemar_midp(2, 1)          # and its mid-p, printed
    # The interval resamples the 6 clips with all their pairs (4 clips hold two): the same seeded draws
    # over the same (model, human) pairs clustered by clip give it; resampling the 10 pairs does not.
    pairs = [(x, m, h) for x, m, h in zip(c, [True, True, False, True, False, True],
                                        [True, False, True, False, False, True])]
    pairs += [(x, m, h) for x, m, h in zip(c, [True, True, False, True], [False, False, True, True])]
    a, b, clips = [m for _, m, _ in pairs], [h for _, _, h in pairs], [("pitch", x) for x, _, _ in pairs]
    by_clip = list(paired_bootstrap_diff(a, b, clusters=clips, min_clusters=1, draws=DRAWS, seed=1))
    by_pair = list(paired_bootstrap_diff(a, b, draws=DRAWS, seed=1))
    assert o["ci"]["binomial"] == by_clip != by_pair
    lo, hi = by_clip
    assert lo < 0.2 < hi and hi - lo > 0.3  # 6 clips: a wide interval around the difference


def test_three_annotators_any_order_and_the_markdown_rows(tmp_path):
    c = _clips(48, sources=2)
    rng = random.Random(7)
    model = _model({x: rng.random() < 0.8 for x in c})
    answers = [(ann, x, rng.random() < p) for ann, p in (("a", 0.9), ("b", 0.6), ("c", 0.5))
               for x in c if rng.random() < 0.8]
    first = compare(model, _answers(tmp_path / "1.jsonl", answers), draws=DRAWS)
    for k in range(3):
        again = compare(model, _answers(tmp_path / f"s{k}.jsonl", rng.sample(answers, len(answers))), draws=DRAWS)
        assert again == first
    o = first["overall"]
    assert o["n"] == len(answers) and o["n_clips"] == len({x for _, x, _ in answers})
    assert o["acc_b"] == pytest.approx(sum(ok for *_, ok in answers) / len(answers))
    assert sum(p["n"] for p in first["by_annotator"].values()) == o["n"]
    assert all(v == v for v in o["ci"]["binomial"])   # defined (clips resampled with all their pairs)
    text = "\n".join(_comparisons([first]))
    assert "compared per annotator" in text and "| annotator b |" in text
    assert f"| {o['n_clips']} ({o['n']} pairs) |" in text


def test_clustered_mcnemar_is_the_exact_sign_flip_test():
    assert mcnemar_clustered([1] * 10 + [-1] * 2) == pytest.approx(mcnemar_exact(10, 2))
    assert mcnemar_clustered([1] * 6 + [0] * 5) == pytest.approx(mcnemar_exact(6, 0))
    assert mcnemar_clustered([0, 0]) == 1.0 and mcnemar_clustered([]) == 1.0
    assert mcnemar_clustered([1] * 10 + [-1] * 2, mid=True) == pytest.approx(mcnemar_midp(10, 2))
    # mid-p = exact less half the probability of the observed |split|: 158/4096 - (132/4096) / 2
    assert mcnemar_midp(10, 2) == pytest.approx((158 - 66) / 4096) and mcnemar_midp(0, 0) == 1.0
    rng = random.Random(5)
    for _ in range(20):   # against brute-force enumeration of the 2^m sign assignments
        d = [rng.choice([-3, -2, -1, 0, 1, 2, 3]) for _ in range(rng.randint(1, 9))]
        obs = abs(sum(d))
        flips = list(itertools.product((-1, 1), repeat=len(d)))
        brute = sum(abs(sum(s * x for s, x in zip(signs, d))) >= obs for signs in flips) / len(flips)
        assert mcnemar_clustered(d) == pytest.approx(brute)
