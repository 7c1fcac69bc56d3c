"""What the dataset card says about *this* build: licence, repo id, citations, whose results it shows.

:func:`generation.hub_card.render_card` fills the template's counts; the parts here depend on where the
clips came from (the render's ``source``) and on where they will be published:

* the licence follows the sources: VCTK is CC-BY-4.0; the embedded demo voices are distributed under the
  toolkit's Apache-2.0 (``generation/demo_data/README.md``); a folder or an ``hf:`` dataset says what its
  ``README.md`` header (``license:``) or a ``LICENSE`` file says, else ``unknown`` with the advice to pass
  ``--license``; the pure tones (made by the toolkit) add no constraint;
* the paper's results table appears only for a VCTK build (the paper's clips); other builds say that
  those numbers belong to different data;
* the repo id of the loading examples is the user's (``vocalgrad hub --repo``, re-targeted by
  ``vocalgrad publish --repo`` through :func:`retarget_repo_id`).
"""

from __future__ import annotations

import re
from pathlib import Path

import vocalgrad

from .paper_results import PAPER_CATEGORY_ACC, PAPER_TRAJECTORY_ACC

__all__ = ["source_license", "card_license", "paper_results_section", "citations_section", "toolkit_link",
           "repo_marker", "card_repo_id", "retarget_repo_id", "UNKNOWN_LICENSE"]

UNKNOWN_LICENSE = "unknown"
#: Licence of the data each source kind is known to carry (None: decided from the source's metadata).
_KIND_LICENSE = {"vctk": "cc-by-4.0", "demo": "apache-2.0"}
#: Source kinds whose clips impose no licence of their own (synthesised by the toolkit).
_NEUTRAL_KINDS = {"tones"}
#: (Hub licence id, pattern) to read a licence out of free text (first match wins; specific before general).
_LICENSE_PATTERNS = (
    ("cc-by-nc-sa-4.0", r"cc[- ]by[- ]nc[- ]sa[- ]4\.0|attribution[- ]noncommercial[- ]sharealike 4\.0"),
    ("cc-by-nc-4.0", r"cc[- ]by[- ]nc[- ]4\.0|attribution[- ]noncommercial 4\.0"),
    ("cc-by-sa-4.0", r"cc[- ]by[- ]sa[- ]4\.0|attribution[- ]sharealike 4\.0"),
    ("cc-by-4.0", r"cc[- ]by[- ]4\.0|creative commons attribution 4\.0"),
    ("cc0-1.0", r"\bcc0\b|public domain dedication"),
    ("apache-2.0", r"apache[- ]2\.0|apache license,? version 2\.0"),
    ("mit", r"\bmit license\b|^mit$"),
)
_MARKER = re.compile(r"<!-- vocalgrad-card repo_id: (\S+) -->")
VCTK_CITATION = """\
@misc{yamagishi2019vctk,
  title     = {{CSTR VCTK Corpus}: English Multi-speaker Corpus for {CSTR} Voice Cloning Toolkit (version 0.92)},
  author    = {Yamagishi, Junichi and Veaux, Christophe and MacDonald, Kirsten},
  publisher = {University of Edinburgh. The Centre for Speech Technology Research (CSTR)},
  year      = {2019},
  doi       = {10.7488/ds/2645}
}"""


def _kind(source: str) -> tuple[str, str]:
    kind, _, arg = str(source).partition(":")
    return kind, arg


def _license_from_text(text: str) -> str | None:
    low = text.strip().lower()
    for lic, pattern in _LICENSE_PATTERNS:
        if re.search(pattern, low, flags=re.M):
            return lic
    return None


