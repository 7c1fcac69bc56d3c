"""Plant the hand-written boundary mistakes of docs/testing.md ("Hand-written boundary mistakes"), one at a
time, and run each module's tests (scripts/mutate_targets.txt): a mistake is caught when a test fails.

Usage: ``python scripts/plant_mistakes.py [N ...]`` (default: all). Each mistake is a one-line change at the
near-miss neighbour of a rule (a sibling folder sharing a prefix, a second delimiter, a tie, zero, empty vs
absent, the last element of a range); the file is restored after each run, also on Ctrl-C. Prints one JSON
line per mistake, then ``caught C of N``; exit 1 when one survives. Takes about a minute per mistake.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (module, the line as it is, the planted mistake, the rule it breaks)
M = [
 ("generation/contained.py", "if target == base or not target.is_relative_to(base):", "if not target.is_relative_to(base):", "a path that resolves to the folder itself (equal, not inside)"),
 ("generation/contained.py", 'if ".." in posix.parts or ".." in win.parts:', 'if ".." in posix.parts:', "'..' after the second delimiter (a backslash)"),
 ("generation/contained.py", 'or win.drive or rel.startswith("\\\\"):', "or win.drive:", "a path starting with one backslash"),
 ("harness_tasks/parsing.py", "    if len(found) == 1:\n        return found.pop(), \"parsed\"", "    if len(found) >= 1:\n        return found.pop(), \"parsed\"", "two labels named: ambiguous, not parsed"),
 ("harness_tasks/parsing.py", '_EXACT = re.compile(r"(increase|decrease)\\.?", re.IGNORECASE)', '_EXACT = re.compile(r"(increase|decrease)\\.*", re.IGNORECASE)', "exact match: one final period, not two"),
 ("harness_tasks/parsing.py", '_WORDS = re.compile(r"\\b(increases?|decreases?)\\b", re.IGNORECASE)', '_WORDS = re.compile(r"\\b(increases?|decreases?)", re.IGNORECASE)', "whole words: 'increased' is no answer word"),
 ("analysis/report/stats.py", "    if lo > chance:\n        return \"above chance\"", "    if lo >= chance:\n        return \"above chance\"", "an interval touching chance is not above it"),
 ("analysis/report/stats.py", "(``nan`` for ``n == 0``).\"\"\"\n    if n <= 0:", "(``nan`` for ``n == 0``).\"\"\"\n    if n < 0:", "binomial p of zero clips is nan"),
 ("analysis/report/stats.py", "        elif q < alpha:", "        elif q <= alpha:", "Holm p exactly alpha is not significant"),
 ("analysis/report/stats.py", "min(1.0, (m - rank) * pvalues[i])", "min(1.0, (m - rank - 1) * pvalues[i])", "Holm's multiplier of the last (largest) p is 1"),
 ("harness_tasks/metrics.py", "    if not 0 < level < 1:", "    if not 0 < level <= 1:", "interval level 1 refused"),
 ("harness_tasks/metrics.py", "len(cluster_keys(records, cluster)) < min_clusters:", "len(cluster_keys(records, cluster)) <= min_clusters:", "exactly MIN_CLUSTERS clusters give an interval"),
 ("generation/identity.py", "        if not sha:", "        if sha is None:", "an empty sha256 (empty vs absent) refused"),
 ("generation/identity.py", "    for clip_id in sorted(seen):", "    for clip_id in seen:", "build digest independent of clip order"),
 ("analysis/leaderboard/runs.py", "for row in sorted(runs, key=lambda r: r.date):", "for row in sorted(runs, key=lambda r: r.date, reverse=True):", "the later of two runs of one build stands"),
 ("generation/ownership.py", 'if m and m["host"] == aio.HOST_TAG and p.is_dir()', "if m and p.is_dir()", "another host's stage is kept"),
 ("generation/ownership.py", 'if m and m["name"] == out.name and p.is_dir()', 'if m and m["name"].startswith(out.name) and p.is_dir()', "a sibling folder sharing a prefix keeps its leftover"),
 ("generation/verify.py", 'res.add("duplicate clip id", sorted(i for i, n in ids.items() if n > 1))', 'res.add("duplicate clip id", sorted(i for i, n in ids.items() if n > 2))', "a clip id twice is a duplicate"),
 ("harness_tasks/cluster_ci.py", "return float(max(bounds[0], estimate - half)), float(min(bounds[1], estimate + half))", "return float(estimate - half), float(min(bounds[1], estimate + half))", "the interval is clipped at its lower bound"),
 ("harness_tasks/models/families/decoding.py", 'keep["eos_token_id"] = (eos[0] if len(eos) == 1 else eos) if eos else None', 'keep["eos_token_id"] = eos if eos else None', "one eos id is a number, not a list"),
 ("harness_tasks/models/chat.py", "answer = answer.split(stop)[0]", "answer = answer.rsplit(stop, 1)[0]", "an answer is cut at the first stop string (a second one follows)"),
 ("analysis/report/loading.py", "    if n is not None and n != len(recs):", "    if n is not None and n > len(recs):", "a sample log with more samples than the results file says"),
 ("harness_tasks/source_bias.py", '"unparsed_rate": (n - n_parsed) / n if n else math.nan,', '"unparsed_rate": (n - n_parsed) / n if n else 0.0,', "no answers at all: the unparsed rate is undefined, not 0"),
 ("harness_tasks/label_metrics.py", 'pred = rec.get("pred") if rec.get("status") == "parsed" else None', 'pred = rec.get("pred")', "a pred logged with a status other than parsed counts as unparsed"),
 ("generation/render_identity.py", 'if now and sid in recorded and recorded[sid].get("sha256") not in (None, now)]', 'if now and sid in recorded and recorded[sid].get("sha256") != now]', "a record without a sha256 (absent) is no changed source"),
 ("generation/render_identity.py", "owner = out if any(resolved.is_relative_to(w) or path.is_relative_to(w) for w in written) else None", "owner = out if any(str(resolved).startswith(str(w)) or str(path).startswith(str(w)) for w in written) else None", "a sibling folder sharing a prefix (clips2/) is no toolkit output"),
 ("generation/registry.py", "if known is not None and known is not obj and origin(known) != origin(obj):", "if known is not None and known is not obj:", "the same definition again (a reloaded module) is no taken name"),
]


def _targets() -> dict[str, list[str]]:
    out = {}
    for line in (ROOT / "scripts" / "mutate_targets.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            mod, *tests = line.split()
            out[mod] = tests
    return out


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    from generation.option_types import positive_int

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("numbers", nargs="*", type=positive_int, metavar="N",
                    help=f"which mistakes, 1-{len(M)} (default: all)")
    args = ap.parse_args(argv)
    wrong = [n for n in args.numbers if n > len(M)]
    if wrong:
        ap.error(f"argument N: there are {len(M)} mistakes, got {wrong[0]}")
    targets, results = _targets(), []
    for k, (path, old, new, rule) in enumerate(M, 1):
        if args.numbers and k not in args.numbers:
            continue
        p = ROOT / path
        text = p.read_text(encoding="utf-8")
        if text.count(old) != 1:
            print(json.dumps({"k": k, "module": path, "rule": rule, "caught": None, "why": "line not found"}))
            continue
        p.write_text(text.replace(old, new), encoding="utf-8")
        try:
            t = time.time()
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-n", "0",
                                   *targets[path]], cwd=ROOT, capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        finally:
            p.write_text(text, encoding="utf-8")
        failed = [line.split(" - ")[0].removeprefix("FAILED ") for line in proc.stdout.splitlines()
                  if line.startswith("FAILED")]
        results.append({"k": k, "module": path, "rule": rule, "caught": proc.returncode != 0, "by": failed[:1],
                        "seconds": round(time.time() - t)})
        print(json.dumps(results[-1]), flush=True)
    caught = sum(bool(r["caught"]) for r in results)
    print(f"caught {caught} of {len(results)}")
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
