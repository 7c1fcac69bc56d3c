"""Digests of a ``vocalgrad demo`` output folder, to show that a refactoring changed no output.

Usage: ``python scripts/fingerprint.py DEMO_OUT [--against OTHER.json]``

Prints one JSON object: the sha256 of the render's sha256 column (sorted by clip id), the sha256
of every file of the Hub folder except the card's date-free parts, and the report's numbers
(report.json without file paths and timings). With ``--against`` it compares and exits 1 on any
difference, naming it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _strip(obj):
    """report.json without what names this run's paths or timings."""
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in ("files", "path", "out", "seconds", "generated")}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def fingerprint(root: Path) -> dict:
    import pyarrow.parquet as pq

    render = next(p.parent for p in root.rglob("manifest.parquet"))
    m = pq.read_table(render / "manifest.parquet", columns=["clip_id", "sha256"]).to_pylist()
    col = "\n".join(f"{r['clip_id']} {r['sha256']}" for r in sorted(m, key=lambda r: r["clip_id"]))
    hub = next(p.parent for p in root.rglob("README.md") if any(p.parent.glob("*/*.parquet")))
    files = {p.relative_to(hub).as_posix(): _sha(p.read_bytes()) for p in sorted(hub.rglob("*"))
             if p.is_file() and not p.name.startswith(".vocalgrad.")}  # the ownership marker and lock hold times and pids
    out = {"clips": len(m), "sha256_column": _sha(col.encode()), "hub_files": files}
    rep = root / "report" / "report.json"
    if rep.is_file():
        out["report"] = _sha(json.dumps(_strip(json.loads(rep.read_text())), sort_keys=True).encode())
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("demo_out", type=Path)
    ap.add_argument("--against", type=Path, help="a fingerprint JSON written earlier")
    a = ap.parse_args(argv)
    old = None
    if a.against:  # read before the work
        try:
            old = json.loads(a.against.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            ap.error(f"--against {a.against}: not a readable fingerprint JSON ({exc})")
        if not isinstance(old, dict) or not isinstance(old.get("hub_files"), dict):
            ap.error(f"--against {a.against}: not a fingerprint JSON written by this script (no hub_files)")
    if not any(a.demo_out.rglob("manifest.parquet")) if a.demo_out.is_dir() else True:
        ap.error(f"{a.demo_out}: no render below it (no manifest.parquet); give the folder `vocalgrad demo --out` wrote")
    fp = fingerprint(a.demo_out)
    print(json.dumps(fp, indent=1, sort_keys=True))
    if old is not None:
        diff = [k for k in ("clips", "sha256_column", "report") if old.get(k) != fp.get(k)]
        diff += [f"hub:{f}" for f in sorted(set(old["hub_files"]) | set(fp["hub_files"]))
                 if old["hub_files"].get(f) != fp["hub_files"].get(f)]
        print("identical" if not diff else "DIFFERENT: " + ", ".join(diff), file=sys.stderr)
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
