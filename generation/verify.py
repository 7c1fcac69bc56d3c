"""Verify a VocalGrad build (``vocalgrad verify DIR [--against OTHER]``).

``DIR`` is a render folder (``vocalgrad render --out DIR``) or a Hub folder (``vocalgrad hub --out``).
Checks, each listed by what fails:

completeness
    every category (all nine; the four beep categories for a beep render), every condition (3 tiers x
    4 trajectories x 2 directions) of every selected source (``selection.csv``; sources in
    ``skipped.csv`` count as missing), with the counts per category, tier, trajectory and direction;
identity
    unique clip ids, each id equal to ``{source}__{category}__{trajectory}__{tier}__{direction}``
    of its own columns, ``label`` equal to ``direction`` (Hub);
label balance
    as many ``increase`` as ``decrease`` clips in every category;
integrity
    sha256 of every clip's bytes equal to the manifest's (render) or the ``sha256`` column (Hub);
content identity
    the build digest of the clips equal to the one render.json (or the Hub folder's ``build.json``,
    per config) records, and every ``sources/<id>.flac`` of a render equal to its recorded sha256;
frozen ids
    for a frozen selection (render.json ``selection``), every frozen item id of the domain and split;
sweep magnitudes
    for a sweep render (or the ``sweep_<attribute>`` configs of a Hub folder), the median realised
    magnitude of each level (``magnitude_realised`` of its clips that are not ``level_null``) rises with
    the declared magnitude, per category.

With ``--against OTHER`` (a Hub or render folder; :func:`load_side` reads either) every clip is
also compared with the clip of the same id there: length and SDR (dB, OTHER as reference), summarised
per category; clips missing on either side, length differences and SDR below ``min_sdr`` fail.

The result is a :class:`Verification`: ``ok``, ``problems`` and a one-screen :meth:`~Verification.summary`.
A render folder gets ``verify.json`` (what was checked, when, the outcome), which the Hub card reports
when the check passed; the record is optional: in a read-only folder it is not written and the summary
says so. Missing, damaged or unrendered clips of a render folder come with the ``vocalgrad render``
command that renders them again (:meth:`RenderDir.render_command`).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import vocalgrad as vg

from .cli_errors import report_error
from .hub_dir import HubDir
from .option_types import finite_float
from .render_dir import LINK_LOOP, RenderDir, conditions, expected_categories, known_categories
from .verify_compare import compare, sdr_db
from .verify_sides import Side, VerifyError, load_side

# How each layout is read (generation.verify_sides) and the comparison with another build
# (generation.verify_compare) live in their own modules; their public names stay importable from here.
__all__ = ["Side", "Verification", "VerifyError", "load_side", "realised_out_of_order", "register_cli", "sdr_db",
           "verify"]

#: Problems listed per kind before "... and N more".
LIST_AT_MOST = 8
#: Default lowest acceptable SDR (dB) of a clip against the other build.
MIN_SDR_DB = 60.0
#: Problems of a render folder that rerunning its render command repairs.
CLIP_MISSING = "clip file missing"
CLIP_CHANGED = "sha256 differs from the manifest (clip changed or re-encoded)"
CONDITION_MISSING = "condition not in the build"
IDENTITY = "content differs from render.json's digests (build, sources/)"
REPAIRABLE = (CLIP_MISSING, CLIP_CHANGED, CONDITION_MISSING, IDENTITY)
UNREADABLE = "unreadable file (truncated or damaged; its clips are not counted)"
#: A sweep whose measured magnitudes do not follow its declared ones (generation.sweep_measures).
NOT_RISING = "realised magnitude does not rise with the declared one (sweep)"
#: Share of a category's range of level medians by which a larger level's realised magnitude may fall.
RISE_SLACK = 0.05


@dataclass
class Verification:
    """Outcome of :func:`verify`.

    ``problems`` maps a kind of problem to the items it concerns; ``counts`` holds the clip counts
    per category and per tier / trajectory / direction; ``against`` the per-category comparison.
    """

    path: Path
    kind: str
    n_clips: int = 0
    n_sources: int = 0
    problems: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    against: dict | None = None
    against_path: Path | None = None
    seconds: float = 0.0
    repair: str | None = None  # the render command that renders missing or damaged clips again
    record_error: str | None = None  # why verify.json could not be written (e.g. a read-only folder)
    partial: list = field(default_factory=list)  # what the build lacks by request (--categories, --sources N)

    @property
    def ok(self) -> bool:
        return not any(self.problems.values())

    def add(self, kind: str, items) -> None:
        items = list(items)
        if items:
            self.problems.setdefault(kind, []).extend(items)

    def summary(self) -> str:
        """A one-screen report: verdict, counts, the comparison table and the problems."""
        lines = [f"vocalgrad verify {self.path} ({self.kind}): {'PASS' if self.ok else 'FAIL'}"
                 f"{' (partial)' if self.partial else ''} -- "
                 f"{self.n_clips} clips, {self.n_sources} sources, {self.seconds:.1f} s"]
        lines += [f"  partial: {p}" for p in self.partial]
        cats = self.counts.get("category", {})
        if cats:
            lines.append("  clips per category: " + ", ".join(f"{c} {n}" for c, n in cats.items()))
        for key in ("tier", "trajectory", "direction"):
            if self.counts.get(key):
                lines.append(f"  per {key}: " + ", ".join(f"{k} {n}" for k, n in self.counts[key].items()))
        if self.against is not None:
            lines.append(f"  against {self.against_path}:")
            lines.append("    category     compared  exact  length diff  median SDR  worst SDR (clip)")
            for cat, s in self.against.items():
                worst = _fmt_db(s["worst_sdr"])
                if s["worst_sdr"] not in (None, float("inf")):
                    worst += f" ({s['worst_clip']})"
                lines.append(f"    {cat:<12} {s['compared']:>8} {s['exact']:>6} {s['length_diff']:>12} "
                             f"{_fmt_db(s['median_sdr']):>11}  {worst}")
        for kind, items in self.problems.items():
            if not items:
                continue
            lines.append(f"  FAIL {kind}: {len(items)}")
            lines += [f"    {it}" for it in items[:LIST_AT_MOST]]
            if len(items) > LIST_AT_MOST:
                lines.append(f"    ... and {len(items) - LIST_AT_MOST} more")
        if self.repair:
            lines.append(f"  to render the missing or damaged clips again (bit-identical): {self.repair}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"path": str(self.path), "kind": self.kind, "ok": self.ok, "partial": self.partial,
                "n_clips": self.n_clips,
                "n_sources": self.n_sources, "counts": self.counts, "problems": self.problems,
                "against": None if self.against is None else {"path": str(self.against_path),
                                                              "categories": self.against}}


def _fmt_db(v) -> str:
    if v is None:
        return "-"
    return "exact" if v == float("inf") else f"{v:.1f} dB"


def _expected_categories(side: Side) -> list[str]:
    """Categories a complete build has: the four beep categories for a beep render, else all nine,
    and the extension attributes it holds (alone for a render of extension attributes only)."""
    split = side.meta.get("split") or (side.rows[0].get("split") if side.rows else "test")
    return list(expected_categories(split, {r["category"] for r in side.rows}))


def _check_structure(side: Side, res: Verification) -> None:
    rows = side.rows
    ids = Counter(r["id"] for r in rows)
    res.add("duplicate clip id", sorted(i for i, n in ids.items() if n > 1))
    res.add("clip id does not match its columns (category/trajectory/tier/direction)",
            [r["id"] for r in rows if r["id"] != vg.clip_id(r["source_id"], r["category"], r["trajectory"],
                                                               r["tier"], r["direction"])])
    res.add("label differs from direction", [r["id"] for r in rows if r.get("label") != r["direction"]])
    conds = {c: conditions(side.meta, c) for c in {r["category"] for r in rows}}  # a sweep: its levels
    res.add("unknown vocabulary value",
            [f"{r['id']} ({k}={r[k]!r})" for r in rows for k, allowed in
             (("category", known_categories({r["category"] for r in rows})), ("tier", conds[r["category"]][0]),
              ("trajectory", conds[r["category"]][1]),
              ("direction", vg.DIRECTIONS)) if r[k] not in allowed])
    # completeness
    sources = side.selected_sources if side.selected_sources is not None else sorted({r["source_id"] for r in rows})
    res.n_sources = len(sources)
    res.add("selected source skipped by the render", [f"{s}: {side.skipped[s]}" for s in sources if s in side.skipped])
    have = set(ids)
    present = {r["category"] for r in rows}
    cats = sorted(present) if side.meta.get("sweep") else _expected_categories(side)
    chosen = side.meta.get("categories")
    if chosen:  # a render verifies what it was asked for; the categories it was not asked for make it partial
        left_out = [c for c in cats if c not in chosen]
        cats = [c for c in cats if c in chosen] + [c for c in chosen if c not in cats]
        if left_out:
            res.partial.append(f"{len(cats)} of {len(cats) + len(left_out)} categories, as asked (rendered with "
                               f"--categories {','.join(chosen)}); not rendered: {', '.join(left_out)}")
    absent = [c for c in cats if c not in present]
    if absent and side.meta.get("built_partial"):  # a Hub folder built with --allow-partial
        res.partial.append(f"{len(cats) - len(absent)} of {len(cats)} categories (built with `vocalgrad hub "
                           f"--allow-partial` from a partial render); not in the build: {', '.join(absent)}")
    else:
        res.add("category not in the build", absent)
    cats = [c for c in cats if c in present]  # conditions are listed for the categories that are there
    lacking = [
        vg.clip_id(s, c, t, tier, d) for s in sources if s not in side.skipped for c in cats
        for t in conds[c][1] for tier in conds[c][0] for d in vg.DIRECTIONS
        if vg.clip_id(s, c, t, tier, d) not in have]
    if lacking and side.meta.get("built_partial"):
        res.partial.append(f"{len(lacking)} condition(s) not in the build (built with `vocalgrad hub "
                           f"--allow-partial` from a partial render), e.g. {lacking[0]}")
        lacking = []
    res.add(CONDITION_MISSING, lacking)
    res.counts = {
        "category": {c: n for c, n in sorted(Counter(r["category"] for r in rows).items(),
                                             key=lambda kv: vg.CATEGORY_NAMES.index(kv[0])
                                             if kv[0] in vg.CATEGORY_NAMES else 99)},
        "tier": dict(Counter(r["tier"] for r in rows)),
        "trajectory": dict(Counter(r["trajectory"] for r in rows)),
        "direction": dict(Counter(r["direction"] for r in rows)),
    }
    for key, pos in (("tier", 0), ("trajectory", 1)):
        per = {c: Counter(r[key] for r in rows if r["category"] == c) for c in res.counts["category"]}
        res.add(f"unequal clips per {key}",
                [f"{c}: {dict(k)}" for c, k in per.items() if len({k.get(v, 0) for v in conds[c][pos]}) > 1])
    # label balance
    bal = {c: Counter(r["label"] for r in rows if r["category"] == c) for c in res.counts["category"]}
    res.add("label balance (increase != decrease)",
            [f"{c}: increase {k.get('increase', 0)}, decrease {k.get('decrease', 0)}" for c, k in bal.items()
             if k.get("increase", 0) != k.get("decrease", 0)])


def _check_frozen(side: Side, res: Verification) -> None:
    sel = str(side.meta.get("selection", ""))
    if not sel.startswith("frozen"):
        return
    from .frozen import frozen_rows

    domain = side.meta.get("domain") or str(side.meta.get("source", "")).partition(":")[0]
    split = side.meta.get("split", "test")
    try:
        expected = [r.item_id for r in frozen_rows(domain, split)]
    except KeyError as exc:
        res.add("frozen selection unknown", [str(exc)])
        return
    present = {r["source_id"] for r in side.rows}
    absent = [i for i in expected if i not in present]
    if side.selected_sources is not None:  # a render asked for fewer (--sources N): partial, not a failure
        asked = set(side.selected_sources)
        if any(i not in asked for i in absent):
            res.partial.append(f"{len(expected) - len([i for i in absent if i not in asked])} of the {len(expected)} "
                               f"frozen {domain} {split} items, as asked (selection.csv; --sources N)")
        absent = [i for i in absent if i in asked]
    res.add(f"frozen {domain} {split} item absent (a partial build, e.g. --sources N)", absent)
    res.add("source id not in the frozen selection", sorted(present - set(expected)))


def _check_bytes(side: Side, res: Verification) -> None:
    by_id = {r["id"]: r for r in side.rows}
    missing, changed = [], []
    for cid, data in side.iter_bytes():
        row = by_id.get(cid)
        if data is None:
            missing.append(str(side.path / row["path"]) if row and row.get("path") else cid)
        elif row and row.get("sha256") and hashlib.sha256(data).hexdigest() != row["sha256"]:
            changed.append(str(side.path / row["path"]) if row.get("path") else cid)
    res.add(CLIP_MISSING, missing)
    res.add(CLIP_CHANGED, changed)


def _check_sweep(side: Side, res: Verification) -> None:
    """A sweep render, or a Hub folder's ``sweep_<attribute>`` configs: per category, the median realised
    magnitude of each level's clips (those not ``level_null``, every trajectory and direction) rises
    with the declared magnitude (:func:`realised_out_of_order`)."""
    if side.kind == "hub":
        rows = _hub_sweep_rows(side.path, res)
    elif side.meta.get("sweep"):
        rows = side.rows
    else:
        return
    rows = [r for r in rows if r.get("magnitude") is not None]
    if rows:
        res.add(NOT_RISING, realised_out_of_order(rows))


def _hub_sweep_rows(path: Path, res: Verification) -> list[dict]:
    """The sweep columns of the clips of a Hub folder's ``sweep_<attribute>`` configs (a damaged shard is
    a problem found)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .attributes.sweep import sweep_category

    cols = ["category", "magnitude", "magnitude_realised", "realised_unit", "level_null"]
    rows = []
    for folder in sorted(p for p in Path(path).iterdir() if p.is_dir() and sweep_category(p.name)):
        for shard in sorted(folder.glob("*.parquet")):
            try:
                if all(c in pq.read_schema(shard).names for c in cols):
                    rows += pq.read_table(shard, columns=cols).to_pylist()
            except (pa.ArrowException, OSError) as exc:
                res.add(UNREADABLE, [f"{shard}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"])
    return rows


