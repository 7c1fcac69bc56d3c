"""A render folder's identity records, pinned on small files: each kind of source's digest, the recorded
sources (render.json updated by the part records), the refusals naming what changed, the recipe checks,
what counts as the render's own output, and render.json's identity keys. What mutation testing of
generation/render_identity.py found unchecked (docs/testing.md)."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import warnings
from types import SimpleNamespace as NS

import numpy as np
import pytest

from generation.identity import DigestMismatch, content_digest, recipe_seal
from generation.recipe import RECIPE_DIR, shipped_digest
from generation.render_identity import (IdentityError, check_recipe, check_sources, exclude_own_output,
                                        identity_fields, recorded_sources, shipped_name_warning, source_digests,
                                        source_record_path, source_sha256, write_source_record)
from generation.sources import SourceItem, SourceWarning


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@dataclasses.dataclass
class _Spec:
    f0: float
    n: int


class _Hashed:
    def sha256(self):
        return "h" * 64


class _Pathed:
    def __init__(self, path):
        self.path = path


class _Reader:
    def read(self):
        return np.array([0.5, -0.25], dtype=np.float32), 8000.0


class _Broken:
    def read(self):
        raise OSError("gone")


def test_each_kind_of_source_has_its_own_digest(tmp_path):
    f = tmp_path / "a.wav"
    f.write_bytes(b"RIFFdata")
    assert source_sha256(SourceItem("a", str(f))) == _sha(b"RIFFdata")
    assert source_sha256(SourceItem("a", f)) == _sha(b"RIFFdata")
    assert source_sha256(SourceItem("a", _Hashed())) == "h" * 64
    assert source_sha256(SourceItem("a", _Pathed(f))) == _sha(b"RIFFdata")
    assert source_sha256(SourceItem("a", _Spec(100.0, 3))) == content_digest({"type": "_Spec", "f0": 100.0, "n": 3})
    y = np.array([0.5, -0.25], dtype=np.float32)
    assert source_sha256(SourceItem("a", _Reader())) == _sha(b"8000:" + y.tobytes())
    assert source_sha256(SourceItem("a", _Broken())) is None
    assert source_sha256(SourceItem("a", str(tmp_path / "missing.wav"))) is None
    assert source_digests([SourceItem("x", f), SourceItem("y", _Broken())]) == {"x": _sha(b"RIFFdata"), "y": None}


def test_a_source_record_is_written_beside_the_parts_and_read_back_over_render_json(tmp_path):
    assert source_record_path(tmp_path, "s1") == tmp_path / ".parts" / "source" / "s1.json"
    write_source_record(tmp_path, "s0", None, "f" * 64)  # unknown: nothing written
    assert not source_record_path(tmp_path, "s0").exists()
    write_source_record(tmp_path, "s1", "a" * 64, "b" * 64)
    assert json.loads(source_record_path(tmp_path, "s1").read_text()) == {"sha256": "a" * 64, "flac_sha256": "b" * 64}
    assert recorded_sources(tmp_path) == {"s1": {"sha256": "a" * 64, "flac_sha256": "b" * 64}}
    (tmp_path / "render.json").write_text(json.dumps({"sources": {"s1": {"sha256": "old"}, "s2": {"sha256": "c"}}}))
    (source_record_path(tmp_path, "s0")).write_text("{damaged")  # read first: the records after it still count
    assert recorded_sources(tmp_path) == {"s1": {"sha256": "a" * 64, "flac_sha256": "b" * 64}, "s2": {"sha256": "c"}}
    (tmp_path / "render.json").write_text("not json")
    assert recorded_sources(tmp_path) == {"s1": {"sha256": "a" * 64, "flac_sha256": "b" * 64}}


def test_changed_sources_are_refused_naming_three_and_counting_the_rest(tmp_path):
    (tmp_path / "render.json").write_text(json.dumps({"sources": {
        f"s{i}": {"sha256": f"{i}" * 64} for i in range(1, 6)} | {"s6": {"flac_sha256": "x"}}}))
    check_sources(tmp_path, {"s1": "1" * 64, "s2": None, "s6": "new", "s9": "new"})  # same, unknown, unrecorded
    with pytest.raises(IdentityError) as e:
        check_sources(tmp_path, {"s1": "9" * 64})
    assert str(e.value) == (f"{tmp_path}: 1 source(s) changed since their clips were rendered: s1 (rendered from "
                            "111111111111, now 999999999999); nothing was written. Restore the source audio, or "
                            "render the new audio into another --out")
    with pytest.raises(IdentityError, match=r": 4 source\(s\) changed .*s3 \(rendered from 333333333333, now "
                                            r"999999999999\) and 1 more; nothing"):
        check_sources(tmp_path, {f"s{i}": "9" * 64 for i in range(1, 5)})
    with pytest.raises(IdentityError, match=r"s3 \(rendered from 333333333333, now 999999999999\); nothing"):
        check_sources(tmp_path, {f"s{i}": "9" * 64 for i in range(1, 4)})


def test_a_recipe_of_other_content_or_an_edited_record_is_refused(tmp_path):
    recipe = NS(digest="d" * 64, name="mine", path="r/mine.toml")
    check_recipe(tmp_path, {}, recipe)
    check_recipe(tmp_path, {"recipe_digest": "d" * 64}, recipe)
    with pytest.raises(DigestMismatch, match=(r"^recipe contents differ: the recipe of .* \('old'\) is eeeeeeeeeeee, "
                                              r"this run's recipe r/mine.toml \('mine'\) is dddddddddddd; one render")):
        check_recipe(tmp_path, {"recipe": "old", "recipe_digest": "e" * 64}, recipe)
    edited = {"recipe": "mine", "recipe_digest": "d" * 64, "recipe_seal": recipe_seal("mine", "e" * 64)}
    with pytest.raises(IdentityError, match="recipe record was edited after the render.*; nothing was written$"):
        check_recipe(tmp_path, edited, recipe)


def test_a_recipe_named_like_a_shipped_one_with_other_content_is_named(tmp_path):
    shipped = shipped_digest("faithful-v1")
    assert shipped
    assert shipped_name_warning(NS(path=str(tmp_path / "f.toml"), name="faithful-v1", digest=shipped)) is None
    assert shipped_name_warning(NS(path=str(tmp_path / "f.toml"), name="my-own", digest="a" * 64)) is None
    assert shipped_name_warning(NS(path=str(RECIPE_DIR / "faithful-v1.toml"), name="faithful-v1",
                                   digest="a" * 64)) is None
    msg = shipped_name_warning(NS(path="x/f.toml", name="faithful-v1", digest="a" * 64))
    assert msg == (f"x/f.toml: named 'faithful-v1' like the shipped recipe but its content differs (aaaaaaaaaaaa, "
                   f"shipped {shipped[:12]}); render.json records both name and digest, give the edited recipe a "
                   "new name")


def test_the_renders_own_output_and_toolkit_folders_are_left_out(tmp_path):
    src = tmp_path / "corpus"
    out = tmp_path / "corpus" / "out"
    for sub in ("clips/pitch", "sources", ".parts", "keep"):
        (out / sub).mkdir(parents=True)
    old = src / "old_render" / "deep"
    old.mkdir(parents=True)
    (src / "old_render" / "render.json").write_text("{}")
    hub = src / "hub"
    hub.mkdir()
    (hub / "README.md").write_text("---\npretty_name: VocalGrad\n---\n")
    other = src / "notes"
    other.mkdir()
    (other / "README.md").write_text("---\npretty_name: Other\n---\n")
    files = {"c": out / "clips/pitch/c.flac", "s": out / "sources/s.flac", "p": out / ".parts/p.flac",
             "k": out / "keep/k.flac", "o": old / "o.flac", "h": hub / "h.flac", "n": other / "n.flac",
             "r": src / "r.flac"}
    for p in files.values():
        p.write_bytes(b"x")
    items = [SourceItem("obj", _Hashed())] + [SourceItem(k, str(p)) for k, p in files.items()]

    def reader():  # a source reader calling the check: the warning names the reader's caller
        return exclude_own_output(items, out, f"folder:{src}")

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        kept = reader(); line = inspect.currentframe().f_lineno  # noqa: E702
    assert [it.source_id for it in kept] == ["obj", "k", "n", "r"]
    assert len(w) == 1 and issubclass(w[0].category, SourceWarning)
    assert (w[0].filename, w[0].lineno) == (__file__, line)
    assert str(w[0].message) == (f"folder:{src}: left out toolkit output, never read as sources: {hub} (1 file(s)), "
                                 f"{src / 'old_render'} (1 file(s)), {out.resolve()} (3 file(s))")
    # not a folder: source: only --out's own folders are left out, a render folder elsewhere is read
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        kept = exclude_own_output(items, out, "vctk:/data")
    assert [it.source_id for it in kept] == ["obj", "k", "o", "h", "n", "r"]
    # a source folder inside a render folder: folders above the source root do not count
    inner = src / "old_render" / "deep"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        kept = exclude_own_output([SourceItem("o", str(old / "o.flac"))], tmp_path / "elsewhere", f"folder:{inner}")
    assert [it.source_id for it in kept] == ["o"] and not w


def test_render_json_identity_keys_adopt_missing_records(tmp_path):
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "s1.flac").write_bytes(b"flac1")
    (tmp_path / "sources" / "s2.flac").write_bytes(b"flac2")
    write_source_record(tmp_path, "s2", "b" * 64, "recorded-flac")
    rows = [{"clip_id": "c2", "sha256": "22", "source_id": "s2"}, {"clip_id": "c1", "sha256": "11", "source_id": "s1"},
            {"clip_id": "c3", "sha256": "33", "source_id": "s3"}]
    recipe = NS(digest="d" * 64, name="faithful-v1")
    out = identity_fields(tmp_path, rows, {"s1": "a" * 64, "s2": "z" * 64, "s3": None}, recipe)
    assert out == {"recipe_digest": "d" * 64, "recipe_seal": recipe_seal("faithful-v1", "d" * 64),
                   "sources": {"s1": {"sha256": "a" * 64, "flac_sha256": _sha(b"flac1")},
                               "s2": {"sha256": "b" * 64, "flac_sha256": "recorded-flac"},
                               "s3": {}},
                   "build_digest": _sha(b"c1\t11\nc2\t22\nc3\t33\n"), "n_clips": 3}
    # s1 adopted: its record is written now; s3 has nothing to record
    assert json.loads(source_record_path(tmp_path, "s1").read_text()) == {"sha256": "a" * 64,
                                                                          "flac_sha256": _sha(b"flac1")}
    assert not source_record_path(tmp_path, "s3").exists()


def test_a_sibling_of_outs_folders_sharing_their_name_as_a_prefix_is_read(tmp_path):
    """The near miss of "what a render writes": `OUT/clips2/`, `OUT/sources_old/` and `OUT/.parts.bak/` are
    the user's folders (their files are sources), `OUT/clips/` is the render's."""
    out = tmp_path / "out"
    files = {"own": out / "clips" / "a.wav", "c2": out / "clips2" / "a.wav", "so": out / "sources_old" / "a.wav",
             "pb": out / ".parts.bak" / "a.wav"}
    for p in files.values():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"RIFF")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = exclude_own_output([SourceItem(k, str(p)) for k, p in files.items()], out, "vctk:/data")
    assert [it.source_id for it in kept] == ["c2", "so", "pb"]
