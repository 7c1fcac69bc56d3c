"""Paths read from disk stay inside their folder: a marker, a manifest, a part file or an earlier page
naming ``../x``, ``/abs/x`` or a path through a symbolic link that leads out makes no command read,
write or delete anything outside the folders it was given (:mod:`generation.contained`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _report_helpers import clips, write_results
from vocalgrad_commands.cli import main
from generation.contained import OutsideFolderError, inside, outside_reason
from generation.identity import sha256_file
from generation.ownership import MARKER, OwnershipError, owned_update, read_marker

# the three ways out: climbing, absolute, and a folder that is a link to outside
ESCAPES = ["../victim.txt", "clips/../../victim.txt", "ABS", "link/victim.txt"]


def _entry(kind: str, victim: Path) -> str:
    return str(victim) if kind == "ABS" else kind


def _plant(folder: Path, victim: Path) -> None:
    """``folder/link`` -> the victim's folder (the symbolic-link way out)."""
    (folder / "link").symlink_to(victim.parent, target_is_directory=True)


@pytest.fixture
def victim(tmp_path) -> Path:
    v = tmp_path / "victim.txt"
    v.write_text("precious")
    return v


def test_the_shared_check_accepts_inside_and_refuses_every_way_out(tmp_path):
    root = tmp_path / "root"
    (root / "clips").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (root / "out").symlink_to(tmp_path / "elsewhere")
    (root / "loop").symlink_to(root / "loop")
    (root / "inner").symlink_to(root / "clips")  # a link that stays inside is fine
    assert outside_reason(root, "clips/a.flac") is None and outside_reason(root, "inner/a.flac") is None
    assert inside(root, "clips/a.flac") == root / "clips" / "a.flac"
    for bad in ["../x", "clips/../../x", "/etc/passwd", str(tmp_path / "x"), "out/x", "", ".", "clips/..",
                "C:\\x", "..\\x", "a\0b", None, 3, "loop/x"]:
        assert outside_reason(root, bad), bad
    with pytest.raises(OutsideFolderError, match="must stay inside"):
        inside(root, "../x", source="m.json")


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize("force", [False, True])
def test_report_with_a_marker_naming_a_file_outside_refuses_and_deletes_nothing(escape, force, tmp_path, victim,
                                                                               capsys):
    results = write_results(tmp_path / "res", "m", lambda d: d["direction"], docs=clips(sources=1))
    out = tmp_path / "rep"
    assert main(["report", str(results), "--out", str(out), "--draws", "20", "--no-plots"]) == 0
    _plant(out, victim)
    marker = read_marker(out)
    marker["files"][_entry(escape, victim)] = sha256_file(victim)  # its true sha256 (was: deleted, exit 0)
    (out / MARKER).write_text(json.dumps(marker))
    capsys.readouterr()
    code = main(["report", str(results), "--out", str(out), "--draws", "20", "--no-plots",
                 *(["--force"] if force else [])])
    err = capsys.readouterr().err
    assert code == 2 and "is not a marker the toolkit wrote" in err and len(err.strip().splitlines()) == 1
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize("key", ["files", "pending"])
def test_the_writers_staging_never_unlinks_outside_even_with_force(escape, key, tmp_path, victim):
    """The commit every folder writer shares (hub, report): a listed path leading out refuses the marker."""
    out = tmp_path / "hub"
    with owned_update(out, "hub", what="vocalgrad hub") as stage:
        (stage / "README.md").write_text("card")
    _plant(out, victim)
    marker = read_marker(out)
    marker.setdefault(key, {})[_entry(escape, victim)] = sha256_file(victim)
    (out / MARKER).write_text(json.dumps(marker))
    for force in (False, True):
        with pytest.raises(OwnershipError, match="is not a marker the toolkit wrote"):
            with owned_update(out, "hub", what="vocalgrad hub", force=force) as stage:
                (stage / "README.md").write_text("card 2")
    assert victim.read_text() == "precious" and (out / "README.md").read_text() == "card"


def test_a_staged_file_is_never_moved_through_a_link_that_leads_out(tmp_path, victim):
    out = tmp_path / "hub"
    out.mkdir()
    (out / "volume").symlink_to(victim.parent, target_is_directory=True)  # a link planted where a config goes
    with pytest.raises(OutsideFolderError, match="symbolic link"):
        with owned_update(out, "hub", what="vocalgrad hub", force=True) as stage:
            (stage / "volume").mkdir()
            (stage / "volume" / "victim.txt").write_text("overwritten")
    assert victim.read_text() == "precious"


