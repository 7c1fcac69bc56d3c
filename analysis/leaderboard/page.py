"""The leaderboard folder: ``index.html`` (static, offline), ``leaderboard.json`` / ``.csv``,
``runs/<run id>.json`` (one file per run: a Hub results dataset) and the Space and dataset cards.

The page reuses the report page's table, cell and sorting code (:mod:`analysis.report.html_tables`,
``analysis/report/static``), so a leaderboard sorts and reads like a report's.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import vocalgrad
from analysis.report.html_page import static_text
from analysis.report.html_tables import Table, category_head, esc, legend, td
from analysis.report.markdown import QUESTIONS, ci
from generation.paper_results import PAPER_CATEGORY_ACC, PAPER_SOURCE
from analysis.report.stats import MAX_ERROR_RATE
from analysis.report.verdicts import headline_text, short_verdict
from generation.identity import short
from harness_tasks.metrics import MIN_CLUSTERS

from .runs import Row

__all__ = ["CSV_COLUMNS", "RESULTS_CARD", "SPACE_CARD", "write_folder"]

#: Card files of the folder: the Space's README and the results dataset's (uploaded as its README.md).
SPACE_CARD = "README.md"
RESULTS_CARD = "results-dataset-card.md"
RUNS = "runs"
CSV_COLUMNS = ["model", "variant", "build", "n_clips", "n_sources", "acc", "ci_low", "ci_high", "verdict",
               "over", "ci_clips_low", "ci_clips_high", "verdict_clips",
               *vocalgrad.CATEGORY_NAMES, "toolkit", "date", "source_kind", "results_file", "error_rate", "blocked_rate",
               "decoding"]


def _builds(rows: list[Row]) -> dict[str | None, dict[str, Any]]:
    """Build digest -> what the rows say of it (clips, source kind, dataset name, rows)."""
    out: dict[str | None, dict[str, Any]] = {}
    for r in rows:
        b = out.setdefault(r.build, {"n_clips": set(), "source_kind": set(), "dataset": set(), "rows": 0})
        b["n_clips"].add(r.n_clips)
        b["rows"] += 1
        for key, dest in (("source_kind", "source_kind"), ("build", "dataset")):
            if r.data.get(key):
                b[dest].add(str(r.data[key]))
    return out


def _build_cell(row: Row) -> str:
    kind = row.data.get("source_kind")
    text = short(row.build) if row.build else "unknown"
    title = (f"build digest {row.build}" if row.build else "no sample log: the clips answered are unknown")
    if kind:
        title += f"; source: {kind}"
    return td(None, text, cls="text mono", title=title)


def decoding_text(decoding: dict) -> str:
    """Short readable form of a row's decoding (``greedy, 128 tok``, ``sampled T=0.7, 64 tok``,
    ``logits``); the full record is the cell's hover text and in the run file."""
    gen = decoding.get("gen_kwargs") or {}
    if isinstance(gen, str):  # lm-eval's --gen_kwargs "temperature=0,max_gen_toks=64"
        gen = dict(kv.split("=", 1) for kv in gen.split(",") if "=" in kv)
    model = decoding.get("model") if isinstance(decoding.get("model"), dict) else {}
    settings = {**model, **(gen if isinstance(gen, dict) else {})}
    parts = []
    scoring = settings.get("scoring")
    if scoring in ("logits", "both"):
        parts.append(f"scoring {scoring}")
    if isinstance(model.get("sampling"), str) and model["sampling"].startswith("sampled at the maker's default"):
        parts.append("sampled at the maker's default")
    temp = settings.get("temperature")
    sampled = str(settings.get("do_sample", "")).lower() == "true" or model.get("greedy") is False
    try:
        sampled = sampled or float(temp) > 0
    except (TypeError, ValueError):
        pass
    if scoring != "logits" and not parts[-1:] == ["sampled at the maker's default"]:
        parts.append(f"sampled T={temp}" if sampled and temp is not None else "sampled" if sampled else "greedy")
    tokens = settings.get("max_gen_toks", settings.get("max_new_tokens"))
    if tokens not in (None, ""):
        parts.append(f"{tokens} tok")
    if decoding.get("batch_size") not in (None, "", 1, "1"):
        parts.append(f"batch {decoding['batch_size']}")
    text = ", ".join(str(p) for p in parts)
    return text if len(text) <= 40 else text[:39] + "…"


def _verdict_cell(r: Row) -> str:
    errors = r.error_rate is not None and r.error_rate > 0
    blocked = r.blocked_rate is not None and r.blocked_rate > 0
    title = (headline_text({"over": r.over, "verdict": r.verdict, "why": None}) if r.over else r.verdict)
    title += f"; {100 * r.error_rate:.1f} % error answers (failed requests)" if errors else ""
    title += f"; {100 * r.blocked_rate:.1f} % blocked by the provider (counted wrong)" if blocked else ""
    title += f"; these voices (clip bootstrap): {ci(r.ci_clips)} {r.verdict_clips}" if r.ci_clips else ""
    text = short_verdict(r.verdict, r.over) + (f" ({100 * r.blocked_rate:.0f} % blocked)" if blocked else "")
    return td(None, text, cls="text", title=title)


