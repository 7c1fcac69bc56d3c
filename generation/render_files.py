"""What the renderer writes into its folder besides the clips and ``render.json``.

Part files (``.parts/``: one per complete unit, one span check per frozen source) make a render
resumable; ``selection.csv``, ``span_check.csv`` and ``manifest.parquet`` are rebuilt from them
at the end of every run (a file whose bytes would not change is not rewritten, so a finished render
can be re-checked in a read-only folder); temp files of killed workers are cleaned up before a run.
A rerun trusts a part file only when every clip it lists is on disk with the recorded sha256
(:func:`unit_problem`), so a deleted or damaged clip is rendered again. The file names are
:class:`generation.render_dir.RenderDir`'s.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from pathlib import Path

import vocalgrad as vg

from . import audio as aio
from .render_dir import RenderDir
from .sources import SourceItem

__all__ = ["PARTS_DIR", "clean_stale_temps", "csv_bytes", "part_path", "part_rows", "pid_alive", "source_problem",
           "span_part_path", "unit_problem", "write_manifest", "write_selection", "write_span_check"]

#: Folder of the part files inside the render folder (named by :class:`RenderDir`).
PARTS_DIR = RenderDir.PARTS


def part_rows(out_dir: Path) -> list[dict]:
    """Manifest rows of every complete unit, sorted by category and clip id."""
    rows = []
    for part in sorted((out_dir / PARTS_DIR).glob("*.json")):
        rows.extend(json.loads(part.read_text()))
    rows.sort(key=lambda r: (r["category"], r["clip_id"]))
    return rows


def unit_problem(out_dir: Path, part: Path) -> str | None:
    """Why the finished unit of part file ``part`` cannot be trusted, ``None`` when it can.

    Every clip the part file lists must exist with the size and sha256 it was written with
    (the sha256 of its bytes is the one in the part file and the manifest). A part file that
    cannot be read is not trusted either.
    """
    try:
        rows = json.loads(part.read_text())
        clips = [(r["path"], r["sha256"]) for r in rows]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"{part}: unreadable part file ({type(exc).__name__})"
    from .contained import outside_reason

    for rel, sha in clips:
        why = outside_reason(out_dir, rel)
        if why:
            return f"{part}: clip path {why}; the unit is rendered again"
        path = out_dir / rel
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return f"{path}: missing"
        except OSError as exc:
            return f"{path}: unreadable ({exc.strerror})"
        if hashlib.sha256(data).hexdigest() != sha:
            return f"{path}: sha256 differs from the one it was written with"
    return None


def source_problem(out_dir: Path, source_id: str) -> str | None:
    """Why ``sources/<source_id>.flac`` of a rendered source cannot be trusted (missing, no FLAC, or other
    bytes than the sha256 its record (:func:`generation.render_identity.recorded_sources`) gives), else ``None``."""
    from .identity import sha256_file
    from .render_identity import source_record_path

    path = RenderDir(out_dir).source_path(source_id)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except FileNotFoundError:
        return f"{path}: missing"
    except OSError as exc:
        return f"{path}: unreadable ({exc.strerror})"
    if head != b"fLaC":
        return f"{path}: not a FLAC file"
    try:
        want = json.loads(source_record_path(out_dir, source_id).read_text()).get("flac_sha256")
    except (OSError, ValueError, AttributeError):
        want = None  # no record (yet): render.json's sources adopt the file at the end of the run
    if want and sha256_file(path) != want:
        return f"{path}: sha256 differs from the one it was written with"
    return None


def span_part_path(out_dir: Path, source_id: str) -> Path:
    """Span check of one frozen source (recorded vs detected bounds), written with its first unit."""
    return out_dir / PARTS_DIR / "span" / f"{source_id}.json"


def part_path(out_dir: Path, source_id: str, category: str) -> Path:
    """Part file of one (source, category) unit: its manifest rows; it exists once the unit is complete."""
    return out_dir / PARTS_DIR / f"{source_id}__{category}.json"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host still runs. A zombie (killed, not yet reaped — in a container
    whose init does not reap orphans it may stay so) does not run and can write nothing."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc: trust kill(0)
    return state not in ("Z", "X")


def clean_stale_temps(out_dir: Path) -> None:
    """Remove temp files left by killed processes of this host (others may still be writing)."""
    host = aio.HOST_TAG
    for tmp in out_dir.rglob(".*.tmp"):
        parts = tmp.name.rsplit(".", 3)  # .name . host . pid . tmp
        if len(parts) == 4 and parts[1] == host and parts[2].isdigit() and not pid_alive(int(parts[2])):
            tmp.unlink(missing_ok=True)


def csv_bytes(header: list[str], rows: list[list]) -> bytes:
    """A CSV file (``\\n`` line ends) of ``header`` and ``rows``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode()


def write_selection(out_dir: Path, items: list[SourceItem]) -> None:
    """Write ``selection.csv``: one row per selected source with its metadata and extras."""
    extra_keys = sorted({k for it in items for k in it.extra})
    header = ["source_id", "speaker_id", "sentence_id", "gender", "accent", "text", "audio"] + extra_keys
    rows = [[it.source_id, it.speaker_id, it.sentence_id, it.gender, it.accent, it.text,
             str(it.audio) if isinstance(it.audio, (str, os.PathLike)) else repr(it.audio)]
            + [it.extra.get(k, "") for k in extra_keys] for it in items]
    aio.write_if_changed(RenderDir(out_dir).selection_path, csv_bytes(header, rows))


def write_span_check(out_dir: Path, items: list[SourceItem]) -> int:
    """Write ``span_check.csv`` from the per-source checks of the sources rendered so far; returns its rows."""
    header = ["source_id", "corpus_id", "recorded_onset_sec", "detected_onset_sec", "recorded_offset_sec",
              "detected_offset_sec", "onset_diff_ms", "offset_diff_ms", "detected_found"]
    rows = []
    for it in items:
        path = span_part_path(out_dir, it.source_id)
        row = json.loads(path.read_text()) if path.is_file() else None
        if row:
            rows.append([row[k] for k in header])
    path = RenderDir(out_dir).span_check_path
    if rows or path.exists():
        aio.write_if_changed(path, csv_bytes(header, rows))
    return len(rows)


def write_manifest(out_dir: Path, rows: list[dict], *, sweep: bool = False) -> int:
    """Rebuild ``manifest.parquet`` from the rows of every complete unit (:func:`part_rows`); returns the row count.

    A sweep render's manifest (``sweep``) also has the :data:`vocalgrad.SWEEP_COLUMNS`.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"string": pa.string(), "int32": pa.int32(), "float64": pa.float64(), "bool": pa.bool_()}
    columns = vg.MANIFEST_COLUMNS + (vg.SWEEP_COLUMNS if sweep else ())
    schema = pa.schema([(name, types[t]) for name, t, _ in columns])
    table = pa.Table.from_pylist(rows, schema=schema)
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf, compression="zstd")
    aio.write_if_changed(RenderDir(out_dir).manifest_path, buf.getvalue().to_pybytes())
    return len(rows)
