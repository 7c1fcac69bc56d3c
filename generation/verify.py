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
    for a frozen selection (render.json ``selection``), every frozen item id of the domain and split.

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
from typing import Callable, Iterator

import numpy as np

import vocalgrad as vg

from .cli_errors import report_error
from .hub_dir import HubDir
from .option_types import finite_float
from .render_dir import RenderDir, RenderDirError, conditions, expected_categories, known_categories

__all__ = ["Side", "Verification", "load_side", "register_cli", "sdr_db", "verify"]

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


@dataclass
class Side:
    """One build, read the same way whatever its layout.

    Attributes
    ----------
    path : Path
    kind : {"render", "hub", "published"}
    meta : dict
        render.json (render) or what the Hub folder records (empty when nothing).
    rows : list of dict
        One per clip: ``id, category, tier, trajectory, direction, label, source_id, sha256`` (and
        ``path`` for a render).
    iter_bytes : callable
        ``iter_bytes(ids=None)`` yields ``(clip_id, bytes or None)`` for every clip (or the ids
        given) in storage order; None when the file is missing.
    """

    path: Path
    kind: str
    meta: dict
    rows: list
    iter_bytes: Callable[..., Iterator[tuple[str, bytes | None]]]
    selected_sources: list | None = None
    skipped: dict = field(default_factory=dict)
    unreadable: list = field(default_factory=list)  # files that could not be read (e.g. a truncated shard)


class VerifyError(vg.VocalGradError, ValueError):
    """A folder that is neither a render nor a Hub folder, or cannot be read; the message says which."""


def _render_side(root: Path) -> Side:
    rd = RenderDir(root)
    try:
        meta, manifest = rd.meta, rd.rows()
    except RenderDirError as exc:
        raise VerifyError(str(exc)) from None
    rows = [{**r, "id": r["clip_id"], "label": r["direction"]} for r in manifest]
    by_id = {r["id"]: r for r in rows}

    def iter_bytes(ids=None):
        for cid in (ids if ids is not None else list(by_id)):
            p = rd.clip_path(by_id[cid]) if cid in by_id else None
            yield cid, (p.read_bytes() if p is not None and p.is_file() else None)

    return Side(root, "render", meta, rows, iter_bytes, rd.selection(), rd.skipped())