def _table(rows: list[Row]) -> str:
    cats = list(vocalgrad.CATEGORY_NAMES)
    head = [("model", "text"), ("variant", "text"), ("build", "text"), ("clips", "num"), ("acc %", "num"),
            ("95 % CI", "num"), ("vs chance", "text")] + [category_head(c) for c in cats]
    head += [("decoding", "text"), ("toolkit", "text"), ("date", "text")]
    t = Table(head, caption="Leaderboard", cls="leaderboard")
    for r in rows:
        dec = json.dumps(r.decoding, sort_keys=True)
        cells = [td(None, r.variant, cls="text"), _build_cell(r), td(r.n_clips, f"{r.n_clips:,}"),
                 td(r.acc, colour=True), td(r.ci[0] if r.ci else None, ci(r.ci) if r.ci else "–"),
                 _verdict_cell(r)]
        cells += [td(r.by_category.get(c), colour=True) if c in r.by_category else td(None, "") for c in cats]
        cells += [td(None, decoding_text(r.decoding) or "not recorded", cls="text", title=dec),
                  td(None, r.toolkit, cls="text"), td(None, (r.date or "")[:10], cls="text date", title=r.date or "")]
        label = f'<a href="{RUNS}/{esc(r.run_id)}.json">{esc(r.model)}</a>'
        t.add(label, cells)
    for name, vals in PAPER_CATEGORY_ACC.items():
        cells = [td(None, "default", cls="text"),
                 td(None, "paper (VCTK)", cls="text", title="the paper's VCTK test set; copied from the paper"),
                 td(None, "", title="see the paper"), td(vals["avg"] / 100, f"{vals['avg']:.1f}", colour=True), td(None, ""),
                 td(None, "copied", cls="text", title=f"copied from {PAPER_SOURCE}")]
        cells += [td(vals[c] / 100, f"{vals[c]:.1f}", colour=True) for c in cats]
        cells += [td(None, "", cls="text")] * 3
        t.add(f'{esc(name)} <span class="tag">paper</span>', cells, cls="paper")
    return t.html()


def _builds_section(rows: list[Row]) -> str:
    items = []
    for digest, b in _builds(rows).items():
        kinds = ", ".join(sorted(b["source_kind"])) or "source kind not recorded"
        if any("demo" in k for k in b["source_kind"]):
            kinds += " (synthetic demo voices: not comparable with the paper's VCTK rows)"
        names = ", ".join(sorted(b["dataset"])) or "dataset name not recorded"
        clips = "/".join(f"{n:,}" for n in sorted(b["n_clips"]))
        ident = (f'<code title="{esc(digest)}">{esc(short(digest))}</code>' if digest
                 else "<code>unknown</code> (runs without sample logs)")
        items.append(f"<li>{ident}: {esc(names)}; {esc(kinds)}; {esc(clips)} clips; {b['rows']} row(s)</li>")
    return ("<h2 id=\"builds\">Dataset builds</h2><p class=\"note\">A build is named by its digest over the "
            "(clip id, sha256) pairs of the clips a run answered: rows on different builds are different "
            "measurements and are never merged.</p><ul>" + "".join(items) + "</ul>")


def _page(rows: list[Row], notes: list[str], title: str = "VocalGrad leaderboard") -> str:
    note_html = "".join(f"<li>{esc(n)}</li>" for n in notes)
    notes_block = f'<h2 id="notes">Replaced runs</h2><ul>{note_html}</ul>' if notes else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{static_text('report.css')}</style></head><body>"
            f"<header><h1>{esc(title)}</h1><p class=\"note\">Does one acoustic attribute of a clip go up "
            "or down? Accuracy = mean over categories (unparsed answers count as wrong), chance 50 %. "
            "One row per model, task variant and dataset build; rows marked <em>paper</em> are copied from "
            f"the paper ({esc(PAPER_SOURCE)}) and were measured on its VCTK build. Data: "
            "<a href=\"leaderboard.json\">leaderboard.json</a>, <a href=\"leaderboard.csv\">leaderboard.csv</a>, "
            "one file per run in <code>runs/</code>. " + esc(QUESTIONS).replace("*", "") + " <em>95 % CI</em> and "
            f"<em>vs chance</em> are over voices (source utterances as the units) from {MIN_CLUSTERS} sources; with "
            "fewer no claim over voices can be made, and they are the clip-level figures, marked <em>(these "
            "voices)</em>. The clip bootstrap's interval (these voices, the paper's) is in the verdict's hover "
            "text and the CSV. Click a column header to sort. A row with more than "
            f"{100 * MAX_ERROR_RATE:.0f} % error answers (failed requests) gets no verdict against chance.</p>"
            "</header><main>"
            f"{legend()}{_table(rows)}{_builds_section(rows)}{notes_block}</main>"
            "<p id=\"sort-status\" class=\"visually-hidden\" aria-live=\"polite\"></p>"
            f"<script>{static_text('report.js')}</script></body></html>\n")


