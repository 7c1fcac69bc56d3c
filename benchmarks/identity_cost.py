"""Cost of content identity on the generation side: intact reruns and build digests.

Usage::

    python benchmarks/identity_cost.py                      # renders the 4-source demo (864 clips) first
    python benchmarks/identity_cost.py --render DIR         # reuse a render of `--source demo --sources 4`

Prints from one run:

1. an intact rerun of the demo's 864 clips (``vocalgrad render`` on a finished folder, in-process,
   median of ``--repeats``), with the identity steps (hashing every source, checking them and the
   recipe digest, the ``sources/`` records, the build digest written to render.json) and with those
   steps switched off (what the rerun cost before them), interleaved so that both see the same
   machine load; and the identity steps alone;
2. the build digest of a full 21,600-clip test set: over the manifest's ``(clip_id, sha256)``
   column (what the render and ``vocalgrad hub`` compute), and from the clips' bytes (what a full
   recompute reads: the demo's 864 clip files read and hashed 25 times, files in the page cache).

The targets (issue 28): the rerun within +0.5 s of before, the 21,600-clip digest within 10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FULL_CLIPS = 21_600


@contextmanager
def identity_off():
    """Switch the identity steps of a rerun off (source hashing and checks, records, digests)."""
    from generation import render_files
    from generation import render_identity as ident

    saved = {name: getattr(ident, name) for name in ("source_digests", "check_sources", "identity_fields",
                                                    "exclude_own_output", "shipped_name_warning")}
    saved_problem = render_files.source_problem
    ident.source_digests = lambda items: {}
    ident.check_sources = lambda out, digests: None
    ident.identity_fields = lambda out, rows, digests, rec: {}
    ident.exclude_own_output = lambda items, out, source: items
    ident.shipped_name_warning = lambda rec: None

    def header_only(out_dir, source_id):  # the check before: exists and is FLAC
        path = out_dir / "sources" / f"{source_id}.flac"
        return None if path.is_file() and path.read_bytes()[:4] == b"fLaC" else f"{path}: missing"

    import generation.render as render_mod  # units_to_render calls the name it imported

    render_mod.source_problem = header_only
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(ident, name, fn)
        render_mod.source_problem = saved_problem


def main(argv=None) -> int:
    from generation.option_types import positive_int

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--render", type=Path, help="a render of `--source demo --sources 4` to copy (default: render one)")
    ap.add_argument("--repeats", type=positive_int, default=5)
    ap.add_argument("--jobs", type=positive_int, default=2)
    args = ap.parse_args(argv)

    import pyarrow.parquet as pq

    from generation import render_identity as ident
    from generation.identity import build_digest, sha256_bytes
    from generation.recipe import load_recipe
    from generation.render import render
    from generation.sources import SourceOptions, read_sources

    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "demo4"
        if args.render:
            shutil.copytree(args.render, out)
        else:
            t0 = time.perf_counter()
            render("demo", out, n_sources=4, jobs=args.jobs, progress=False)
            print(f"rendered the demo's 4 sources (864 clips) in {time.perf_counter() - t0:.1f} s")
        render("demo", out, n_sources=4, jobs=args.jobs, progress=False)  # adopts the records; warms caches

        def rerun() -> float:
            t0 = time.perf_counter()
            s = render("demo", out, n_sources=4, jobs=args.jobs, progress=False)
            assert s.clips_rendered == 0 and s.units_done_before == 36, s
            return time.perf_counter() - t0

        on, off = [], []
        for _ in range(args.repeats):
            on.append(rerun())
            with identity_off():
                off.append(rerun())
        items = read_sources("demo", SourceOptions())[:4]
        rec = load_recipe()
        rows = pq.read_table(out / "manifest.parquet").to_pylist()
        alone = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            digests = ident.source_digests(items)
            ident.check_sources(out, digests)
            ident.exclude_own_output(items, out, "demo")
            ident.identity_fields(out, rows, digests, rec)
            alone.append(time.perf_counter() - t0)
        med_on, med_off = statistics.median(on), statistics.median(off)
        print(f"intact rerun of 864 clips (median of {args.repeats}): {med_on:.2f} s with identity, "
              f"{med_off:.2f} s without: {med_on - med_off:+.2f} s (target <= +0.50 s)")
        print(f"  identity steps alone: {statistics.median(alone) * 1000:.0f} ms "
              f"(4 sources hashed and checked, records, build digest of 864 clips)")

        # a full test set: 21,600 clips
        pairs = [(f"{r['clip_id']}#{k}", r["sha256"]) for k in range(FULL_CLIPS // len(rows) + 1) for r in rows]
        pairs = pairs[:FULL_CLIPS]
        t0 = time.perf_counter()
        build_digest(pairs)
        t_pairs = time.perf_counter() - t0
        files = sorted((out / "clips").rglob("*.flac"))
        size = sum(p.stat().st_size for p in files)
        t0 = time.perf_counter()
        n = 0
        while n < FULL_CLIPS:
            for p in files[:FULL_CLIPS - n]:
                sha256_bytes(p.read_bytes())
            n += min(len(files), FULL_CLIPS - n)
        t_bytes = time.perf_counter() - t0
        print(f"build digest of {FULL_CLIPS:,} clips: {t_pairs * 1000:.0f} ms from the manifest's sha256 column; "
              f"{t_bytes:.1f} s hashing their bytes ({size * FULL_CLIPS / len(files) / 1e9:.1f} GB, page cache) "
              "(target <= 10 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
