"""The card of a Hub folder: its YAML header and the filled ``dataset_card.md`` template.

:func:`yaml_header` writes the configs, features, sizes and licence that the Hub reads;
:func:`render_card` fills the template's ``{{name}}`` placeholders with counts from the renders
(what depends on the sources and the publishing repo is :mod:`generation.card`).
"""

from __future__ import annotations

import re
from pathlib import Path

import vocalgrad

from . import card
from .attributes.sweep import sweep_category
from .hub_dir import PRETTY_NAME, HubBuildError, HubConfig
from .render_dir import RenderDir

__all__ = ["extension_categories", "extension_section", "render_card", "sweep_section", "yaml_header"]


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "1M<n<10M"


def yaml_header(configs: list[HubConfig], feats, by_split, *, license_id: str | None = None) -> str:
    """The card's YAML header (configs, features, sizes, license) between ``---`` lines."""
    import yaml

    total = sum(len(c.rows) for c in by_split.values())
    feature_yaml = feats._to_yaml_list()
    sweep_yaml = vocalgrad.features(feats["audio"].sampling_rate, sweep=True)._to_yaml_list()  # sweep_<attribute>
    header = {
        "license": card.card_license(_render_sources(by_split), license_id)[0],
        "pretty_name": PRETTY_NAME,
        "language": ["en"],
        "task_categories": ["audio-classification", "audio-text-to-text"],
        "size_categories": [_size_category(total)],
        "tags": ["audio", "speech", "benchmark", "acoustic-perception", "audio-language-models", "synthetic"],
        "configs": [
            {"config_name": c.name, "data_files": [{"split": c.split, "path": c.data_files}],
             **({"default": True} if c.name == "all" else {})}
            for c in configs
        ],
        "dataset_info": [
            {"config_name": c.name, "features": sweep_yaml if sweep_category(c.name) else feature_yaml,
             "splits": [{"name": c.split, "num_bytes": c.num_bytes, "num_examples": c.rows}],
             "download_size": c.download_size, "dataset_size": c.num_bytes}
            for c in configs
        ],
    }
    class _Dumper(yaml.SafeDumper):  # write repeated features out in full: no YAML anchors/aliases
        def ignore_aliases(self, data):
            return True

    body = yaml.dump(header, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=4096,
                     default_flow_style=False)
    return f"---\n{body}---\n\n"