def realised_out_of_order(rows: list[dict], *, slack: float = RISE_SLACK) -> list[str]:
    """The levels whose median realised magnitude falls below an earlier (smaller) level's, per category.

    A fall counts when it is larger than ``slack`` times the category's range of level medians (the
    measures are read on a few sources and vary a little); null levels (``level_null``) are left out.
    """
    out = []
    for cat in sorted({r["category"] for r in rows}):
        by_level: dict[float, list[float]] = {}
        for r in rows:
            if r["category"] == cat and not r.get("level_null") and r.get("magnitude_realised") is not None:
                by_level.setdefault(float(r["magnitude"]), []).append(float(r["magnitude_realised"]))
        medians = [(m, float(np.median(v))) for m, v in sorted(by_level.items())]
        if len(medians) < 2:
            continue
        values = [v for _, v in medians]
        allowed = slack * (max(values) - min(values))
        unit = next((r.get("realised_unit") or "" for r in rows if r["category"] == cat), "")
        top_m, top = medians[0]
        for m, v in medians[1:]:
            if v < top - allowed:
                out.append(f"{cat}: level {m:g} realised {v:.3g} {unit}, below level {top_m:g}'s {top:.3g} "
                           f"(medians over the clips not level_null)")
            if v > top:
                top_m, top = m, v
    return out


