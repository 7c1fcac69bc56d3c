"""Bad input to the lmms-eval tasks (harness_tasks/lmms, docs/lmms-eval.md)."""

from __future__ import annotations

import pytest

pytest.importorskip("lmms_eval")

from generation.hub_dir import HubDirError  # noqa: E402

import harness_tasks  # noqa: E402


def test_lmms_task_on_a_folder_that_is_no_hub_folder_names_the_variable(tmp_path, monkeypatch):
    from lmms_eval.tasks import TaskManager, get_task_dict

    (tmp_path / "render" / "clips").mkdir(parents=True)
    monkeypatch.setenv("VOCALGRAD_DATASET", str(tmp_path / "render"))
    tm = TaskManager(include_path=harness_tasks.LMMS_TASK_DIR, include_defaults=False)
    with pytest.raises(HubDirError) as err:
        get_task_dict(["vocalgrad_pitch"], tm)
    msg = str(err.value)
    assert msg.startswith(f"VOCALGRAD_DATASET={tmp_path / 'render'}") and "vocalgrad hub" in msg
    assert len(msg.splitlines()) <= 2
