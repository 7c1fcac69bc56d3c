"""``vocalgrad attributes``: list every installed attribute (the nine, the extension set, plugins)."""

from __future__ import annotations

import json
import sys

import vocalgrad

__all__ = ["register_cli"]


def register_cli(sub) -> None:
    p = sub.add_parser("attributes", help="list the installed attributes (the paper's nine, extensions, plugins)",
                       description="List every installed attribute: name, prompt phrase, unit, tiers, whether it "
                                   "is built in or a plugin and which package provides it. Only the paper's nine "
                                   "are the benchmark; extension attributes have their own Hub configs and the "
                                   "vocalgrad_ext task group (docs/attributes.md).")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(func=_cli)


def _tiers(tiers: dict) -> str:
    return ", ".join(f"{t} {lo:g}->{hi:g}" for t, (lo, hi) in tiers.items())


def _cli(args) -> int:
    from . import installed, problems

    attrs = [a.summary() for a in installed().values()]
    left_out = problems()
    if args.json:
        print(json.dumps({"attributes": attrs, "problems": left_out}, indent=2))
        return 0
    head = ("name", "set", "kind", "package", "prompt phrase", "unit", "tiers (increase: start->end)")
    rows = [(a["name"], a["set"], a["kind"], a["package"], a["phrase"], a["unit"], _tiers(a["tiers"])) for a in attrs]
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head) - 1)]
    for r in [head, *rows]:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)) + "  " + r[-1])
    n_ext = sum(a["set"] == "extension" for a in attrs)
    print(f"\n{len(vocalgrad.CATEGORY_NAMES)} paper attributes (the benchmark, task group vocalgrad), "
          f"{n_ext} extension attribute(s) (not part of the paper's benchmark; task group vocalgrad_ext).")
    for msg in left_out:
        print(f"left out: {msg}", file=sys.stderr)
    return 0