def _check_identity(side: Side, res: Verification) -> None:
    """The recorded digests against the content: render.json's build digest and ``sources/`` records
    (:meth:`RenderDir.identity_problems`), a Hub folder's per-config digests (:meth:`HubDir.identity_problems`)."""
    if side.kind == "render":
        res.add(IDENTITY, [p for p in RenderDir(side.path).identity_problems(side.rows)
                           if not p.startswith(f"{side.path}: ")])
    elif side.kind == "hub":
        res.add("build digest differs from build.json", HubDir(side.path).identity_problems(side.rows))
    if side.kind == "render":  # what `vocalgrad hub` refuses too
        res.add(LINK_LOOP, [str(p) for p in RenderDir(side.path).files_in_clips()[1]])



def verify(path, *, against=None, min_sdr: float = MIN_SDR_DB, write_record: bool = True) -> Verification:
    """Verify the build at ``path`` (and compare it with ``against``); see the module docstring.

    Parameters
    ----------
    path : path-like
        Render or Hub folder.
    against : path-like, optional
        Another build (Hub or render folder) to compare clip by clip.
    min_sdr : float
        Lowest SDR in dB a clip may have against ``against``.
    write_record : bool
        Write ``verify.json`` into a render folder (whatever the outcome).

    Returns
    -------
    Verification

    Raises
    ------
    VerifyError
        When a folder cannot be read as a build.
    """
    t0 = time.perf_counter()
    side = load_side(path)
    res = Verification(side.path, side.kind, n_clips=len(side.rows))
    res.add(UNREADABLE, side.unreadable)
    _check_structure(side, res)
    _check_frozen(side, res)
    _check_bytes(side, res)
    _check_identity(side, res)
    _check_sweep(side, res)
    if against is not None:
        other = load_side(against)
        res.against_path = other.path
        compare(side, other, res, min_sdr)
    res.seconds = time.perf_counter() - t0
    if side.kind == "render" and any(res.problems.get(k) for k in REPAIRABLE):
        res.repair = RenderDir(side.path).render_command()
    if write_record and side.kind == "render":
        from .audio import atomic_write_bytes

        record = {**res.to_json(), "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "manifest_sha256": RenderDir(side.path).manifest_sha256()}
        try:
            atomic_write_bytes(RenderDir(side.path).verify_path, (json.dumps(record, indent=2) + "\n").encode())
        except OSError as exc:  # e.g. a read-only copy: the check stands, its record is optional
            res.record_error = f"could not write {exc.filename or RenderDir(side.path).verify_path} ({exc.strerror or exc})"
    return res


def register_cli(sub) -> None:
    p = sub.add_parser(
        "verify", help="check a build: completeness, ids, labels, sha256, frozen ids",
        description="""Verify a render or Hub folder; with --against, compare it clip by clip (SDR and length per
            category) with another build. Exit status 0 = pass, 1 = problems found, 2 = unreadable input.""")
    p.add_argument("path", metavar="DIR", help="render folder or Hub folder")
    p.add_argument("--against", metavar="HUB_OR_RENDER", help="another build to compare clip by clip")
    p.add_argument("--min-sdr", type=finite_float, default=MIN_SDR_DB,
                   help=f"lowest SDR in dB a clip may have against --against (default {MIN_SDR_DB:g})")
    p.add_argument("--json", metavar="PATH", help="also write the full result as JSON")
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    try:
        res = verify(args.path, against=args.against, min_sdr=args.min_sdr)
    except (VerifyError, OSError) as exc:
        return report_error("vocalgrad verify", exc)
    print(res.summary())
    if res.record_error:
        print(f"vocalgrad verify: note: {res.record_error}; the result above stands, only its record is missing",
              file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(res.to_json(), indent=2) + "\n")
    return 0 if res.ok else 1
