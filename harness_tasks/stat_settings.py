"""The one set of statistics settings (benchmark.md §8), used by every place that prints an interval or a test.

The report (``report.md``, ``report.json``, the HTML page), the leaderboard and the ``evaluate`` metric take
their draws, seed, level, alpha and the fewest sources of a clustered figure from :data:`STATS`, so that one run
gives the same interval everywhere. What each method is and how well it reaches its nominal level is in
docs/statistics.md (measured by ``benchmarks/calibration.py``).

Examples
--------
>>> STATS.draws, STATS.seed, STATS.level
(10000, 1234, 0.95)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["STATS", "StatSettings"]


@dataclass(frozen=True)
class StatSettings:
    """Methods and their settings.

    Attributes
    ----------
    draws, seed : int
        Resamples and ``numpy.random.default_rng`` seed of every bootstrap (the paper's 10,000 draws, seed 1234).
    level : float
        Coverage of every interval.
    alpha : float
        Family-wise error rate of the chance flags (Holm) and level of every test.
    min_clusters : int
        Fewest source utterances from which a clustered interval or verdict is given (below it: ``n/a``), and
        so from which the report's headline makes a claim about voices in general.
    min_clips : int
        Fewest clips from which an interval gives a verdict against chance; below it (and where the interval
        is degenerate) the exact test does, and ``too few clips`` stands where it does not reject.
    binomial, clustered, chance_flags, paired_test : str
        The methods, in words (copied into ``report.json``'s settings).
    """

    draws: int = 10_000
    seed: int = 1234
    level: float = 0.95
    alpha: float = 0.05
    min_clusters: int = 20
    min_clips: int = 10
    binomial: str = ("percentile bootstrap resampling clips independently (the paper's interval); where clips hold "
                     "several answers (a human row), the delete-one-clip jackknife t interval (clips are the units)")
    clustered: str = ("delete-one-source jackknife standard error with a Student t quantile on sources - 1 "
                      "degrees of freedom (source utterances are the independent units)")
    chance_flags: str = "exact two-sided binomial test per row, Holm-adjusted over the rows of each table"
    paired_test: str = ("McNemar test on the discordant clips, mid-p (the exact p-value is kept as mcnemar_p_exact); "
                        "the sign-flip test over clips when a clip holds several answer pairs")

    def as_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready mapping."""
        return asdict(self)


#: The settings every interval and test of the toolkit uses.
STATS = StatSettings()
