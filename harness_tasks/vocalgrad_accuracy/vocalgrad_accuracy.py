"""VocalGrad accuracy as a Hugging Face ``evaluate`` metric (benchmark.md §7–§8).

Same numbers as ``vocalgrad report`` and the lm-eval tasks: every metric is computed by
:mod:`harness_tasks.metrics` (the toolkit must be importable: ``pip install vocalgrad``).

Load it offline from the toolkit folder::

    import evaluate
    from harness_tasks.vocalgrad_accuracy import PATH
    metric = evaluate.load(PATH)
    metric.compute(predictions=raw_outputs, references=gold_directions,
                   groups=categories, clusters=source_ids)
"""

import datasets
import evaluate

from harness_tasks.cluster_ci import cluster_interval
from harness_tasks.metrics import OVERALL_RULE, bootstrap_ci, macro_summary, score_answer, summarize
from harness_tasks.stat_settings import STATS

_CITATION = """\
@inproceedings{ryu2026vocalgrad,
  title = {VocalGrad: Evaluating Acoustic Perception in Audio Language Models},
  author = {Ryu and Yanaka},
  booktitle = {NeurIPS},
  year = {2026},
  note = {arXiv:2610.23745}
}
"""

_DESCRIPTION = """\
VocalGrad asks whether an acoustic attribute (speed, pitch, volume, distortion, roughness, noise,
echo, clarity, vibration) increases or decreases over a clip. Raw model outputs are parsed with the
official rule (case-insensitive whole words increase/increases/decrease/decreases naming exactly one
direction); anything else is unparsed and counts as wrong. Returns accuracy, accuracy over parsed
answers, balanced accuracy, per-direction accuracy, the increase ratio (response bias, over parsed
answers and over all), unparsed/ambiguous/error/blocked counts and rates, the exact-match rate, and 95 %
intervals of the accuracy, as the report gives them: binomial (percentile bootstrap of clips, 10,000
draws, seed 1234) and, when `clusters` is given, clustered by source utterance (jackknife over the
sources with a t quantile, from 20 sources; the toolkit's docs/statistics.md).

With `groups` (the category of each clip) the top-level numbers follow the toolkit's one
definition of an overall figure: the unweighted mean over groups of each group's value
(accuracy over all clips, increase ratio over parsed answers; counts are sums), which is what
lm-eval's group rows and `vocalgrad report` print; the intervals then resample each group (or
each source with all its groups) and average the groups in every draw.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str or None): raw model outputs (not pre-parsed).
    references (list of str): gold directions, "increase" or "decrease".
    groups (list, optional): a group label per clip (the category); the overall numbers are then
        the unweighted mean over groups (see `overall_rule` in the result) and the result has
        `groups`: {label: metrics}. Without groups every clip is pooled (one group).
    clusters (list, optional): the source utterance of each clip; adds `acc_ci_clustered` (NaN from fewer
        than 20 distinct clusters: too few to resample).
    bootstrap (bool, default True): compute the intervals.
    draws (int, default 10000), seed (int, default 1234): bootstrap settings.
Returns:
    dict: acc, acc_parsed, balanced_acc, acc_increase, acc_decrease, increase_ratio,
    increase_ratio_all, unparsed_rate, ambiguous_rate, error_rate, blocked_rate, exact_match_rate, n,
    n_parsed, n_unparsed, n_ambiguous, n_error, n_blocked, n_exact, acc_ci [low, high], acc_ci_clustered [low, high]
    (with clusters), groups (with groups). Undefined rates are NaN.
Examples:
    >>> metric = evaluate.load(PATH)
    >>> metric.compute(predictions=["Increase.", "decrease", "no idea"],
    ...                references=["increase", "increase", "decrease"], bootstrap=False)["acc"]
    0.3333333333333333
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class VocalgradAccuracy(evaluate.Metric):
    """VocalGrad metrics from raw outputs and gold directions."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({
                "predictions": datasets.Value("string"),
                "references": datasets.Value("string"),
            }),
            reference_urls=["https://arxiv.org/abs/2610.23745"],
        )

    def _compute(self, predictions, references, groups=None, clusters=None, bootstrap=True,
                 draws=STATS.draws, seed=STATS.seed):
        n = len(predictions)
        for name, extra in (("groups", groups), ("clusters", clusters)):
            if extra is not None and len(extra) != n:
                raise ValueError(f"{name} has {len(extra)} entries for {n} predictions; give one per clip")
        records = []
        for i, (raw, ref) in enumerate(zip(predictions, references)):
            extra = {}
            if groups is not None:
                extra["group"] = groups[i]
            if clusters is not None:
                extra["cluster"] = clusters[i]
            records.append(score_answer(raw, ref, **extra))

        def numbers(recs, macro=False):
            out = dict(macro_summary(recs, by="group") if macro else summarize(recs))
            by = "group" if macro else None
            if bootstrap:
                out["acc_ci"] = list(bootstrap_ci(recs, "acc", draws=draws, seed=seed, macro_by=by))
                if clusters is not None:
                    out["acc_ci_clustered"] = list(cluster_interval(recs, "acc", cluster="cluster", macro_by=by))
            return out

        result = numbers(records, macro=groups is not None)
        result["overall_rule"] = OVERALL_RULE if groups is not None else "all clips pooled (no groups given)"
        if groups is not None:
            split = {}
            for rec in records:
                split.setdefault(rec["group"], []).append(rec)
            result["groups"] = {g: numbers(recs) for g, recs in split.items()}
        return result
