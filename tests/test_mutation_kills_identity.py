"""Content digests, the shared inside-the-folder check and the named registries, pinned to values computed
here independently (hashlib, json): what mutation testing of generation/identity.py, generation/contained.py
and generation/registry.py found unchecked (docs/testing.md)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

import generation.identity as identity
from generation import registry
from generation.contained import OutsideFolderError, inside, outside_reason
from generation.identity import (DigestMismatch, build_digest, content_digest, edited_recipe_record, file_digests,
                                 recipe_seal, sha256_bytes, sha256_file, short)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- identity ---------------------------------------------------------------------------------------------------

def test_sha256_of_bytes_and_of_a_file_read_in_chunks_is_the_plain_sha256(tmp_path, monkeypatch):
    data = bytes(range(256)) * 41  # 10496 bytes
    f = tmp_path / "clip.flac"
    f.write_bytes(data)
    assert sha256_bytes(data) == _sha(data)
    assert sha256_file(f) == _sha(data)
    monkeypatch.setattr(identity, "_CHUNK", 1000)  # several chunks, the last one short: every byte counts once
    assert sha256_file(f) == _sha(data)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert sha256_file(empty) == _sha(b"")
    assert file_digests([f, empty]) == {str(f): _sha(data), str(empty): _sha(b"")}


def test_content_digest_is_the_sha256_of_the_canonical_json():
    obj = {"name": "faithful-v1", "b": [1, 2.5, None], "a": {"z": "é", "y": True}}
    canonical = '{"a":{"y":true,"z":"é"},"b":[1,2.5,null],"name":"faithful-v1"}'
    assert content_digest(obj) == _sha(canonical.encode("utf-8"))
    assert content_digest(json.loads(json.dumps(obj, indent=4))) == content_digest(obj)
    assert content_digest({"p": identity.Path("x/y")}) == _sha(b'{"p":"x/y"}')  # default=str


def test_build_digest_is_the_sha256_of_the_sorted_id_tab_sha_lines():
    pairs = [("b", "22"), ("a", "11"), ("c", "33"), ("a", "11")]  # a repeated pair counts once
    assert build_digest(pairs) == _sha(b"a\t11\nb\t22\nc\t33\n")
    assert build_digest([]) == _sha(b"")
    assert build_digest([("x", "1")]) != build_digest([("x", "2")])


@pytest.mark.parametrize("pairs, message", [
    ([("a", "11"), ("b", "")], "clip 'b' has no sha256"),
    ([("a", None)], "clip 'a' has no sha256"),
    ([("a", "1" * 64), ("a", "2" * 64)], "clip 'a' appears with two different sha256 values "
                                         r"\(111111111111 and 222222222222\)"),
])
def test_build_digest_refuses_a_missing_or_a_second_sha256(pairs, message):
    with pytest.raises(ValueError, match=message):
        build_digest(pairs)


def test_short_is_twelve_characters_or_unknown():
    assert short("0123456789abcdef") == "0123456789ab"
    assert short(None) == "unknown" and short("") == "unknown"
    err = DigestMismatch("build digests", ("render", "a" * 64), ("hub", None), hint="re-run hub")
    assert str(err) == "build digests differ: render is aaaaaaaaaaaa, hub is unknown; re-run hub"
    assert str(DigestMismatch("x", ("p", "1"), ("q", "2"))) == "x differ: p is 1, q is 2"
    assert isinstance(err, ValueError)


def test_the_recipe_seal_names_an_edited_record_and_only_that():
    seal = recipe_seal("faithful-v1", "d" * 64)
    assert seal == _sha(json.dumps(["recipe_seal", "faithful-v1", "d" * 64], separators=(",", ":")).encode())
    meta = {"recipe": "faithful-v1", "recipe_digest": "d" * 64, "recipe_seal": seal}
    assert edited_recipe_record(meta, "r/render.json") is None
    assert edited_recipe_record({"recipe": "x", "recipe_digest": "y"}, "r") is None  # an earlier version: no seal
    edited = dict(meta, recipe_digest="e" * 64)
    assert edited_recipe_record(edited, "r/render.json") == (
        "r/render.json: its recipe record was edited after the render (recipe 'faithful-v1', recipe_digest "
        "eeeeeeeeeeee do not match the recipe_seal written with them); restore render.json's recipe_digest "
        "(a backup, or rerun the render into a new --out)")
    assert edited_recipe_record(dict(meta, recipe="other"), "w") is not None


# --- contained --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rel, why", [
    ("", "'' is not a relative path"),
    (None, "None is not a relative path"),
    ("a\0b", r"'a\\x00b' is not a relative path"),
    ("/etc/passwd", "'/etc/passwd' is an absolute path"),
    ("C:x", "'C:x' is an absolute path"),                     # a drive, not absolute on its own
    ("\\x", r"'\\\\x' is an absolute path"),
    ("../x", r"'../x' climbs out with '..'"),
    ("a\\..\\x", r"'a\\\\..\\\\x' climbs out with '..'"),     # '..' only as a Windows part
    (".", "'.' leads outside"),                               # the folder itself
])
def test_each_way_out_is_named_for_what_it_is(tmp_path, rel, why):
    assert outside_reason(tmp_path, rel) is not None
    assert re.match(why, outside_reason(tmp_path, rel))


def test_links_false_checks_the_path_not_its_links(tmp_path):
    (tmp_path / "out").symlink_to(tmp_path.parent)
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert outside_reason(tmp_path, "out/x") == f"'out/x' leads outside {tmp_path} through a symbolic link"
    assert outside_reason(tmp_path, "loop/x") == "'loop/x' goes through a symbolic-link loop"
    assert outside_reason(tmp_path, "out/x", links=False) is None
    assert outside_reason(tmp_path, "../x", links=False) == "'../x' climbs out with '..'"
    assert outside_reason(tmp_path, "a/b.flac") is None


def test_inside_returns_the_joined_path_or_names_the_source(tmp_path):
    assert inside(tmp_path, "a/b.flac") == tmp_path / "a" / "b.flac"
    with pytest.raises(OutsideFolderError, match=r"^m\.json: path '\.\./x' climbs out"):
        inside(tmp_path, "../x", source="m.json")
    with pytest.raises(OutsideFolderError, match="^" + str(tmp_path).replace("\\", "\\\\") + ": path"):
        inside(tmp_path, "/x")


def test_links_and_source_are_keyword_only(tmp_path):
    # a bool or a message given by position is a caller's mistake (links=False turns the link check off)
    with pytest.raises(TypeError):
        outside_reason(tmp_path, "a", False)
    with pytest.raises(TypeError):
        inside(tmp_path, "a", "m.json")


# --- registry ---------------------------------------------------------------------------------------------------

def _f():
    pass


def _g():
    pass


def test_claim_refuses_a_taken_name_and_leaves_the_registry_unchanged():
    reg = {}
    assert registry.claim(reg, "gain", _f, what="transform") is None
    registry.claim(reg, "gain", _f, what="transform")  # the same object again
    with pytest.raises(registry.NameTaken, match=(
            f"^transform name 'gain' is taken by {__name__}._f; register {__name__}._g under another name")):
        registry.claim(reg, "gain", _g, what="transform")
    assert reg == {"gain": _f}
    registry.claim(reg, "other", _g, what="transform")
    assert reg == {"gain": _f, "other": _g}


def test_claims_kind_is_keyword_only():
    with pytest.raises(TypeError):
        registry.claim({}, "gain", _f, "transform")


def test_claim_accepts_the_same_definition_reloaded():
    reg = {}
    registry.claim(reg, "n", _f, what="t")
    twin = type(_f)(_f.__code__, _f.__globals__, "_f")  # another object, same module and qualified name
    twin.__qualname__ = _f.__qualname__
    registry.claim(reg, "n", twin, what="t")
    assert reg["n"] is twin


def test_origin_names_a_function_or_an_instances_class():
    assert registry.origin(_f) == f"{__name__}._f"
    assert registry.origin(OutsideFolderError("x")) == "generation.contained.OutsideFolderError"
    assert registry.origin(3) == "builtins.int"


def test_snapshot_restore_and_replaced_undo_a_plugins_changes():
    mine = registry.track("test kind", {"a": _f, "b": _g})
    try:
        assert registry.registries()["test kind"] is mine and "measure" in registry.registries()
        saved = registry.snapshot()
        assert saved["test kind"] == {"a": _f, "b": _g} and saved["test kind"] is not mine
        assert registry.replaced(saved) == []
        mine["a"] = _g          # a built-in entry changed
        del mine["b"]           # one removed
        mine["c"] = _f          # one added
        assert registry.replaced(saved) == ["test kind 'a'", "test kind 'b'"]
        registry.restore(saved)
        assert mine == {"a": _f, "b": _g} and registry.registries()["test kind"] is mine
        later = registry.track("later kind", {"x": _f})  # announced after the snapshot: left alone
        registry.restore(saved)
        assert later == {"x": _f}
        assert registry.replaced({"gone kind": {"z": _f}}) == ["gone kind 'z'"]
    finally:
        registry._TRACKED.pop("test kind", None)
        registry._TRACKED.pop("later kind", None)
