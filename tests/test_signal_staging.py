"""An interrupt at the unlucky moments of a staged update: right after the stage is made, and while it
is being removed. Either way the command exits 143, the folder is as it was, and no stage is left.

In this process, with a real SIGTERM sent at the chosen moment (the stage functions wrapped), through
``run_command`` as the CLI runs commands: the race the subprocess test of ``vocalgrad hub``
(``test_faults_ownership``) could only hit by chance on a loaded machine, here every time.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

import generation.audio as aio
import generation.ownership as own
from generation.cli_errors import EXIT_TERMINATED, run_command
from generation.hub import hub_update


def _hub_folder(root: Path) -> Path:
    """A Hub folder an earlier build wrote (marker listing its card) plus a foreign file."""
    hub = root / "hub"
    hub.mkdir()
    (hub / "README.md").write_text("old card\n")
    (hub / "NOTES.md").write_text("mine\n")
    own.write_marker(hub, "hub", files={"README.md": own.sha256_file(hub / "README.md")})
    return hub


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != own.LOCK}


def _sigterm_now() -> None:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.2)  # the handler runs here (a sleep is cut short by a signal), unless signals are held


def _build(hub: Path):
    def job():
        with hub_update(hub) as stage:
            (stage / "README.md").write_text("new card\n")
    return job


def test_sigterm_right_after_the_stage_is_made_leaves_no_stage(tmp_path, monkeypatch, capsys):
    hub = _hub_folder(tmp_path)
    before = _files(hub)
    real = own.stage_dir

    def made_then_signalled(out):
        stage = real(out)
        assert stage.is_dir()
        _sigterm_now()  # was: KeyboardInterrupt here, before the clean-up's try: the stage stayed
        return stage

    monkeypatch.setattr(own, "stage_dir", made_then_signalled)
    assert run_command("vocalgrad hub", _build(hub)) == EXIT_TERMINATED
    assert "vocalgrad hub: terminated (SIGTERM)" in capsys.readouterr().err
    assert not list(hub.glob(".stage.*")) and _files(hub) == before


def test_sigterm_while_the_stage_is_removed_leaves_no_stage(tmp_path, monkeypatch, capsys):
    hub = _hub_folder(tmp_path)
    real = shutil.rmtree
    seen = []

    def signalled_then_removed(path, *a, **k):
        if Path(path).name.startswith(".stage.") and not seen:
            seen.append(path)
            _sigterm_now()  # was: KeyboardInterrupt before the removal: the stage stayed
        return real(path, *a, **k)

    monkeypatch.setattr(own.shutil, "rmtree", signalled_then_removed)
    assert run_command("vocalgrad hub", _build(hub)) == EXIT_TERMINATED
    assert seen and "terminated (SIGTERM)" in capsys.readouterr().err
    assert not list(hub.glob(".stage.*"))
    # the commit had finished: the new card is in place, the foreign file kept, the marker lists the card
    assert _files(hub)["README.md"] == b"new card\n" and _files(hub)["NOTES.md"] == b"mine\n"
    assert own.read_marker(hub)["files"] == {"README.md": own.sha256_file(hub / "README.md")}


def test_sigterm_right_after_a_staged_folder_is_made_leaves_no_stage(tmp_path, monkeypatch):
    out = tmp_path / "page"
    real_mkdir = Path.mkdir

    def mkdir_then_signal(self, *a, **k):
        real_mkdir(self, *a, **k)
        if self.name.endswith(".partial"):
            _sigterm_now()

    monkeypatch.setattr(Path, "mkdir", mkdir_then_signal)

    def job():
        with aio.staged_folder(out) as stage:
            (stage / "x").write_text("x")
    assert run_command("vocalgrad x", job) == EXIT_TERMINATED
    monkeypatch.undo()
    assert not out.exists() and not list(tmp_path.glob(".*.partial"))


def test_the_stage_is_removed_when_the_block_fails(tmp_path):
    """An error (not a signal) inside the block: out as it was, no stage; the stage's name is this process's."""
    hub = _hub_folder(tmp_path)
    before = _files(hub)
    with pytest.raises(RuntimeError):
        with hub_update(hub) as stage:
            assert stage == own.stage_path(hub) and stage.is_dir()
            raise RuntimeError("a failing build")
    assert not own.stage_path(hub).exists() and _files(hub) == before