def _license_from_readme(path: Path) -> str | None:
    """The ``license:`` of a card's YAML header (``README.md``), if any."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("---"):
        return None
    m = re.search(r"^license:\s*(?:\[\s*)?['\"]?([\w.+-]+)", text.split("\n---", 1)[0], flags=re.M)
    return m.group(1).lower() if m else None


def _license_of_folder(root: Path) -> str | None:
    lic = _license_from_readme(root / "README.md")
    if lic:
        return lic
    for p in sorted(root.glob("*")):
        if p.is_file() and re.match(r"(licen[cs]e|copying)", p.name, flags=re.I):
            try:
                return _license_from_text(p.read_text(encoding="utf-8", errors="replace")[:20000])
            except OSError:
                return None
    return None


def _license_of_hf(arg: str) -> str | None:
    dataset = arg.split(":", 1)[0] if not Path(arg).exists() else arg
    if Path(dataset).is_dir():
        return _license_of_folder(Path(dataset))
    try:  # the card of a Hub dataset, only if it is in the local cache (never a request)
        from huggingface_hub import hf_hub_download

        return _license_from_readme(Path(hf_hub_download(dataset, "README.md", repo_type="dataset",
                                                          local_files_only=True)))
    except Exception:  # not cached, not installed, malformed id: unknown
        return None


def source_license(source: str) -> str | None:
    """Hub licence id of the clips rendered from ``source`` (a ``--source`` string), or None if unknown.

    Returns ``""`` for sources that impose none (the toolkit's tones).
    """
    kind, arg = _kind(source)
    if kind in _NEUTRAL_KINDS:
        return ""
    if kind in _KIND_LICENSE:
        return _KIND_LICENSE[kind]
    if kind == "folder":
        return _license_of_folder(Path(arg))
    if kind == "hf":
        return _license_of_hf(arg)
    return None


def card_license(sources: list[str], override: str | None = None) -> tuple[str, str]:
    """The card's licence: (Hub id for the YAML header, the card's "Licence" section in markdown)."""
    found = {s: source_license(s) for s in sources}
    if override:
        text = f"`{override}` (set with `--license`). Sources: " + ", ".join(f"`{s}`" for s in sources) + "."
        return override.lower(), text
    named = {lic for lic in found.values() if lic}
    unknown = [s for s, lic in found.items() if lic is None]
    why = ""
    if unknown:
        why = f"the licence of {', '.join(f'`{s}`' for s in unknown)} is not known to the toolkit"
    elif len(named) > 1:
        why = "the sources have different licences: " + ", ".join(f"`{s}` {lic}" for s, lic in found.items() if lic)
    elif not named:
        why = "no source names a licence"
    if unknown or len(named) != 1:
        return UNKNOWN_LICENSE, (f"**Unknown** — {why}. Set it with `vocalgrad hub ... --license ID` (a Hub "
                                 "licence id such as `cc-by-4.0`) once you know the terms of your recordings.")
    lic = named.pop()
    notes = []
    kinds = {_kind(s)[0] for s in sources}
    if "vctk" in kinds:
        notes.append("the source recordings are the CSTR VCTK Corpus (CC-BY-4.0); cite it (below) and the paper")
    if "demo" in kinds:
        notes.append("the demo voices are synthetic speech shipped with the VocalGrad toolkit under its licence; "
                     "the speech engines that made them are listed in the toolkit's `generation/demo_data/README.md`")
    if kinds & {"folder", "hf"}:
        notes.append("taken from the source's own metadata (its README `license:` or LICENSE file); check it")
    return lic, f"`{lic}`" + (": " + "; ".join(notes) if notes else "") + "."


def is_reference_build(sources: list[str]) -> bool:
    """Whether the test clips come from VCTK, the paper's corpus."""
    return any(_kind(s)[0] == "vctk" for s in sources)


def paper_results_section(test_source: str | None) -> str:
    """The "Results in the paper" section: the table for a VCTK build, a pointer otherwise."""
    if test_source is not None and _kind(test_source)[0] == "vctk":
        cats = list(vocalgrad.CATEGORY_NAMES)
        lines = ["Accuracy (%) on the paper's test set (VCTK sources, the same recipe).", "",
                 "| model | " + " | ".join(cats) + " | avg |", "|---" * (len(cats) + 2) + "|"]
        for system, acc in PAPER_CATEGORY_ACC.items():
            lines.append(f"| {system} | " + " | ".join(f"{acc[c]:.1f}" for c in cats) + f" | {acc['avg']:.1f} |")
        human = PAPER_TRAJECTORY_ACC["Human"]
        lines += ["", "Human accuracy by trajectory: " + ", ".join(f"{t} {human[t]:.1f}" for t in vocalgrad.TRAJECTORIES)
                  + "."]
        return "\n".join(lines)
    where = f"`{test_source}`" if test_source else "renders without a test split"
    return (f"This build's clips come from {where}, not from the paper's VCTK sources, so the paper's "
            "accuracies (humans 94.4 %, audio language models about 50 %) were measured on different data and "
            "are not shown as results for it. They are on the card of the paper's dataset, "
            f"[the paper's dataset card](https://huggingface.co/datasets/{vocalgrad.HUB_REPO_ID}).")


def citations_section(sources: list[str]) -> str:
    """BibTeX entries to add after the paper's: VCTK for a VCTK build."""
    if any(_kind(s)[0] == "vctk" for s in sources):
        return "The source recordings (CSTR VCTK Corpus):\n\n```bibtex\n" + VCTK_CITATION + "\n```"
    return ""


def toolkit_link() -> str:
    """Markdown naming the toolkit, linked to its source URL when the installed package declares one."""
    try:
        from importlib.metadata import metadata

        urls = metadata("vocalgrad").get_all("Project-URL") or []
    except Exception:
        urls = []
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("source", "repository", "homepage", "code"):
            return f"[VocalGrad toolkit]({url.strip()})"
    return "VocalGrad toolkit"


def repo_marker(repo_id: str) -> str:
    """Hidden line recording the repo id the card's examples use (read back by :func:`retarget_repo_id`)."""
    return f"<!-- vocalgrad-card repo_id: {repo_id} -->"


def card_repo_id(text: str) -> str | None:
    """The repo id recorded in a card by :func:`repo_marker`."""
    m = _MARKER.search(text)
    return m.group(1) if m else None


def retarget_repo_id(text: str, repo_id: str) -> str:
    """Card text with the recorded repo id replaced by ``repo_id`` in the examples (and the marker).

    Only whole ids are replaced (not inside a URL path such as ``datasets/ORG/NAME`` of the paper's link).
    A card without the marker is returned unchanged.
    """
    old = card_repo_id(text)
    if old is None or old == repo_id:
        return text
    pattern = re.compile(rf"(?<![\w/.-]){re.escape(old)}(?![\w/.-])")
    return pattern.sub(repo_id, text)
