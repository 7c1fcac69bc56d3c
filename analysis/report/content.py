"""Content identity of the report's rows: which clips each result was computed on, by sha256.

Every sample-log line names its clip by id and logs the sha256 of the audio the model heard
(:func:`harness_tasks.data_identity.logged_clip_sha256`); the report keeps it in each record
(``"sha256"``, None in logs without it). Three joins check it:

* **rows**: results files merged into one row (same label and task variant) must not hold different
  audio under one clip id; otherwise :func:`separate_builds` refuses, naming both files and their
  build fingerprints, or with ``allow_mixed`` keeps each build in a row of its own, labelled by build;
* **paired comparisons**: two rows are paired only on clips with the same sha256; rows that hold
  different audio under one clip id are different builds: :func:`build_clash` finds that, and the
  report refuses (or, with ``allow_mixed``, states that they were not paired);
* **--data**: every clip the HTML page plays must be the audio the models heard
  (:func:`check_data_folder`).

:func:`row_data` summarises a row's data for report.json, report.md and the page: build name,
fingerprint (short build digest), source kind, clips and sources.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from generation.identity import build_digest, sha256_bytes, short
from harness_tasks.data_identity import DATA_KEY, PAPER_KINDS, SOURCE_KINDS

from .evaluation import ResultsError

__all__ = ["ALLOW_MIXED_HINT", "DATA_NOTE", "MixedBuildsError", "NOT_PAPER_MARK", "NOT_PAPER_NOTE", "build_clash",
           "builds_of", "check_data_folder", "clip_shas", "data_lines", "digest_of", "not_paired_lines", "not_paper",
           "row_data", "separate_builds"]

class MixedBuildsError(ResultsError):
    """Results of different builds (the same clip ids, other audio) would share a row or a pairing."""


ALLOW_MIXED_HINT = "pass --allow-mixed to keep each build in a row of its own (labelled by build), never paired"


def clip_shas(records: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Clip id -> sha256 of the records that logged one."""
    return {r["id"]: r["sha256"] for r in records if r.get("sha256")}


def digest_of(records: Iterable[Mapping[str, Any]]) -> str | None:
    """Build digest over the records' ``(id, sha256)``; None when a record lacks its sha256 (or none is there)."""
    pairs = [(r["id"], r.get("sha256")) for r in records]
    if not pairs or any(not sha for _, sha in pairs):
        return None
    try:
        return build_digest(pairs)
    except ValueError:
        return None


def _clash(a: Mapping[str, str], b: Mapping[str, str]) -> str | None:
    """The first clip id (sorted) both maps hold with different sha256, or None."""
    small, big = (a, b) if len(a) <= len(b) else (b, a)
    bad = sorted(cid for cid, sha in small.items() if cid in big and big[cid] != sha)
    return bad[0] if bad else None


def build_clash(ea, eb) -> tuple[str, str, str] | None:
    """``(clip id, sha256 in A, sha256 in B)`` of the first clip the two evaluations hold with different
    audio (the same category and id), or None when they agree on every clip both logged a sha256 for."""
    a = {(r["category"], r["id"]): r["sha256"] for r in ea.records if r.get("sha256")}
    b = {(r["category"], r["id"]): r["sha256"] for r in eb.records if r.get("sha256")}
    bad = sorted(k for k in a if k in b and a[k] != b[k])
    if not bad:
        return None
    return bad[0][1], a[bad[0]], b[bad[0]]


def file_digest(data: Mapping[str, Any], records: Iterable[Mapping[str, Any]]) -> str | None:
    """A results file's build digest: the one it records (``vocalgrad_data``), else over its sample logs."""
    recorded = (data.get(DATA_KEY) or {}).get("build_digest") if isinstance(data.get(DATA_KEY), Mapping) else None
    return recorded or digest_of(records)


def _recorded_kind(data: Mapping[str, Any]) -> str | None:
    """The source kind a results file records, None when it records none (or ``unknown``)."""
    rec = data.get(DATA_KEY)
    kind = rec.get("source_kind") if isinstance(rec, Mapping) else None
    return kind if kind and kind != "unknown" else None


