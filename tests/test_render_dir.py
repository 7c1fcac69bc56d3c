"""RenderDir and HubDir: the one reader of each folder layout, and the sources package's import order."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import vocalgrad
from generation import hub
from generation.hub_dir import HubDir
from generation.render_dir import RenderDir, RenderDirError

from _hub_helpers import make_render_dir, read_manifest, write_manifest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def render(tmp_path):
    return make_render_dir(tmp_path / "render", categories=("pitch", "volume"), seconds=0.02)


def test_rows_meta_and_paths(render):
    rd = RenderDir(render)
    rows = rd.rows()
    assert [r["clip_id"] for r in rows] == sorted(r["clip_id"] for r in read_manifest(render))
    assert tuple(rows[0]) == vocalgrad.MANIFEST_COLUMN_NAMES
    assert {r["category"] for r in rd.rows(["volume"])} == {"volume"}
    assert rd.meta["split"] == "test"
    assert all(rd.clip_path(r).is_file() for r in rows)
    assert rd.source_path("tone00") == render / "sources" / "tone00.flac"
    assert list(rd.first_row_per_source()) == ["tone00"]
    assert RenderDir.looks_like(render) and not RenderDir.looks_like(render / "clips")


def test_verify_is_what_hub_checks(render):
    rows = read_manifest(render)
    (render / rows[0]["path"]).unlink()
    rows[1]["split"] = "train"
    write_manifest(render, rows)
    check = RenderDir(render).verify()
    assert any("clip listed in manifest.parquet is missing" in p for p in check.problems)
    assert any("manifest split differs from render.json ('test')" in p for p in check.problems)
    assert check.problems == hub.check_render(render).problems
    assert len(check.missing) == 24 * 7  # the seven categories this render left out


def test_content_hash_follows_the_manifest(render):
    rd = RenderDir(render)
    before = rd.content_hash()
    meta = json.loads(rd.meta_path.read_text())
    rd.meta_path.write_text(json.dumps({**meta, "note": "changed"}))
    assert RenderDir(render).content_hash() != before


def test_errors_name_the_file(tmp_path):
    (tmp_path / "render.json").write_text("{not json")
    with pytest.raises(RenderDirError, match=r"render\.json: not valid JSON"):
        RenderDir(tmp_path).meta
    with pytest.raises(RenderDirError, match=r"manifest\.parquet: missing"):
        RenderDir(tmp_path).rows()
    assert isinstance(RenderDirError("x"), vocalgrad.VocalGradError)


def test_hub_dir_shards_and_errors(tmp_path):
    (tmp_path / "README.md").write_text("---\npretty_name: VocalGrad\n---\n")
    (tmp_path / "pitch").mkdir()
    for name in ("test-00001-of-00002.parquet", "test-00000-of-00002.parquet", "train-00000-of-00001.parquet"):
        (tmp_path / "pitch" / name).write_bytes(b"")
    hd = HubDir(tmp_path)
    assert HubDir.looks_like(tmp_path) and hd.has_vocalgrad_card()
    assert [p.name for p in hd.shards("pitch", "test")] == ["test-00000-of-00002.parquet", "test-00001-of-00002.parquet"]
    assert list(hd.category_shards()) == ["pitch"]
    with pytest.raises(FileNotFoundError, match=r"no config folder 'echo' \(found: pitch\).*point X elsewhere"):
        hd.split_files("echo", "test", env="X")
    with pytest.raises(FileNotFoundError, match=r"no 'dev-\*\.parquet' shards"):
        hd.split_files("pitch", "dev")


def _imports(path: Path, package: str) -> set[str]:
    """Modules a file imports at its top level, absolute (relative imports resolved against ``package``)."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            out.add(f"{base}.{node.module}".strip(".") if node.module else base)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_selection_does_not_import_the_readers():
    """The seeded selector needs only sources.base; the readers import it (no cycle through the package)."""
    pkg = ROOT / "generation" / "sources"
    sel = _imports(pkg / "selection.py", "generation.sources")
    assert sel & {"generation.sources.base"} and not sel - {"generation.sources.base", "__future__", "hashlib",
                                                            "re", "dataclasses", "typing"}
    base = _imports(pkg / "base.py", "generation.sources")
    assert not {m for m in base if m.startswith("generation.sources")}
