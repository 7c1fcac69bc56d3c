"""Source-domain comparison (the paper's Table 15 layout): one model's accuracy per category on each domain.

Runs are told apart by their label: ``vocalgrad report qwen@vctk=out/vctk qwen@loquacious=out/loq
qwen@cv-spontaneous=out/cv`` names model ``qwen`` on three domains (the ``domain`` of each build's
render.json: ``vctk``, ``loquacious``, ``cv-spontaneous``). The table has one row per model and domain,
one column per category and the mean over categories, in percent; it is added to the report when at
least one label names a domain.
"""

from __future__ import annotations

import math
from typing import Any

import vocalgrad

from .markdown import pct

__all__ = ["DOMAIN_NAMES", "domain_markdown", "domain_rows", "split_label"]

#: Display names of the source domains (render.json ``domain``); other names are shown as given.
DOMAIN_NAMES = {"vctk": "VCTK", "loquacious": "LoquaciousSet", "cv-spontaneous": "CV Spontaneous Speech"}
_SEP = "@"


def split_label(label: str) -> tuple[str, str | None]:
    """``"qwen@loquacious"`` -> ``("qwen", "loquacious")``; a label without ``@domain`` -> ``(label, None)``."""
    model, sep, domain = label.rpartition(_SEP)
    return (model, domain) if sep and model and domain and " " not in domain else (label, None)


def domain_rows(report: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """Model -> domain -> {category: accuracy, "mean": mean over the categories present}."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for m in report.get("models", []):
        model, domain = split_label(m["label"])
        if domain is None:
            continue
        accs = {c: g.get("acc", math.nan) for c, g in m.get("by_category", {}).items()}
        vals = [v for v in accs.values() if not math.isnan(v)]
        accs["mean"] = sum(vals) / len(vals) if vals else math.nan
        out.setdefault(model, {})[domain] = accs
    return out


def domain_markdown(report: dict[str, Any]) -> str:
    """The Markdown section (empty when no label names a domain)."""
    rows = domain_rows(report)
    if not rows:
        return ""
    order = list(DOMAIN_NAMES)
    cats = [c for c in vocalgrad.CATEGORY_NAMES if any(c in d for doms in rows.values() for d in doms.values())]
    head = ["model", "source domain"] + cats + ["mean"]
    lines = ["", "## Source domains", "",
             "Accuracy (%) per category on each source domain (the paper's Table 15 layout; runs labelled "
             "`MODEL@DOMAIN`).", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for model, doms in rows.items():
        for domain in sorted(doms, key=lambda d: (order.index(d) if d in order else len(order), d)):
            accs = doms[domain]
            cells = [pct(accs[c]) if c in accs else "" for c in cats] + [pct(accs["mean"])]
            lines.append("| " + " | ".join([model, DOMAIN_NAMES.get(domain, domain)] + cells) + " |")
    return "\n".join(lines) + "\n"
