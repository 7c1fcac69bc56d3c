"""`vocalgrad show --out` replaces only a picture it wrote, matched by content (was: any existing file was
replaced, as cp does, so `--out notes.png` overwrote the user's picture). The near misses: its own picture
(replaced; the same bytes: untouched), the user's file of the same name, its picture edited since, a mark
copied into another picture, a folder holding the user's CLIP.png, a path under a file, and --force."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from _listen_helpers import make_render
from analysis.show_out import MARK_KEY, PNG_SIGNATURE, made_by_show, mark_png
from vocalgrad_commands.cli import main

pytestmark = pytest.mark.timeout(300)

CLIP = "tone00__volume__linear__low__increase"


@pytest.fixture(scope="module")
def small_render(tmp_path_factory) -> Path:
    return make_render(tmp_path_factory.mktemp("show_out") / "r", categories=("volume",))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")


def _png(pixels: bytes) -> bytes:
    return PNG_SIGNATURE + _chunk(b"IHDR", bytes(13)) + _chunk(b"IDAT", pixels) + _chunk(b"IEND", b"")


def _refusal(path, given=None) -> str:
    where = f"--out {given or path}" + (f": {path}" if given else "")
    return (f"vocalgrad show: error: {where}: an existing file that `vocalgrad show` did not write (or edited "
            "since); nothing was written. Give another --out, or add --force to replace it")


def test_the_mark_matches_only_the_bytes_it_was_made_for(tmp_path):
    marked = mark_png(_png(b"picture"))
    assert mark_png(_png(b"picture")) == marked  # deterministic
    (tmp_path / "a.png").write_bytes(marked)
    assert made_by_show(tmp_path / "a.png")
    # near misses: no mark; one pixel byte changed; the mark copied into another picture; two marks; cut short
    mark = marked[len(PNG_SIGNATURE) + 25:marked.index(b"IDAT") - 4]
    assert mark[4:8] == b"tEXt" and mark[8:].startswith(MARK_KEY + b"\0")
    other = _png(b"pictura")
    cases = {"plain": _png(b"picture"), "edited": marked.replace(b"picture", b"pictura"),
             "copied mark": other[:len(PNG_SIGNATURE) + 25] + mark + other[len(PNG_SIGNATURE) + 25:],
             "two marks": marked[:len(PNG_SIGNATURE) + 25] + mark + marked[len(PNG_SIGNATURE) + 25:],
             "cut short": marked[:-3], "not a png": b"the user's file\n", "empty": b""}
    for name, data in cases.items():
        (tmp_path / f"{name}.png").write_bytes(data)
        assert not made_by_show(tmp_path / f"{name}.png"), name
    (tmp_path / "folder.png").mkdir()
    assert not made_by_show(tmp_path / "folder.png") and not made_by_show(tmp_path / "missing.png")


def test_show_replaces_its_own_picture_and_refuses_the_users_file(small_render, tmp_path, capsys):
    out = tmp_path / "c.png"
    assert main(["show", CLIP, "--data", str(small_render), "--out", str(out), "--dpi", "40"]) == 0
    first = out.read_bytes()
    assert made_by_show(out)
    stamp = out.stat().st_mtime_ns, out.stat().st_ino
    # the same picture again: a no-op (the file is not rewritten)
    assert main(["show", CLIP, "--data", str(small_render), "--out", str(out), "--dpi", "40"]) == 0
    assert (out.stat().st_mtime_ns, out.stat().st_ino) == stamp and out.read_bytes() == first
    # another picture over its own: replaced without --force
    assert main(["show", CLIP, "--data", str(small_render), "--out", str(out), "--dpi", "30"]) == 0
    assert out.read_bytes() != first and made_by_show(out)
    capsys.readouterr()
    # the user's file of the same name, and show's picture edited since: refused, untouched
    user = tmp_path / "user.png"
    user.write_bytes(_png(b"the user's picture"))
    edited = tmp_path / "edited.png"
    data = bytearray(out.read_bytes())
    data[-20] ^= 1
    edited.write_bytes(bytes(data))
    for path in (user, edited):
        before = path.read_bytes()
        assert main(["show", CLIP, "--data", str(small_render), "--out", str(path), "--dpi", "30"]) == 2
        assert capsys.readouterr().err.splitlines() == [_refusal(path)]
        assert path.read_bytes() == before
    # --force replaces the user's file
    assert main(["show", CLIP, "--data", str(small_render), "--out", str(user), "--dpi", "30", "--force"]) == 0
    assert made_by_show(user)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.png", "edited.png", "user.png"]  # no temp left


def test_show_into_a_folder_refuses_the_users_clip_png_and_replaces_its_own(small_render, tmp_path, capsys):
    pics = tmp_path / "pics"
    pics.mkdir()
    target = pics / f"{CLIP}.png"
    target.write_text("the user's notes\n")
    assert main(["show", CLIP, "--data", str(small_render), "--out", str(pics), "--dpi", "30"]) == 2
    assert capsys.readouterr().err.splitlines() == [_refusal(target, pics)]
    assert target.read_text() == "the user's notes\n"
    # the sibling folder sharing the prefix, holding show's own picture of the clip: replaced there
    own = tmp_path / "pics2"
    own.mkdir()
    assert main(["show", CLIP, "--data", str(small_render), "--out", str(own), "--dpi", "40"]) == 0
    assert main(["show", CLIP, "--data", str(small_render), "--out", str(own), "--dpi", "30"]) == 0
    assert made_by_show(own / f"{CLIP}.png") and target.read_text() == "the user's notes\n"