def _csv(rows: list[Row]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in rows:
        lo, hi = (r.ci or [None, None])[:2]
        clo, chi = (r.ci_clips or [None, None])[:2]
        w.writerow([r.model, r.variant, r.build or "", r.n_clips, r.n_sources, r.acc, lo, hi, r.verdict,
                    r.over or "", clo, chi, r.verdict_clips or "",
                    *[r.by_category.get(c, "") for c in vocalgrad.CATEGORY_NAMES], r.toolkit, r.date,
                    r.data.get("source_kind", ""), r.results_file, "" if r.error_rate is None else r.error_rate,
                    "" if r.blocked_rate is None else r.blocked_rate, json.dumps(r.decoding, sort_keys=True)])
    return buf.getvalue()


def _front_matter(fields: dict) -> str:
    """A card's YAML front matter, written by the YAML library (a title with ``:``, ``#`` or a line
    break stays one string value)."""
    import yaml

    return "---\n" + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=10_000) + "---\n"


def _heading(title: str) -> str:
    """The title as one Markdown heading line (line breaks become spaces)."""
    return " ".join(title.split()) or "VocalGrad leaderboard"


def _space_card(title: str) -> str:
    fields = {"title": title, "emoji": "📈", "colorFrom": "blue", "colorTo": "gray", "sdk": "static",
              "app_file": "index.html", "pinned": False, "tags": ["leaderboard", "audio", "vocalgrad"]}
    return (_front_matter(fields) + "\n"
            f"# {_heading(title)}\n\nA static page made by `vocalgrad leaderboard`: one row per model, task "
            "variant and "
            "dataset build (its digest over the clips' sha256), the paper's rows copied and marked. "
            "`leaderboard.json` and `leaderboard.csv` hold the same table; `runs/` one file per run.\n")


def _results_card(title: str) -> str:
    return (_front_matter({"configs": [{"config_name": "runs", "data_files": "runs/*.json"}],
                           "tags": ["vocalgrad", "leaderboard"]}) + "\n"
            f"# {_heading(title)}: runs\n\nOne JSON file per evaluation run gathered by `vocalgrad leaderboard`: "
            "model, task "
            "variant, dataset build digest, clips, accuracy with its 95 % interval, per-category accuracy, "
            "decoding, toolkit version and date.\n")


def _legacy_files(out: Path) -> list[str]:
    """What ``vocalgrad leaderboard`` wrote in a folder of an earlier version (no marker): its named
    files and the ``runs/*.json`` that parse as its runs; everything else there is someone else's."""
    from generation.contained import outside_reason

    names = ["leaderboard.json", "leaderboard.csv", "index.html", SPACE_CARD, RESULTS_CARD]
    runs = [f"{RUNS}/{p.name}" for p in sorted((out / RUNS).glob("*.json"))]
    return [n for n in names if (out / n).is_file()] + [  # a link leading out is not even read
        r for r in runs if outside_reason(out, r) is None and _is_our_run(out / r)]


def write_folder(out, rows: list[Row], notes: list[str], *, title: str = "VocalGrad leaderboard",
                 force: bool = False) -> list[str]:
    """Write the leaderboard folder ``out``; returns the files written (relative POSIX paths, sorted).

    The folder follows the rules of every output folder (:func:`generation.ownership.owned_update`):
    one writer at a time (a second ``vocalgrad leaderboard --out DIR`` is refused), the files are
    staged and moved into place together, the files an earlier run wrote (its marker, or an earlier
    version's layout) and no longer made are removed, and foreign files are never replaced (unless
    ``force``).
    """
    from generation.ownership import owned_update

    table = {"format": "vocalgrad-leaderboard/1", "rows": [r.to_json() for r in rows], "notes": notes,
             "paper": {"source": PAPER_SOURCE, "category_acc": PAPER_CATEGORY_ACC, "copied": True}}
    files = {f"{RUNS}/{r.run_id}.json": json.dumps(r.to_json(), indent=1, sort_keys=True) + "\n" for r in rows}
    files.update({"leaderboard.json": json.dumps(table, indent=1, sort_keys=True) + "\n", "leaderboard.csv": _csv(rows),
                  "index.html": _page(rows, notes, title), SPACE_CARD: _space_card(title),
                  RESULTS_CARD: _results_card(title)})
    with owned_update(out, "leaderboard", what="vocalgrad leaderboard", legacy_files=_legacy_files,
                      force=force) as stage:
        (stage / RUNS).mkdir()
        for name, text in files.items():
            (stage / name).write_text(text, encoding="utf-8")
    return sorted(files)


def _is_our_run(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and {"run_id", "build", "model", "variant"} <= set(data)
