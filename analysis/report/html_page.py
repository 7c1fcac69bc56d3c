"""``vocalgrad report ... --html``: ``DIR/index.html``, a page to read the report and listen to its clips.

The page is one self-contained HTML file (its CSS and JavaScript inlined from ``static/``), next to
``report.md``; with ``--data`` the chosen clips' audio and pictures go to ``DIR/clips/``, the model
figures are the report's ``plots/*.png``. Every path is relative, nothing is fetched from the
network, so the folder can be copied anywhere and opened from ``file://``.

The numbers are read back from ``DIR/report.json`` (written first, one source of truth); the clip
answers and the heat-map cells come from the same sample-log records (:mod:`.html_tables`,
:mod:`.html_clips`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import vocalgrad
from generation.audio import atomic_write_text
from harness_tasks.metrics import MIN_CLUSTERS

from .content import check_data_folder
from .html_clips import ClipCard, cards_without_files, clip_summary, select_clips, write_clips
from .html_sweep import select_sweep_clips, sweep_answer_runs, sweep_leaderboard, sweep_listen_html
from .html_tables import (Table, breakdown_sections, comparisons_section, data_section, esc, extra_sections,
                          human_section, leaderboard)
from .markdown import QUESTIONS
from .stats import MIN_CLIPS, SEED

__all__ = ["DEFAULT_MAX_CLIPS", "DEFAULT_MAX_MB", "HtmlOptions", "add_html_arguments", "html_options", "static_text",
           "write_html"]

#: Default limits of the Listen section: distinct clips, and megabytes (10^6 bytes) of the page, its
#: clips and the figures it shows together.
DEFAULT_MAX_CLIPS = 80
DEFAULT_MAX_MB = 25.0
#: Room kept for the markup of one clip card when the budget is shared out.
_CARD_BYTES = 4000


@dataclass
class HtmlOptions:
    """What ``--html`` needs besides the report: the opened data folder and the limits."""

    catalog: Any = None  # analysis.listen.catalog.Catalog of --data, or None (no Listen section)
    max_clips: int = DEFAULT_MAX_CLIPS
    max_mb: float = DEFAULT_MAX_MB
    seed: int = SEED
    pictures: bool = True


def add_html_arguments(p) -> None:
    """The ``--html``, ``--data``, ``--max-clips`` and ``--max-mb`` options of ``vocalgrad report``."""
    p.add_argument("--html", action="store_true",
                   help="also write DIR/index.html: sortable leaderboard, breakdowns and (with --data) clips to "
                        "listen to; opens offline from file://")
    p.add_argument("--data", metavar="HUB_OR_RENDER_DIR",
                   help="with --html: the evaluated Hub or render folder; adds the Listen section (clips, "
                        "pictures, every model's answer)")
    p.add_argument("--max-clips", type=int, default=DEFAULT_MAX_CLIPS,
                   help=f"with --data: at most this many clips on the page (default {DEFAULT_MAX_CLIPS})")
    p.add_argument("--max-mb", type=float, default=DEFAULT_MAX_MB,
                   help=f"with --data: size budget of the page, its clips and figures in MB (default {DEFAULT_MAX_MB:g})")


def html_options(args) -> HtmlOptions | None:
    """Check the HTML options of parsed ``args`` before anything is written; None without ``--html``.

    Raises
    ------
    ValueError
        ``--data`` without ``--html``, a limit below 1, or a ``--data`` folder that is neither a
        Hub nor a render folder (:class:`analysis.listen.catalog.CatalogError`).
    """
    if not args.html:
        if args.data:
            raise ValueError("--data is for the HTML page: add --html")
        return None
    if args.max_clips < 1 or args.max_mb <= 0:
        raise ValueError("--max-clips must be >= 1 and --max-mb > 0")
    catalog = None
    if args.data:
        from analysis.listen.catalog import open_catalog

        catalog = open_catalog(args.data)
    return HtmlOptions(catalog=catalog, max_clips=args.max_clips, max_mb=args.max_mb, seed=args.seed)


def static_text(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def _card(card: ClipCard) -> str:
    cat = vocalgrad.category(card.category)
    means = cat.increase_means if card.direction == "increase" else cat.decrease_means
    parts = [f'<figure class="clip"><figcaption><strong>{esc(card.direction)}</strong> ({esc(means)}) · tier '
             f"{esc(card.tier)} · {esc(card.trajectory)}<br><code>{esc(card.clip_id)}</code></figcaption>",
             f'<audio controls preload="metadata" aria-label="clip {esc(card.clip_id)}">'
             f'<source src="{esc(card.audio)}" type="{esc(card.audio_type)}">'
             f'<a href="{esc(card.audio)}">download the clip</a></audio>']
    if card.picture:
        parts.append(f'<a href="{esc(card.picture)}" title="open the picture at full size">'
                     f'<img src="{esc(card.picture)}" width="1040" height="520" alt="Spectrogram of {esc(card.clip_id)} '
                     f"with its speech span, and the planned and measured {esc(cat.attribute)} curve "
                     f'({esc(card.direction)}, {esc(card.tier)}, {esc(card.trajectory)})"></a>')
    elif card.picture_error:
        parts.append(f'<p class="warn">{esc(card.picture_error)}</p>')
    if card.answers:
        t = Table([("model", "text"), ("answer", "text"), ("verdict", "text")],
                  caption=f"answers on {card.clip_id}", sortable=False)
        for who, text, pred, correct, margin in card.answers:
            shown = text if len(text) <= 160 else text[:159] + "…"
            extra = "" if margin is None else f" (logit margin {margin:.2f})"
            mark = ('<span class="ok">✓ right</span>' if correct else
                    '<span class="bad">✗ wrong</span>' if pred else '<span class="bad">✗ wrong (no direction)</span>')
            t.add(esc(who), [f'<td class="answer" title="{esc(text)}">{esc(shown or "(empty)")}{esc(extra)}</td>',
                             f'<td class="text">{mark}</td>'])
        parts.append(t.html())
    else:
        parts.append('<p class="muted">No model answered this clip.</p>')
    return "".join(parts) + "</figure>"


def _listen_section(lists, options: HtmlOptions, near=None) -> str:
    info = clip_summary(lists)
    out = ['<h2 id="listen">Listen</h2>',
           f'<p class="note">{info["clips"]} clips from the data folder <code>{esc(options.catalog.root.name)}</code> '
           '(each checked against the sha256 the models heard: the build of the <a href="#data">Data</a> section), '
           f"chosen with seed {options.seed}; audio copied unchanged, pictures as drawn by "
           "<code>vocalgrad show</code>: spectrogram with the speech span (top), the planned value schedule and "
           "a measurement of the changed attribute on the audio (bottom), the source beside them."
           + (f" {info['skipped']} more clips were left out by --max-clips or the size budget." if info["skipped"] else "")
           + "</p>"]
    if not lists.n_answered:
        out.append(f'<p class="warn">No clip of <code>{esc(options.catalog.root)}</code> was answered by these runs: '
                   "is it the folder they evaluated? The clips below show no answers.</p>")
    for cat, cards in lists.gallery.items():
        if cards:
            out.append(f'<h3 id="listen-{esc(cat)}">{esc(cat)}</h3><div class="gallery">'
                       + "".join(_card(c) for c in cards) + "</div>")
    if near is not None:
        out.append(sweep_listen_html(near, _card))
    out.append('<h3 id="missed">Missed by every model</h3>')
    if lists.missed:
        out.append(f'<p class="note">{len(lists.missed)} of the {lists.n_missed_total} clips every model got wrong.</p>'
                   '<div class="gallery">' + "".join(_card(c) for c in lists.missed) + "</div>")
    else:
        out.append(f'<p class="muted">{"No clip was missed by every model." if not lists.n_missed_total else "Over the size budget."}</p>')
    out.append('<h3 id="confident">Wrong with high confidence, per model</h3>')
    for label, cards in lists.confident.items():
        out.append(f"<h4>{esc(label)}</h4><p class=\"note\">{esc(lists.confident_rule.get(label, ''))}.</p>")
        out.append('<div class="gallery">' + "".join(_card(c) for c in cards) + "</div>" if cards
                   else '<p class="muted">No wrong answer to show.</p>')
    return "".join(out)


def _nav(has: dict[str, bool]) -> str:
    items = [("leaderboard", "Leaderboard"), ("models", "Models"), ("comparisons", "Comparisons"),
             ("thresholds", "Thresholds"), ("human", "Human listeners"), ("listen", "Listen")]
    return "<nav aria-label=\"sections\"><ul>" + "".join(
        f'<li><a href="#{k}">{t}</a></li>' for k, t in items if has.get(k, True)) + "</ul></nav>"


def _page(report: dict, body: str, has: dict[str, bool]) -> str:
    s = report.get("settings", {})
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>VocalGrad report</title><style>{static_text('report.css')}</style></head><body>"
            f"<header><h1>VocalGrad report</h1><p class=\"lead\">How often each model says correctly whether one "
            "acoustic attribute of a clip <em>increases</em> or <em>decreases</em> (50 % is chance). The numbers of "
            "<a href=\"report.md\">report.md</a> (<a href=\"report.json\">report.json</a>).</p>"
            "<details class=\"note\"><summary>How the numbers are made</summary>"
            f"<p>{esc(QUESTIONS).replace('*', '')}</p>"
            f"<p>95 % intervals: over voices (the headline, from {MIN_CLUSTERS} sources), jackknife over source "
            "utterances with a t quantile; these voices (the paper's), percentile bootstrap of clips, "
            f"{s.get('bootstrap_draws', '?'):,} draws, seed {esc(s.get('seed', '?'))}. Under {MIN_CLIPS} clips, or "
            "with every answer right or every answer wrong, the exact test gives the verdict (<em>too few clips</em> "
            f"where it cannot reject).</p><p>{esc(s.get('overall_rule', ''))}.</p></details>"
            f"{_nav(has)}</header><main>{body}</main>"
            "<p id=\"sort-status\" class=\"visually-hidden\" aria-live=\"polite\"></p>"
            f"<script>{static_text('report.js')}</script></body></html>\n")


def write_html(out_dir, evaluations, options: HtmlOptions | None = None, *, sweeps=()) -> dict[str, str]:
    """Write ``out_dir/index.html`` (and ``out_dir/clips/`` with a data folder) from ``report.json``.

    Parameters
    ----------
    out_dir : path-like
        The report folder being written (:func:`build_report` passes its staging folder, which
        replaces the earlier page and clips only when the whole report is written); ``report.json``
        must be there.
    evaluations : list of Evaluation
        The evaluations the report was built from (their records give the clip answers).
    options : HtmlOptions, optional
        Data folder and limits (default: no Listen section).
    sweeps : list of analysis.report.psychometric.Observer
        The sweep runs: their thresholds go to the Leaderboard section, clips near them to the Listen
        section (:mod:`.html_sweep`).

    Returns
    -------
    dict
        ``path`` (of ``index.html``), ``bytes`` (the page, its clips and the figures it shows) and
        ``clips`` (distinct clips on the page).
    """
    options = options or HtmlOptions()
    out = Path(out_dir)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    records = {ev.label: ev.records for ev in evaluations if ev.has_samples}
    has = {"models": bool(report.get("models")), "comparisons": bool(report.get("comparisons")),
           "human": bool(report.get("human_agreement")), "listen": options.catalog is not None,
           "thresholds": bool(report.get("psychometric"))}
    body = ['<h2 id="leaderboard">Leaderboard</h2>', leaderboard(report) if report.get("models") or report.get("paper")
            else "<p>No per-category run in these results.</p>", sweep_leaderboard(report), data_section(report)]
    if has["models"]:
        body.append('<h2 id="models">Breakdowns per model</h2>' + breakdown_sections(report, records))
    from .psychometric import sweep_html

    body += [comparisons_section(report), extra_sections(report), sweep_html(report), human_section(report)]
    figures = _figure_bytes(out, report)
    clip_bytes, n_clips = 0, 0
    if options.catalog is not None:
        lists, order = select_clips(options.catalog, evaluations, seed=options.seed)
        runs = sweep_answer_runs(sweeps)
        near = select_sweep_clips(options.catalog, report, runs, seed=options.seed)
        check_data_folder(options.catalog, runs, [c.clip_id for c in near.cards()])
        lists.sweep = near.cards()
        lists.n_answered += sum(cid in options.catalog for cid in {r["id"] for run in runs for r in run.records})
        n_gallery = sum(len(cards) for cards in lists.gallery.values())
        order = order[:n_gallery] + lists.sweep + order[n_gallery:]  # after the gallery, before the lists of errors
        fixed = len(_page(report, "".join(body), has).encode()) + figures + _CARD_BYTES * options.max_clips
        budget = max(0, int(options.max_mb * 1e6) - fixed)
        clip_bytes, lists.skipped = write_clips(options.catalog, order, out, max_clips=options.max_clips,
                                                max_bytes=budget, pictures=options.pictures)
        lists.bytes_written = clip_bytes
        cards_without_files(lists)
        n_clips = clip_summary(lists)["clips"]
        body.append(_listen_section(lists, options, near))
    page = _page(report, "".join(body), has)
    atomic_write_text(out / "index.html", page)
    total = len(page.encode()) + figures + clip_bytes
    return {"path": str(out / "index.html"), "bytes": total, "clips": n_clips}


def _figure_bytes(out: Path, report: dict) -> int:
    """Bytes of the model figures the page shows (``plots/<model>.png``)."""
    plots = report.get("plots") or {}
    paths = [plots[m["label"]] for m in report.get("models", []) if isinstance(plots.get(m["label"]), str)]
    return sum((out / p).stat().st_size for p in paths if (out / p).is_file())