def _hub_side(root: Path) -> Side:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = HubDir(root).category_shards()
    if not files:
        raise VerifyError(f"{root}: a Hub folder without category shards (<category>/*.parquet)")
    cols = ["id", "category", "tier", "trajectory", "direction", "label", "source_id", "sha256", "split"]
    rows, where, unreadable = [], {}, []
    for name, paths in files.items():  # the nine category configs (the test split); all/beep/train not read
        for p in paths:
            try:
                have = pq.read_schema(p).names
                t = pq.read_table(p, columns=[c for c in cols if c in have]).to_pylist()
            except (pa.ArrowException, OSError) as exc:  # a truncated or damaged shard is a problem found
                unreadable.append(f"{p}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
                continue
            for i, r in enumerate(t):
                r.setdefault("sha256", None)
                rows.append({**r, "config": name})
                where[r["id"]] = (p, i)

    def iter_bytes(ids=None):
        wanted = None if ids is None else set(ids)
        for p in sorted({p for p, _ in where.values()}):
            try:
                table = pq.read_table(p, columns=["id", "audio"]).to_pylist()
            except (pa.ArrowException, OSError):  # its rows were read: audio torn later in the file
                table = [{"id": cid, "audio": None} for cid, (q, _) in where.items() if q == p]
            for r in table:
                if wanted is None or r["id"] in wanted:
                    yield r["id"], (r["audio"] or {}).get("bytes")
        for cid in sorted(wanted - set(where)) if wanted is not None else ():
            yield cid, None

    # a Hub folder keeps no render settings: the checks that need them (frozen ids) are the render's
    return Side(root, "hub", {}, rows, iter_bytes, unreadable=unreadable)


def load_side(path) -> Side:
    """Read a build for verification or comparison: a render folder or a Hub folder.

    This is the one place that knows the layouts; to accept another (e.g. the authors' published
    AudioFolder layout), add a branch that returns a :class:`Side`.

    Raises
    ------
    VerifyError
        When ``path`` is neither.
    """
    from . import published

    if published.is_published(path):
        # The authors' AudioFolder release (a local copy or a Hub id). Their sha256 would be of the
        # WAV files, ours is of FLAC bytes: the two cannot match, so none is given.
        rows = [{**r, "sha256": None} for r in published.load_published_rows(path)]
        return Side(Path(str(path)), "published", {}, rows,
                    lambda ids=None: published.iter_file_bytes(rows, ids))
    root = Path(path)
    if not root.is_dir():
        raise VerifyError(f"{root}: no such folder")
    if RenderDir.looks_like(root):
        return _render_side(root)
    if HubDir.looks_like(root):
        return _hub_side(root)
    raise VerifyError(f"{root}: neither a render folder (render.json + manifest.parquet) nor a Hub folder "
                      "(README.md + <config>/*.parquet)")


def sdr_db(ref: np.ndarray, est: np.ndarray) -> float:
    """Signal-to-distortion ratio of ``est`` against ``ref`` in dB (inf when equal; over the common length)."""
    n = min(len(ref), len(est))
    ref, est = np.asarray(ref[:n], np.float64), np.asarray(est[:n], np.float64)
    err = float(np.sum((ref - est) ** 2))
    sig = float(np.sum(ref ** 2))
    if err == 0.0:
        return float("inf")
    return 10.0 * np.log10(max(sig, 1e-30) / err)


def _decode(data: bytes) -> tuple[np.ndarray, int]:
    from .audio import decode_mono

    return decode_mono(data, dtype=np.float64)


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
    res.add("category not in the build", [c for c in cats if c not in present])
    cats = [c for c in cats if c in present]  # conditions are listed for the categories that are there
    res.add(CONDITION_MISSING, [
        vg.clip_id(s, c, t, tier, d) for s in sources if s not in side.skipped for c in cats
        for t in conds[c][1] for tier in conds[c][0] for d in vg.DIRECTIONS
        if vg.clip_id(s, c, t, tier, d) not in have])
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


def _check_identity(side: Side, res: Verification) -> None:
    """The recorded digests against the content: render.json's build digest and ``sources/`` records
    (:meth:`RenderDir.identity_problems`), a Hub folder's per-config digests (:meth:`HubDir.identity_problems`)."""
    if side.kind == "render":
        res.add(IDENTITY, [p for p in RenderDir(side.path).identity_problems(side.rows)
                           if not p.startswith(f"{side.path}: ")])
    elif side.kind == "hub":
        res.add("build digest differs from build.json", HubDir(side.path).identity_problems(side.rows))


def _compare(side: Side, other: Side, res: Verification, min_sdr: float) -> None:
    mine, theirs = {r["id"]: r for r in side.rows}, {r["id"]: r for r in other.rows}
    res.add(f"clip only in {side.path}", sorted(set(mine) - set(theirs)))
    res.add(f"clip only in {other.path}", sorted(set(theirs) - set(mine)))
    common = set(mine) & set(theirs)
    stats: dict[str, dict] = {}
    low, length = [], []
    if side.kind == "render":  # read each own clip when its counterpart comes by
        def own(cid):
            return next(side.iter_bytes([cid]))[1]
    else:  # two Hub folders: this side's audio is read once, up front
        cache = dict(side.iter_bytes(sorted(common)))
        own = cache.get
    for cid, ref_bytes in other.iter_bytes(sorted(common)):
        est_bytes = own(cid)
        if ref_bytes is None or est_bytes is None:
            continue
        cat = mine[cid]["category"]
        s = stats.setdefault(cat, {"compared": 0, "exact": 0, "sdr": [], "length_diff": 0})
        s["compared"] += 1
        ref, sr_ref = _decode(ref_bytes)
        est, sr_est = _decode(est_bytes)
        if len(ref) != len(est) or sr_ref != sr_est:
            s["length_diff"] += 1
            length.append(f"{cid}: {len(est)} vs {len(ref)} samples at {sr_est}/{sr_ref} Hz")
        v = sdr_db(ref, est)
        if v == float("inf") and len(ref) == len(est):
            s["exact"] += 1
        s["sdr"].append((v, cid))
        if v < min_sdr:
            low.append(f"{cid}: {v:.1f} dB")
    res.against = {}
    for cat in [c for c in vg.CATEGORY_NAMES if c in stats] + [c for c in stats if c not in vg.CATEGORY_NAMES]:
        s = stats[cat]
        worst = min(s["sdr"]) if s["sdr"] else (None, None)
        res.against[cat] = {"compared": s["compared"], "exact": s["exact"],
                            "median_sdr": float(np.median([v for v, _ in s["sdr"]])) if s["sdr"] else None,
                            "worst_sdr": worst[0], "worst_clip": worst[1], "length_diff": s["length_diff"]}
    res.add(f"SDR below {min_sdr:g} dB against {other.path}", low)
    res.add(f"length differs from {other.path}", length)


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
    if against is not None:
        other = load_side(against)
        res.against_path = other.path
        _compare(side, other, res, min_sdr)
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