def separate_builds(entries: list, *, allow_mixed: bool) -> list:
    """Check that the results files merged into each row hold the same audio under each clip id (and,
    where they record it, clips of the same source kind: a demo run and a VCTK run never share a row).

    Parameters
    ----------
    entries : list of analysis.report.loading.TaskEntry
        Every task of every results file, in reading order; ``row`` is the key of the row it joins,
        ``records`` its sample-log records (None without a sample log).
    allow_mixed : bool
        Keep the builds of a mixed row apart: each build's entries get ``build`` set to its
        fingerprint (their label then names it) instead of an error.

    Returns
    -------
    list
        ``entries``, with ``build`` set where a row holds several builds.

    Raises
    ------
    MixedBuildsError
        A row mixes builds and ``allow_mixed`` is off: the message names both results files and
        their build fingerprints.
    """
    by_file: dict[Path, list] = {}
    for e in entries:
        by_file.setdefault(e.rfile, []).append(e)
    file_fp = {f: short(file_digest(es[0].data, [r for x in es for r in (x.records or [])]))
               for f, es in by_file.items()}
    kind = {f: _recorded_kind(es[0].data) for f, es in by_file.items()}
    rows: dict[tuple, dict[Path, dict[str, str]]] = {}
    for e in entries:
        rows.setdefault(e.row, {}).setdefault(e.rfile, {}).update(clip_shas(e.records or []))
    builds: dict[tuple[tuple, Path], str] = {}
    for row, files in rows.items():
        clusters: list[tuple[dict[str, str], list[Path], set]] = []  # clip shas, files, known source kinds
        for rfile, shas in files.items():
            for ids, members, kinds in clusters:
                if _clash(ids, shas) is None and (kind[rfile] is None or not kinds or kind[rfile] in kinds):
                    ids.update(shas)
                    members.append(rfile)
                    kinds.update({kind[rfile]} - {None})
                    break
            else:
                if clusters and not allow_mixed:
                    ids, members, kinds = clusters[0]
                    cid = _clash(ids, shas)
                    if cid is not None:
                        first = next(f for f in members if cid in files[f])
                        what = f"different audio under the same clip ids (first: {cid})"
                    else:
                        first = next(f for f in members if kind[f] is not None)
                        common = set(files[first]) & set(shas)
                        if common or file_fp[first] == file_fp[rfile]:  # the audio agrees: only the records differ
                            builds_said = (f"build {file_fp[first]}" if file_fp[first] == file_fp[rfile] else
                                           f"builds {file_fp[first]} and {file_fp[rfile]}")
                            raise MixedBuildsError(
                                f"{row[1]}: {first} and {rfile} hold the same audio ({len(common)} clip id(s) in "
                                f"common, the same sha256 each; {builds_said}) but record different source kinds "
                                f"({kind[first]} and {kind[rfile]}): the records disagree, not the clips. Check "
                                "which Hub folder each run evaluated (VOCALGRAD_DATASET; its card names the source "
                                f"kind) and fix the wrong record, report them separately, or {ALLOW_MIXED_HINT}")
                        what = f"clips of different sources ({kind[first]} and {kind[rfile]})"
                    raise MixedBuildsError(
                        f"{row[1]}: {first} (build {file_fp[first]}) and {rfile} (build {file_fp[rfile]}) hold "
                        f"{what}: they were computed on different builds and cannot share a row; report them "
                        f"separately, or {ALLOW_MIXED_HINT}")
                clusters.append((dict(shas), [rfile], {kind[rfile]} - {None}))
        if len(clusters) > 1:
            fps = []
            for k, (ids, members, _) in enumerate(clusters):
                try:
                    fps.append(short(build_digest(ids.items())) if ids else f"#{k + 1}")
                except ValueError:
                    fps.append(f"#{k + 1}")
            for fp, (_, members, kinds) in zip(fps, clusters):
                if fps.count(fp) > 1:  # the same audio, apart only by the source kind each records
                    fp = f"{fp}, recorded as {'/'.join(sorted(kinds)) or 'no source kind'}"
                for rfile in members:
                    builds[(row, rfile)] = fp
    return [e._replace(build=builds.get((e.row, e.rfile))) for e in entries]


def _joined(values: Iterable[Any]) -> str | None:
    seen = [str(v) for v in dict.fromkeys(v for v in values if v)]
    return " + ".join(seen) if seen else None


def row_data(records: list[Mapping[str, Any]], recorded: list[Mapping[str, Any]], *, n_clips: int | None = None,
             build: str | None = None) -> dict[str, Any]:
    """What a row was computed on: build name, fingerprint, source kind, clips and sources.

    Parameters
    ----------
    records : list of dict
        The row's sample-log records (``id``, ``source_id``, ``sha256``).
    recorded : list of dict
        The ``vocalgrad_data`` entries of its results files (empty for files written before it existed).
    n_clips : int, optional
        Clips lm-eval evaluated, for a row without sample logs.
    build : str, optional
        The fingerprint the row is labelled with (``--allow-mixed``).
    """
    digest = digest_of(records)
    if digest is None and not records and len(recorded) == 1:
        digest = recorded[0].get("build_digest")
    kinds = sorted({str(d.get("source_kind") or "unknown") for d in recorded}) or ["unknown"]
    kind = kinds[0] if len(kinds) == 1 else "+".join(kinds)
    out: dict[str, Any] = {
        "build": _joined(d.get("build") for d in recorded),
        "dataset": _joined(d.get("dataset") for d in recorded),
        "source": _joined(d.get("source") for d in recorded),
        "source_kind": kind,
        "source_kind_text": " + ".join(SOURCE_KINDS.get(k, k) for k in kinds),
        "build_digest": digest,
        "fingerprint": build or (short(digest) if digest else None),
        "n_clips": len({r["id"] for r in records}) if records else n_clips,
        "n_sources": len({r.get("source_id") for r in records}) if records else None,
        "sha256_logged": bool(records) and all(r.get("sha256") for r in records),
        "comparable_with_paper": (True if kinds and all(k in PAPER_KINDS for k in kinds)
                                  else None if "unknown" in kinds else False),
    }
    return out