def _md_table(head: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def _provenance_note(by_split: dict) -> str:
    """Card sentences on each render's source selection (render.json), a passed `vocalgrad verify`, and the
    label-validity warnings of the test render (:func:`generation.label_validity.label_warnings_markdown`)."""
    from .label_validity import label_warnings_markdown

    from .identity import short

    out = []
    for split, c in sorted(by_split.items()):
        if c.meta.get("selection_note"):
            out.append(f"**Selection ({split}):** {c.meta['selection_note']}.")
        recipe = f"recipe `{c.meta.get('recipe', 'unknown')}`"
        if c.meta.get("recipe_digest"):
            recipe += f" (content `{short(c.meta['recipe_digest'])}`)"
        if all(r.get("sha256") for r in c.rows):  # the authors' release converted by --from-published has none
            out.append(f"**Build digest ({split}):** `{short(RenderDir(c.path).build_digest(c.rows))}` over "
                       f"{len(c.rows):,} clips, {recipe} (sha256 over the sorted clip id and clip sha256 pairs; "
                       "`build.json` gives the full digest of every config).")
        v = RenderDir(c.path).verify_record()
        if v is not None:
            same = v.get("manifest_sha256") == RenderDir(c.path).manifest_sha256()
            if v.get("ok") and same:
                partial = "; ".join(v.get("partial") or [])
                out.append(f"**Verified ({split}):** `vocalgrad verify` passed on {v.get('checked_at', '?')} "
                           f"({v.get('n_clips')} clips: completeness, ids, label balance, sha256, frozen ids)"
                           + (f"; a partial build: {partial}." if partial else "."))
    text = " ".join(out)
    if "test" in by_split:
        text += label_warnings_markdown(by_split["test"].path)
    return text


def _render_sources(by_split: dict) -> list[str]:
    """``--source`` strings of the renders, test first."""
    order = sorted(by_split, key=lambda split: split != "test")
    return [str(by_split[split].meta.get("source", "unknown")) for split in order]


def render_card(template, by_split: dict, configs: list, *, repo_id: str | None = None,
                license_id: str | None = None) -> str:
    """Fill the ``{{name}}`` placeholders of the card template with counts from the renders.

    The licence, the repo id of the examples, the paper's results and the citations follow the
    sources (:mod:`generation.card`); ``repo_id`` and ``license_id`` override them.

    Raises
    ------
    HubBuildError
        If the template uses a placeholder this function does not know.
    """
    text = Path(template).read_text(encoding="utf-8")
    srcs = _render_sources(by_split)
    test = by_split.get("test")
    any_check = test or next(iter(by_split.values()))
    rows = test.rows if test else any_check.rows
    meta = any_check.meta
    n_by_cat = {cat: sum(r["category"] == cat for r in rows) for cat in vocalgrad.CATEGORY_NAMES}
    sources = sorted({r["source_id"] for r in rows})
    speakers = sorted({r["speaker_id"] for r in rows if r["speaker_id"]})
    durations = [r["duration_sec"] for r in rows]
    cat_rows = []
    for c in vocalgrad.CATEGORIES:
        cat_rows.append([f"`{c.name}`", c.attribute, c.increase_means, c.decrease_means,
                         "speaker" if c.origin == "speaker" else "environment", n_by_cat[c.name]])
    config_rows = [[f"`{c.name}`", c.split, c.rows,
                    "unmodified source clips (label `constant`)" if c.name == vocalgrad.SOURCES_CONFIG
                    else ", ".join(c.categories) if c.name in ("all", "beep", "train")
                    else f"magnitude sweep of {', '.join(c.categories)} (not the paper's benchmark)"
                    if sweep_category(c.name) else vocalgrad.category(c.name).attribute] for c in configs]
    partial = [f"{c.path.name}: {len(c.missing)} condition(s) missing" for c in by_split.values() if c.missing]
    values = {
        "total_clips": f"{len(rows):,}",
        "n_sources": str(len(sources)),
        "n_speakers": str(len(speakers)),
        "source": str(meta.get("source", "unknown")),
        "recipe": str(meta.get("recipe", "unknown")),
        "sample_rate": f"{int(meta.get('sample_rate', 48000)):,}",
        "toolkit_version": str(meta.get("toolkit_version", "unknown")),
        "mean_duration": f"{sum(durations) / len(durations):.2f}" if durations else "n/a",
        "categories_table": _md_table(
            ["config", "attribute (prompt phrase)", "`increase` means", "`decrease` means", "origin", "clips"], cat_rows),
        "configs_table": _md_table(["config", "split", "clips", "contents"], config_rows),
        "conditions_table": _md_table(
            ["tier"] + [f"`{t}`" for t in vocalgrad.TRAJECTORIES] + ["total"],
            [[tier] + [sum(r["tier"] == tier and r["trajectory"] == t for r in rows) for t in vocalgrad.TRAJECTORIES]
             + [sum(r["tier"] == tier for r in rows)] for tier in vocalgrad.TIERS]),
        "example_prompt": vocalgrad.default_prompt("pitch"),
        "repo_id": repo_id,
        "license_section": card.card_license(srcs, license_id)[1],
        "paper_results": card.paper_results_section(str(test.meta.get("source", "unknown")) if test else None),
        "citations": card.citations_section(srcs),
        "toolkit_link": card.toolkit_link(),
        "partial_note": "\n\n".join(n for n in [("**Partial build:** " + "; ".join(partial) + ".") if partial else "",
                                                  _provenance_note(by_split)] if n),
    }
    if not values["repo_id"]:
        values["repo_id"] = vocalgrad.HUB_REPO_ID if card.is_reference_build(srcs[:1]) else "ORG/NAME"
    values["repo_marker"] = card.repo_marker(values["repo_id"])
    unknown = sorted(set(re.findall(r"\{\{\s*(\w+)\s*\}\}", text)) - set(values))
    if unknown:
        raise HubBuildError(f"{template}: unknown placeholder(s) {', '.join(unknown)}; "
                            f"known: {', '.join(sorted(values))}")
    text = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: values[m.group(1)], text)
    return re.sub(r"\n{3,}", "\n\n", text)  # an empty placeholder leaves no gap