def test_an_earlier_report_pages_links_never_name_a_file_outside(tmp_path, victim):
    from analysis.report.command import _legacy_report_files

    out = tmp_path / "rep"
    (out / "clips").mkdir(parents=True)
    _plant(out / "clips", victim)
    (out / "index.html").write_text('<a href="clips/link">x</a><a href="clips/../victim.txt">y</a>')
    from generation.ownership import owned_files

    owned, _ = owned_files(out, None, _legacy_report_files(out))
    assert set(owned) == {"index.html"}


@pytest.mark.parametrize("escape", ["../victim/x.flac", "ABS", "link"])
def test_hub_and_verify_never_read_a_manifest_path_leading_out(escape, tmp_path, capsys):
    """A render folder's manifest ``path`` (what `hub`, `verify`, `report --html` and `listen` read)."""
    import vocalgrad
    from _listen_helpers import make_render

    cid = vocalgrad.clip_id("tone00", "volume", "linear", "low", "increase")
    (tmp_path / "victim").mkdir()
    rel = {"../victim/x.flac": "../victim/x.flac", "ABS": str(tmp_path / "victim" / "x.flac")}.get(escape)
    root = make_render(tmp_path / "r", categories=("volume",), path_override={cid: rel} if rel else None)
    if escape == "link":  # the clips' folder a link to a folder outside
        (root / "clips" / "volume").rename(tmp_path / "victim" / "volume")
        (root / "clips" / "volume").symlink_to(tmp_path / "victim" / "volume", target_is_directory=True)
    for args in (["hub", str(root), "--out", str(tmp_path / "h"), "--allow-partial", "--no-sources"],
                 ["verify", str(root)]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "must stay inside" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "h").exists()
    from generation.render_dir import RenderDir

    with pytest.raises(OutsideFolderError, match="source_id"):  # a manifest source_id names sources/<id>.flac
        RenderDir(root).source_path("../../victim/x")


@pytest.mark.parametrize("escape", ["../victim.txt", "ABS", "link/victim.txt"])
def test_a_render_rerun_never_trusts_a_part_file_path_leading_out(escape, tmp_path, victim):
    """A rerun checks each finished unit's clips (its part file) before skipping it: a path leading
    out is not read, and the unit is rendered again."""
    import hashlib

    from generation.render_files import unit_problem

    out = tmp_path / "r"
    (out / ".parts").mkdir(parents=True)
    _plant(out, victim)
    part = out / ".parts" / "s__volume.json"
    part.write_text(json.dumps([{"path": _entry(escape, victim),
                                 "sha256": hashlib.sha256(victim.read_bytes()).hexdigest()}]))
    assert "the unit is rendered again" in unit_problem(out, part)  # was: trusted, read outside


def test_finetune_labels_and_published_metadata_never_name_a_file_outside(tmp_path):
    from analysis.finetune.transfer import load_transfer_set
    from generation.published import PublishedLayoutError, _audio_path

    labels = tmp_path / "labels.csv"
    labels.write_text("file,label\n../secret.wav,yes\n")
    with pytest.raises(ValueError, match=r"labels.csv, row 2: file '../secret.wav' climbs out"):
        load_transfer_set(f"folder:{tmp_path / 'data'}", labels=str(labels))
    with pytest.raises(PublishedLayoutError, match="is an absolute path"):
        _audio_path(tmp_path, {"file_name": "/etc/passwd"}, "metadata.csv, line 2")


def test_finetune_overwrite_removes_a_link_never_what_it_points_to(tmp_path):
    from analysis.finetune.train import _finished_run

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "adapter").mkdir(parents=True)
    (elsewhere / "adapter" / "weights.bin").write_bytes(b"w")
    (elsewhere / "finetune.json").write_text("{}")
    out = tmp_path / "ft"
    out.mkdir()
    (out / "adapter").symlink_to(elsewhere / "adapter", target_is_directory=True)
    (out / "finetune.json").symlink_to(elsewhere / "finetune.json")
    assert _finished_run(out, {"k": 1}, overwrite=True) is None
    assert not (out / "adapter").is_symlink() and not (out / "finetune.json").exists()
    assert (elsewhere / "adapter" / "weights.bin").read_bytes() == b"w" and (elsewhere / "finetune.json").is_file()
