"""generation.audio.staged_folder: a folder is replaced whole, or not at all."""

import pytest

from generation import audio as aio


def test_staged_folder_replaces_old_folder(tmp_path):
    out = tmp_path / "hub"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with aio.staged_folder(out) as stage:
        assert stage.parent == tmp_path and stage != out and not any(stage.iterdir())
        (stage / "README.md").write_text("new")
        assert (out / "old.txt").exists()  # untouched until the block ends
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hub"]  # no stage left


def test_staged_folder_error_keeps_old_folder(tmp_path):
    out = tmp_path / "hub"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(RuntimeError, match="boom"):
        with aio.staged_folder(out) as stage:
            (stage / "half.parquet").write_text("half")
            raise RuntimeError("boom")
    assert (out / "old.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hub"]