def extension_categories(rows: list[dict]) -> list[str]:
    """Categories of ``rows`` that are extension attributes (not the paper's nine), sorted."""
    return sorted({r["category"] for r in rows} - set(vocalgrad.CATEGORY_NAMES) - {""})


def extension_section(configs: list) -> str:
    """Card section on the extension attributes' configs ("" when the folder has none).

    They are not part of the paper's benchmark: not in ``all``, scored by the ``vocalgrad_ext``
    task group, defined by the toolkit's ``vocalgrad attributes`` (docs/attributes.md).
    """
    ext = [c for c in configs if c.name not in vocalgrad.CATEGORY_NAMES
           and c.name not in (*vocalgrad.builder_config_specs(), "all") and not sweep_category(c.name)]
    if not ext:
        return ""
    from . import attributes

    rows = []
    for c in ext:
        try:
            a = attributes.get(c.name)
            rows.append([f"`{c.name}`", a.phrase, a.increase_means, a.decrease_means, a.unit,
                         ", ".join(f"{t} {lo:g}->{hi:g}" for t, (lo, hi) in a.tiers.items()),
                         "built-in" if a.builtin else f"plugin ({a.package})", c.rows])
        except ValueError:
            rows.append([f"`{c.name}`", "?", "?", "?", "?", "?", "not installed here", c.rows])
    return ("\n## Extension attributes (not part of the paper's benchmark)\n\n"
            "These configs hold attributes that the VocalGrad paper does not have. They are **not part of the "
            "paper's benchmark**: the `all` config leaves them out, the paper's task group `vocalgrad` does not "
            "score them and results on them are not comparable with the paper's. They are scored by the "
            "`vocalgrad_ext` task group (`vocalgrad-eval --tasks vocalgrad_ext`); `vocalgrad attributes` "
            "describes each one.\n\n"
            + _md_table(["config", "attribute (prompt phrase)", "`increase` means", "`decrease` means", "unit",
                         "tiers (increase: start->end)", "provided by", "clips"], rows) + "\n")


def sweep_section(configs: list) -> str:
    """Card section on the magnitude-sweep configs ``sweep_<attribute>`` ("" when the folder has none).

    They are not part of the paper's benchmark: not in ``all``, scored by the ``vocalgrad_sweep``
    task group; the ``tier`` column holds the level token ``m<magnitude>`` (docs/sweep.md).
    """
    sweeps = [c for c in configs if sweep_category(c.name)]
    if not sweeps:
        return ""
    from .sweep_plan import sweep_levels

    rows = []
    for c in sweeps:
        cat = sweep_category(c.name)
        try:
            from . import attributes

            levels = sweep_levels(cat)
            unit = attributes.get(cat).sweep.unit
            text = ", ".join(f"{lv.magnitude:.4g}" + (f" ({lv.tier})" if lv.tier else "") for lv in levels)
        except ValueError:
            unit, text = "?", "not installed here"
        rows.append([f"`{c.name}`", cat, unit, text, c.rows])
    return ("\n## Magnitude sweeps (not part of the paper's benchmark)\n\n"
            "Each `sweep_<attribute>` config holds one attribute rendered at a series of magnitudes, from a "
            "zero-change control (no right answer) to beyond the paper's high tier, with the paper's three tiers "
            "as points of it (their clips are the paper set's). The `tier` column holds the level token "
            "`m<magnitude>` (`m1p5` = 1.5). They measure psychometric functions and thresholds (the change heard "
            "correctly 75 % of the time), scored by the `vocalgrad_sweep` task group; the `all` config leaves "
            "them out. Each clip also records what its level realised: `magnitude` (declared), "
            "`magnitude_realised` (measured on the clip as heard, clipping included, unit `realised_unit`), `level_null` (the level cannot "
            "change this source, e.g. a cut-off above its band limit: not a change) and `level_change_db` (the "
            "level change that comes with the transform).\n\n"
            + _md_table(["config", "attribute", "magnitude unit", "magnitudes (paper tier)", "clips"], rows) + "\n")