def check_data_folder(catalog, evaluations, clip_ids: Iterable[str]) -> int:
    """Check that the data folder holds, for each of ``clip_ids`` (the clips the page will play), the
    audio every model that answered it heard (same sha256). Returns the number of clips checked.

    Raises
    ------
    ResultsError
        Naming the first clip whose audio differs, the model, both sha256 (short) and the folder.
    """
    heard: dict[str, list[tuple[str, str]]] = {}
    for ev in evaluations:
        for r in ev.records:
            if r.get("sha256"):
                heard.setdefault(r["id"], []).append((ev.label, r["sha256"]))
    n = 0
    for cid in dict.fromkeys(clip_ids):
        if cid not in heard or cid not in catalog:
            continue
        data = catalog.audio_bytes(cid)
        have = {sha256_bytes(data)}
        where = getattr(catalog, "_locator", {}).get(cid)
        if catalog.kind == "published" and isinstance(where, Path) and where.is_file():
            have.add(sha256_bytes(where.read_bytes()))  # the release's own file bytes, as read by the harness
        n += 1
        for label, sha in heard[cid]:
            if sha not in have:
                raise ResultsError(
                    f"--data {catalog.root}: clip {cid} is not the audio {label} heard (the folder has "
                    f"{short(sorted(have)[0])}, the sample log {short(sha)}): give the Hub or render folder the "
                    f"models were evaluated on")
    return n


DATA_NOTE = ("What each row was computed on: the build (the dataset folder's name or the repo id), its fingerprint "
             "(the first 12 hex digits of the build digest over the (clip id, sha256) pairs the sample logs record), "
             "the source kind, and the clips and source utterances the row holds.")


def data_lines(models: list[Mapping[str, Any]]) -> list[str]:
    """report.md's *Data* section: one table row per build the rows were computed on."""
    if not models:
        return []
    lines = ["## Data", "", DATA_NOTE, "",
             "| build | fingerprint | source | clips | sources | rows |", "|---|---|---|---|---|---|"]
    for (build, fp, kind, n, ns), labels in builds_of(models).items():
        lines.append(f"| {build} | `{fp}` | {kind} | {'–' if n is None else n} | {'–' if ns is None else ns} | "
                     f"{', '.join(labels)} |")
    lines.append("")
    if any(not_paper(m) for m in models):
        lines += [NOT_PAPER_NOTE, ""]
    return lines


#: The mark of a row not computed on the paper's VCTK test set, and what it means.
NOT_PAPER_MARK = "‡"
NOT_PAPER_NOTE = (f"{NOT_PAPER_MARK} = computed on another source than the paper's VCTK test set (e.g. the demo's "
                  "synthetic voices): not comparable with the rows copied from the paper.")


def not_paper(m: Mapping[str, Any]) -> bool:
    """Whether a model row is known to come from another source than the paper's VCTK set."""
    return (m.get("data") or {}).get("comparable_with_paper") is False


def builds_of(models: list[Mapping[str, Any]]) -> dict[tuple, list[str]]:
    """``(build, fingerprint, source, clips, sources)`` -> labels of the rows computed on it."""
    builds: dict[tuple, list[str]] = {}
    for m in models:
        d = m.get("data") or {}
        key = (d.get("build") or "unknown", d.get("fingerprint") or "unknown", d.get("source_kind_text") or "unknown",
               d.get("n_clips"), d.get("n_sources"))
        builds.setdefault(key, []).append(m["label"])
    return builds


def not_paired_lines(report: Mapping[str, Any]) -> list[str]:
    """report.md's list of the rows not paired because they come from different builds (``--allow-mixed``)."""
    rows = report.get("not_paired") or []
    if not rows:
        return []
    return (["## Not paired: different builds", "",
             "These rows hold different audio under the same clip ids (`--allow-mixed`): they are reported side by "
             "side, never paired.", ""]
            + [f"- {p['a']} and {p['b']}: {p['reason']}" for p in rows] + [""])
