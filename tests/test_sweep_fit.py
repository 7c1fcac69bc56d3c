"""The psychometric fit on simulated observers (docs/sweep.md, docs/statistics.md).

Simulated observers answer 8 clips per source and magnitude (4 increases, 4 decreases) on a
pitch-like sweep of 1..8 units with a known sensitivity threshold, criterion (response bias) and
lapse rate. The calibration's full measurements are in docs/statistics.md; these tests check each
rule on small data, and each fails when the mistake it guards against is planted.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from analysis.report.psychometric import Observer, analyse_sweeps, sweep_markdown, table_rows, threshold_text
from analysis.report.psychometric_fit import (LAPSE_PRIOR_B, Counts, bootstrap, chance_test, deviance, fit,
                                              lapse_prior_nll, lr_statistic, p_increase, pooled_correct,
                                              sensitivity_threshold)
from analysis.report.psychometric_sim import MAGS, alpha_for, criterion_for, pooled_counts, simulate


def _records(per_source, category="pitch", zero=0):
    """Sample-log records (as the loader gives them) of simulated per-source counts."""
    out = []
    for s, src in enumerate(per_source):
        for j, m in enumerate(MAGS):
            for d, (k, n) in (("increase", (src[0, j], src[1, j])), ("decrease", (src[2, j], src[3, j]))):
                for i in range(int(n)):
                    pred = "increase" if i < k else "decrease"
                    out.append({"category": category, "tier": f"m{int(m)}", "direction": d, "source_id": f"s{s}",
                                "pred": pred, "correct": pred == d})
        for i in range(zero):
            out.append({"category": category, "tier": "m0", "direction": "increase", "source_id": f"s{s}",
                        "pred": "increase", "correct": True})
    return out


def _observer(records, label="model-x"):
    obs = Observer(label)
    obs.records["pitch"] = records
    return obs


def test_the_threshold_is_the_sensitivity_alone_at_75_percent():
    a = alpha_for(3.0, 2.5)
    assert sensitivity_threshold(a, 2.5) == pytest.approx(3.0)
    assert pooled_correct(3.0, a, 2.5, 0.0, 0.0) == pytest.approx(0.75)  # unbiased, no lapse: 75 % correct
    # a lapse scales the function between its guess rate and asymptote: the midpoint stays at the threshold
    lapse = 0.2
    mid = 0.5 + (1 - lapse / 2 - 0.5) / 2
    assert pooled_correct(3.0, a, 2.5, 0.0, lapse) == pytest.approx(mid)
    p1, p0 = p_increase(0.0, a, 2.5, criterion_for(0.9), 0.0)
    assert p1 == pytest.approx(0.9) and p0 == pytest.approx(0.9)  # the bias at no change


@pytest.mark.parametrize("share,lapse,seed", [(0.9, 0.02, 1), (0.95, 0.02, 2), (0.5, 0.15, 3), (0.8, 0.2, 5)])
def test_biased_and_lapsing_observers_get_their_sensitivity_threshold_back(share, lapse, seed):
    data = simulate(MAGS, threshold=3.0, increase_share=share, lapse=lapse, n_sources=30, seed=seed)
    f = fit(pooled_counts(data))
    assert abs(f.threshold - 3.0) / 3.0 < 0.2, f  # one observer; the bias is measured in docs/statistics.md
    assert f.criterion == pytest.approx(criterion_for(share), abs=0.35)
    lo, hi = bootstrap(MAGS, data, draws=150, seed=seed, f=f)["threshold_ci"]
    assert lo <= 3.0 <= hi, (lo, hi)


def test_the_lapse_prior_is_a_beta_on_one_sides_lapse_as_psignifit_puts_it():
    """psignifit's lambda is the distance of the function from 1 at the top: half our lapse (a lapse guesses
    right half the time). The prior is Beta(1, b) on that lambda; the old one was on ``2 * lapse`` (four times
    the pull), which read an unbiased volume-like observer lapsing 20 % as 18 % less sensitive."""
    from scipy.stats import beta

    lapses = np.array([0.0, 0.05, 0.2, 0.45])
    nll, grad, hess = lapse_prior_nll(lapses)
    log_pdf = beta.logpdf(lapses / 2, 1.0, LAPSE_PRIOR_B)  # on psignifit's lambda = lapse / 2
    assert -nll - log_pdf == pytest.approx(np.full(4, -log_pdf[0]), abs=1e-9)  # equal up to a constant
    h = 1e-6  # the derivatives the fit's Newton steps use
    assert grad == pytest.approx((lapse_prior_nll(lapses + h)[0] - lapse_prior_nll(lapses - h)[0]) / (2 * h), rel=1e-5)
    assert hess == pytest.approx((lapse_prior_nll(lapses + h)[1] - lapse_prior_nll(lapses - h)[1]) / (2 * h), rel=1e-5)
    # the fit's posterior carries exactly this prior
    c = pooled_counts(simulate(MAGS, threshold=3.0, lapse=0.2, n_sources=10, seed=2))
    f = fit(c)
    assert f.nll + f.loglik == pytest.approx(float(lapse_prior_nll(f.lapse)[0]), abs=1e-9) and f.lapse > 0.1


def test_a_volume_like_observer_lapsing_20_percent_keeps_its_threshold():
    # 24 voices, 7 levels of 6 dB, slope 2: the lapse shows only at the top two levels, where a prior that
    # pulls it to zero makes the fit read the misses as a shallower, later function (+18 % with the old prior)
    mags = np.arange(6.0, 43.0, 6.0)
    data = simulate(mags, threshold=20.0, beta=2.0, lapse=0.2, n_sources=24, seed=8)
    f = fit(pooled_counts(data, mags))
    assert abs(f.threshold - 20.0) / 20.0 < 0.10, f
    lo, hi = bootstrap(mags, data, draws=200, seed=8, f=f)["threshold_ci"]
    assert lo <= 20.0 <= hi, (lo, hi)


def test_the_pooled_point_reads_bias_as_deafness_and_the_threshold_does_not():
    data = simulate(MAGS, threshold=3.0, increase_share=0.95, lapse=0.0, n_sources=40, seed=7)
    entry = analyse_sweeps([_observer(_records(data))], draws=0, mc_draws=39)["attributes"]["pitch"]["observers"][0]
    assert entry["pooled_threshold"] > 1.2 * entry["threshold"]  # bias makes the pooled 75 % point later
    assert abs(entry["threshold"] - 3.0) < 0.3 and entry["criterion"] < -1.0


def test_the_lr_and_the_deviance_are_twice_the_log_likelihood_differences():
    data = simulate(MAGS, threshold=4.0, lapse=0.05, n_sources=6, seed=5)
    c = pooled_counts(data)
    f = fit(c)
    p1, p0 = p_increase(MAGS, f.alpha, f.beta, f.criterion, f.lapse)
    ll_fit = (binom.logpmf(c.k1, c.n1, p1) + binom.logpmf(c.k0, c.n0, p0)).sum()
    ll_sat = (binom.logpmf(c.k1, c.n1, c.k1 / c.n1) + binom.logpmf(c.k0, c.n0, c.k0 / c.n0)).sum()
    k, n = c.k1.sum() + c.k0.sum(), c.n
    q = k / n
    ll_null = (binom.logpmf(c.k1, c.n1, q) + binom.logpmf(c.k0, c.n0, q)).sum()
    assert deviance(c, f) == pytest.approx(2 * (ll_sat - ll_fit), rel=1e-6)
    assert lr_statistic(c, f) == pytest.approx(2 * (ll_fit - ll_null), rel=1e-6)


def test_the_chance_test_is_not_conservative_on_a_coin():
    # a chi-square reference at this boundary null gives p-values averaging about 0.87 (1 % rejected); the
    # Monte-Carlo reference gives uniform p-values (mean 0.5)
    ps = []
    for seed in range(10):
        c = pooled_counts(simulate(MAGS, threshold=None, lapse=0.0, n_sources=20, seed=100 + seed))
        ps.append(chance_test(c, fit(c), draws=19, seed=seed)["p"])
    assert 0.25 < np.mean(ps) < 0.75, ps


def test_a_coin_gets_no_threshold_and_an_observer_beyond_the_sweep_neither():
    coin = simulate(MAGS, threshold=None, n_sources=20, seed=3)
    beyond = simulate(MAGS, threshold=14.0, beta=1.5, lapse=0.0, n_sources=60, seed=4)
    observers = [_observer(_records(coin), "coin"), _observer(_records(beyond), "far")]
    block = analyse_sweeps(observers, draws=0, mc_draws=39)
    rows = {o["label"]: o for o in block["attributes"]["pitch"]["observers"]}
    assert rows["coin"]["threshold"] is None and rows["coin"]["p_chance"] > 0.05
    far = rows["far"]
    assert far["p_chance"] <= 0.05  # it does hear something: the beyond-the-sweep rule, not the chance rule
    assert far["threshold"] is None and far["reached"] is False
    assert table_rows(block["attributes"]["pitch"])[1][1] == "> 8"


def test_the_bootstrap_resamples_sources_not_clips():
    # every source answers alike: resampling whole sources gives the same data every draw (a zero-width
    # interval); resampling clips would scatter the draws
    one = simulate(MAGS, threshold=3.0, n_sources=1, seed=9)
    same = np.repeat(one, 12, axis=0)
    lo, hi = bootstrap(MAGS, same, draws=40, seed=0)["threshold_ci"]
    assert hi - lo < 1e-6, (lo, hi)
    varied = simulate(MAGS, threshold=3.0, n_sources=12, seed=9)
    lo, hi = bootstrap(MAGS, varied, draws=40, seed=0)["threshold_ci"]
    assert hi - lo > 0.05


def test_interval_and_threshold_texts_say_below_and_beyond_the_sweep():
    assert threshold_text(math.inf, 8.0, 1.0) == "> 8"
    assert threshold_text(None, 8.0, 1.0) == "> 8"
    assert threshold_text(0.3, 8.0, 1.0) == "< 1"
    assert threshold_text(3.14159, 8.0, 1.0) == "3.14"
    entry = {"largest": 8.0, "smallest": 1.0, "observers": [{
        "label": "m", "kind": "model", "threshold": 0.6, "threshold_ci": [0.3, 1.5], "criterion": 0.0,
        "criterion_ci": None, "pooled_threshold": 0.7, "beta": 2.0, "beta_ci": None, "lapse": 0.0, "at_bound": [],
        "gof": {"poor": False, "p": 0.5}, "p_chance": 0.005, "zero": {"acc": None}, "unparsed_share": 0.0,
        "n_sources": 20, "n_clips": 1000}]}
    row = table_rows(entry)[0]
    assert row[1] == "< 1" and row[2] == "[< 1, 1.5]", row


def test_a_fit_at_a_bound_is_flagged():
    # a step: chance at magnitude 1, perfect from 2 on: the slope runs to its upper bound
    per = np.zeros((20, 4, MAGS.size))
    per[:, 1], per[:, 3] = 4, 4
    per[:, 0, 1:] = 4  # "increase" on every increase clip from magnitude 2 on
    per[:, 0, 0], per[:, 2, 0] = 2, 2  # a coin at magnitude 1
    f = fit(pooled_counts(per))
    assert "beta" in f.at_bound, f
    block = analyse_sweeps([_observer(_records(per))], draws=0, mc_draws=39)
    row = table_rows(block["attributes"]["pitch"])[0]
    assert "at bound: beta" in row[7], row
    easy = fit(pooled_counts(simulate(MAGS, threshold=3.0, n_sources=20, seed=2)))
    assert easy.at_bound == []


@pytest.mark.parametrize("case", ["zero only", "one level", "unparsed", "nan"])
def test_degenerate_sweeps_say_why_there_is_no_threshold(case):
    data = simulate(MAGS, threshold=3.0, n_sources=3, seed=1)
    recs = _records(data, zero=2)
    if case == "zero only":
        recs = [r for r in recs if r["tier"] == "m0"]
    elif case == "one level":
        recs = [r for r in recs if r["tier"] in ("m0", "m4")]
    else:
        for r in recs:
            r["pred"] = None if case == "unparsed" else float("nan")
            r["correct"] = False
    block = analyse_sweeps([_observer(recs)], draws=0, mc_draws=39)
    o = block["attributes"]["pitch"]["observers"][0]
    assert o["threshold"] is None and o["problem"]
    md = sweep_markdown(block)
    want = {"zero only": "only zero-change clips", "one level": "one non-zero magnitude only (4)",
            "unparsed": "are unparsed", "nan": "are unparsed"}[case]
    assert f"| no threshold: " in md and want in md, md


def test_null_level_clips_are_left_out_of_the_fit():
    data = simulate(MAGS, threshold=3.0, n_sources=10, seed=11)
    recs = _records(data)
    for r in recs:
        if r["tier"] in ("m1", "m2"):
            r["level_null"] = True
            r["pred"], r["correct"] = "increase", r["direction"] == "increase"
    o = analyse_sweeps([_observer(recs)], draws=0, mc_draws=39)["attributes"]["pitch"]["observers"][0]
    assert [p["magnitude"] for p in o["points"]] == list(MAGS[2:]) and o["null_level_clips"] == 10 * 2 * 8


def test_the_fit_agrees_with_psignifit_where_the_thresholds_mean_the_same():
    """psignifit 4 (2AFC, Weibull): its threshold (the scaled function's midpoint) is ours for an unbiased
    observer, its lapse is half ours (a lapse guesses right half the time). Agreement within 4 %."""
    psignifit = pytest.importorskip("psignifit")
    for seed, (t, lapse) in enumerate([(2.0, 0.1), (5.0, 0.0)]):
        d = simulate(MAGS, threshold=t, lapse=lapse, n_sources=100, seed=seed).sum(0)
        f = fit(Counts(MAGS, *d))
        data = np.column_stack([MAGS, d[0] + d[3] - d[2], d[1] + d[3]])
        r = psignifit.psignifit(data, experiment_type="2AFC", sigmoid="weibull", verbose=False,
                                fixed_parameters={"eta": 0.0},
                                grid_steps={"threshold": 25, "width": 25, "lambda": 15})
        assert f.threshold == pytest.approx(r.parameter_estimate["threshold"], rel=0.04), (t, lapse)
        assert f.lapse / 2 == pytest.approx(r.parameter_estimate["lambda"], abs=0.02), (t, lapse)


def test_answers_at_the_null_get_chance_p_one_not_a_rounding_verdict():
    # every answer "increase": the statistic is 0 and so is every draw's; refits a rounding below the null
    # (-1e-7) must not count as smaller than the observed 0 (that gave p = 1 / (1 + draws), "above chance")
    n = np.full(MAGS.size, 24.0)
    c = Counts(MAGS, n, n, n, n)
    ch = chance_test(c, fit(c), draws=39, seed=0)
    assert ch["lr"] == 0.0 and ch["p"] == 1.0, ch


def test_the_fits_do_not_depend_on_the_number_of_worker_processes():
    # the report fits every observer x attribute in worker processes: each fit draws from its own seeds
    observers = []
    for i, t in enumerate((2.0, None)):
        obs = Observer(f"m{i}")
        for cat in ("pitch", "volume"):
            recs = _records(simulate(MAGS, threshold=t, n_sources=10, seed=10 * i + len(cat)), "pitch")
            obs.records[cat] = [dict(r, category=cat) for r in recs]
        observers.append(obs)
    one = analyse_sweeps(observers, draws=10, mc_draws=9, jobs=1)
    two = analyse_sweeps(observers[::-1], draws=10, mc_draws=9, jobs=2)
    assert one["attributes"]["pitch"]["observers"][0]["threshold_ci"]  # the bootstrap ran
    for cat in ("pitch", "volume"):
        assert sorted(one["attributes"][cat]["observers"], key=lambda o: o["label"]) == \
            sorted(two["attributes"][cat]["observers"], key=lambda o: o["label"])


def _volume_records(seed=0, realised=None, unit="dB gain"):
    """A 12-voice volume sweep (6-42 dB, jump and linear clips) answered by an observer of threshold 20 dB; every
    clip carries what it realised: the jump clips their declared dB, the linear ones 0.89 of it, except
    ``realised`` {level: (jump, linear, clipped share)}."""
    mags = np.arange(6.0, 43.0, 6.0)
    data = simulate(mags, threshold=20.0, beta=2.0, lapse=0.0, n_sources=12, seed=seed)
    realised = realised or {}
    out = []
    for s, src in enumerate(data):
        for j, m in enumerate(mags):
            jump, linear, clipped = realised.get(m, (m, 0.89 * m, 0.0))
            for d, (k, n) in (("increase", (src[0, j], src[1, j])), ("decrease", (src[2, j], src[3, j]))):
                for i in range(int(n)):
                    traj = ("jump", "linear")[i % 2]
                    pred = "increase" if i < k else "decrease"
                    out.append({"id": f"s{s}__volume__{traj}__m{int(m)}__{d}__{i}", "category": "volume",
                                "tier": f"m{int(m)}", "trajectory": traj, "direction": d, "source_id": f"s{s}",
                                "pred": pred, "correct": pred == d, "magnitude": m, "magnitude_unit": "dB",
                                "magnitude_realised": jump if traj == "jump" else linear, "realised_unit": unit,
                                "clipped_ratio": clipped if traj == "jump" else 0.0, "level_change_db": 0.0})
    return out


def test_the_fit_places_a_clipped_level_where_it_was_heard_and_the_report_names_the_clipped_share():
    # 42 dB realised 38 on its jump clips (all clipped); 36 dB 35.5 (1.4 % off: within the tolerance)
    recs = _volume_records(realised={42.0: (38.0, 33.0, 0.01), 36.0: (35.5, 31.6, 0.002)})
    obs = Observer("model-x")
    obs.records["volume"] = recs
    block = analyse_sweeps([obs], draws=0, mc_draws=19)["attributes"]["volume"]
    levels = {r["magnitude"]: r for r in block["levels"]}
    assert levels[42.0]["realised"] == 38.0 and levels[42.0]["fit_magnitude"] == 38.0
    assert levels[36.0]["fit_magnitude"] == 36.0 and levels[6.0]["fit_magnitude"] == 6.0  # linear's 0.89 unused
    assert levels[42.0]["clipped_share"] == pytest.approx(0.5) and levels[30.0]["clipped_share"] == 0.0
    points = {p["magnitude"]: p["fit_magnitude"] for p in block["observers"][0]["points"]}
    assert points[42.0] == 38.0 and points[36.0] == 36.0 and block["largest"] == 38.0
    note = block["levels_note"]
    assert "36 (50 % of 96), 42 (50 % of 96)" in note and "42 as 38" in note and "36 as" not in note
    assert note in sweep_markdown({"form": "", "threshold": "", "bootstrap": "", "tests": "",
                                   "attributes": {"volume": block}})
    assert "level changed" not in note  # volume's level change is the attribute itself


def test_levels_in_another_unit_or_without_jump_clips_stay_declared_and_a_clean_sweep_says_nothing():
    recs = _volume_records(realised={42.0: (30.0, 26.0, 0.0)}, unit="residual/speech RMS")
    obs = Observer("m")
    obs.records["volume"] = recs
    block = analyse_sweeps([obs], draws=0, mc_draws=19)["attributes"]["volume"]
    assert all(r["fit_magnitude"] == r["magnitude"] for r in block["levels"]) and block["levels_note"] == ""
    no_jump = [r for r in _volume_records(realised={42.0: (30.0, 26.0, 0.0)}) if r["trajectory"] != "jump"]
    obs.records["volume"] = no_jump
    block = analyse_sweeps([obs], draws=0, mc_draws=19)["attributes"]["volume"]
    assert all(r["fit_magnitude"] == r["magnitude"] and r["realised"] is None for r in block["levels"])


def test_a_selection_of_calibration_cells_keeps_their_seeds_from_the_whole_plan(monkeypatch):
    from analysis.report import psychometric_sim as ps

    base = {"threshold": 3.0, "beta": 3.0, "lapse": 0.02}
    plan = ([(base, 10), ({**ps.SHAPES[1], "lapse": 0.2}, 10)], [({"threshold": None, "lapse": 0.0}, 10, "chance")],
            3, 20, 4, 9)
    monkeypatch.setattr(ps, "_plan", lambda quick: plan)
    whole = ps.calibration_cells(True, workers=1)
    seen = []
    some = ps.calibration_cells(True, workers=1, progress=lambda c: seen.append(len(c)),
                                select=lambda obs, s, which: "shape" in obs)
    assert len(some) == 3 and some == [c for c in whole if "volume-like" in c["truth"]]
    assert seen == [3] and "threshold 20, slope 2, lapse 0.2, volume-like sweep 6-42" == some[0]["truth"]


def test_more_simulations_per_cell_keep_the_fewer_ones_seeds_as_their_first(monkeypatch):
    """A cell rerun with more simulations (80 -> 500 in docs/statistics.md) starts with the earlier run's own seeds,
    and its simulations are its own: no seed is shared with the next cell whatever the count."""
    from analysis.report import psychometric_sim as ps

    cells = [({"threshold": 3.0, "lapse": 0.0}, 10), ({"threshold": 3.0, "lapse": 0.2}, 10),
             ({"threshold": 3.0, "lapse": 0.1}, 20)]

    def seeds(n_cov):
        got = []

        def job(args):
            got.append((args[0]["lapse"], args[1], args[3]))
            return True, True, 3.0, 3.0, 0.1

        monkeypatch.setattr(ps, "_plan", lambda quick: (cells, [], n_cov, 20, 0, 9))
        monkeypatch.setattr(ps, "_coverage_job", job)
        out = ps.calibration_cells(True, workers=1, select=lambda obs, s, which: obs["lapse"] > 0)
        assert [c["n_sims"] for c in out] == [n_cov] * 6
        return {cell: [s for lapse, n, s in got if (lapse, n) == cell] for cell in ((0.2, 10), (0.1, 20))}

    few, many = seeds(3), seeds(5)
    assert all(many[cell][:3] == few[cell] and len(many[cell]) == 5 for cell in few)
    assert many[(0.2, 10)] == [1000, 1001, 1002, 1003, 1004] and not set(many[(0.2, 10)]) & set(many[(0.1, 20)])


def test_the_lapse_cells_hold_every_shape_observer_and_size_and_the_older_ones_keep_their_seeds():
    from analysis.report import psychometric_sim as ps

    cov = ps._plan(False)[0]
    old = ((0.5, 0.0), (0.5, 0.2), (0.8, 0.2))   # calibrated first: their seeds (1000 * plan index) are in the docs
    new = ((0.5, 0.1), (0.8, 0.0))                # added later, after every older cell
    want = [({**shape, "lapse": lapse, "increase_share": share}, s)
            for group in (old, new) for shape in ps.SHAPES for share, lapse in group for s in (10, 20, 100)]
    at = [i for i, (obs, _) in enumerate(cov) if "shape" in obs]
    assert at == list(range(12, 12 + 45)) and [cov[i] for i in at] == want


def test_the_command_runs_only_the_cells_its_sources_lapse_and_share_options_keep(monkeypatch, tmp_path):
    import json

    from analysis.report import psychometric_sim as ps

    shape = ps.SHAPES[0]
    cells = [({**shape, "lapse": 0.1, "increase_share": 0.5}, 10), ({**shape, "lapse": 0.1, "increase_share": 0.5}, 20),
             ({**shape, "lapse": 0.0, "increase_share": 0.8}, 10), ({**shape, "lapse": 0.0, "increase_share": 0.5}, 10),
             ({"threshold": 3.0, "beta": 3.0, "lapse": 0.0, "increase_share": 0.8}, 10)]
    monkeypatch.setattr(ps, "_plan", lambda quick: (cells, [], 2, 10, 0, 9))

    def run(*args):
        out = tmp_path / "cells.json"
        assert ps.main(["--quick", "--workers", "1", "--json", str(out), *args]) == 0
        return {c["truth"] + " | " + c["design"] for c in json.loads(out.read_text())["cells"]
                if c["method"].startswith("threshold (")}

    lapse0_biased = run("--only", "lapse", "--lapse", "0", "--increase-share", "0.8")
    assert lapse0_biased == {"threshold 3, slope 3, 80 % 'increase', lapse 0, pitch-like sweep 1-8 | "
                             "10 sources, sources alike"}
    assert run("--lapse", "0.1", "--sources", "20") == {"threshold 3, slope 3, lapse 0.1, pitch-like sweep 1-8 | "
                                                         "20 sources, sources alike"}
    assert len(run("--sources", "10")) == 4 and len(run("--lapse", "0.01")) == 0


def test_the_chance_tests_reference_shuffles_the_observed_answers_among_the_clips():
    # a permutation test: every draw keeps the observed number of "increase" answers (a draw from the observed
    # share would not, and rejected a biased coin in 7.3 % of runs at 10 sources instead of 5 %)
    from analysis.report.psychometric_fit import _shuffled

    c = pooled_counts(simulate(MAGS, threshold=None, increase_share=0.8, lapse=0.0, n_sources=10, seed=4))
    k1, k0 = _shuffled(np.random.default_rng(0), c, 400)
    total = c.k1.sum() + c.k0.sum()
    assert np.all(k1.sum(1) + k0.sum(1) == total) and np.all(k1 <= c.n1) and np.all(k0 <= c.n0)
    assert k1.mean(0) == pytest.approx(total * c.n1 / c.n, rel=0.05)  # every clip equally likely to get one
