"""The audit of every writer (docs/reliability.md, "Every writer and the paths it reads from disk"): what
tests/test_faults_paths.py does not already try, tried here on small data made by each test.

Each case plants a file outside the folders the command was given and checks that it is neither read,
written nor removed, and that the command refuses in one line (or ignores the entry, naming why).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from _listen_helpers import make_render
from _writers_helpers import OUT_WRITERS
from _report_helpers import clips, write_results
from vocalgrad_commands.cli import main

# ----------------------------------------------------------------------------- --out a looping link
#: Every writer whose --out (or output file) the user names, as argv for an output path OUT. render, hub and
#: show are tried by tests/test_faults_sources.py.
LOOP_WRITERS = OUT_WRITERS


def _loop(tmp_path: Path, kind: str) -> tuple[Path, Path, str]:
    """(the path given, the looping link, where it points) for a self-link, a two-link cycle, a path under a loop."""
    if kind == "cycle":
        os.symlink("b", tmp_path / "a")
        os.symlink("a", tmp_path / "b")
        return tmp_path / "a", tmp_path / "a", "b"
    os.symlink("loop", tmp_path / "loop")
    return (tmp_path / "loop" / "sub" if kind == "under" else tmp_path / "loop"), tmp_path / "loop", "loop"


@pytest.mark.parametrize("kind", ["self", "cycle", "under"])
@pytest.mark.parametrize("writer", sorted(LOOP_WRITERS))
def test_an_out_that_is_a_symlink_loop_is_refused_by_every_writer(writer, kind, tmp_path, monkeypatch, capsys):
    """Was: "OUT: already exists", "Too many levels of symbolic links" or a traceback after the work."""
    work = tmp_path / "work"
    work.mkdir()
    res = write_results(work / "res", "m", lambda d: d["direction"], docs=clips(sources=1, categories=("volume",)))
    data = make_render(work / "r", categories=("volume",)) if writer == "show" else work
    clip = "tone00__volume__linear__low__increase"
    out, link, target = _loop(tmp_path, kind)
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = [{"OUT": str(out), "RES": str(res), "DATA": str(data), "CLIP": clip}.get(a, a) for a in LOOP_WRITERS[writer]]
    if writer.endswith("_tasks"):
        from harness_tasks.ext_tasks import task_writer_main, write_ext_tasks
        from harness_tasks.sweep_tasks import write_sweep_tasks

        code = task_writer_main(f"python -m harness_tasks.{writer}",
                                write_ext_tasks if writer == "ext_tasks" else write_sweep_tasks, [str(out)])
    elif writer.startswith("vocalgrad-eval"):
        import lm_eval.__main__ as lm_main

        from harness_tasks.cli import main as eval_main

        monkeypatch.setattr(lm_main, "cli_evaluate", lambda: pytest.fail("lm-eval ran with a looping --output_path"))
        code = eval_main(argv)
    else:
        code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert f"{link} is a symbolic link loop ({link} -> {target} leads back to itself)" in err[0], err
    assert "remove the link or choose another path" in err[0] and "Traceback" not in err[0]
    assert os.readlink(link) == target and sorted(p.name for p in tmp_path.iterdir()) == before


# ------------------------------------------------------------- a render folder's manifest, read by the analysis
def _render_with_escape(tmp_path: Path, escape: str) -> tuple[Path, Path]:
    """A render folder whose manifest names one clip outside it: ``..``, an absolute path, or a clips folder
    that is a link to a folder outside. Returns (render folder, the outside folder)."""
    import vocalgrad

    cid = vocalgrad.clip_id("tone00", "volume", "linear", "low", "increase")
    victim = tmp_path / "victim"
    victim.mkdir()
    rel = {"..": "../victim/x.flac", "absolute": str(victim / "x.flac")}.get(escape)
    root = make_render(tmp_path / "r", categories=("volume",), path_override={cid: rel} if rel else None)
    if escape == "symlink":
        (root / "clips" / "volume").rename(victim / "volume")
        (root / "clips" / "volume").symlink_to(victim / "volume", target_is_directory=True)
    return root, victim


@pytest.mark.parametrize("escape", ["..", "absolute", "symlink"])
def test_report_listen_and_show_never_read_a_manifest_path_leading_out(escape, tmp_path, capsys):
    """`report --data` (and its --html page), `listen` and `show` read clips through one catalog."""
    from analysis.listen.catalog import CatalogError, open_catalog

    root, _ = _render_with_escape(tmp_path, escape)
    with pytest.raises(CatalogError, match="points outside the data folder"):
        open_catalog(root)  # before any clip is read
    res = write_results(tmp_path / "res", "m", lambda d: d["direction"], docs=clips(sources=1, categories=("volume",)))
    cid = "tone00__volume__linear__low__decrease"
    for argv in (["report", str(res), "--data", str(root), "--out", str(tmp_path / "rep"), "--draws", "20",
                  "--no-plots", "--html"],
                 ["listen", str(root), "--annotator", "a", "--answers", str(tmp_path / "a.jsonl"), "--port", "0"],
                 ["show", cid, "--data", str(root), "--out", str(tmp_path / "c.png")]):
        assert main(argv) == 2, argv[0]
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "manifest path" in err[0] and "points outside the data folder" in err[0], err
    assert not any((tmp_path / n).exists() for n in ("rep", "a.jsonl", "c.png"))


# ------------------------------------------------------------------------ render: never written through a link
@pytest.mark.parametrize("sweep", [False, True])
@pytest.mark.parametrize("where", ["clips", "clips/volume", "sources", ".parts"])
def test_a_render_never_writes_through_a_folder_linked_outside(where, sweep, tmp_path, capsys):
    """Was: a rerun re-rendered clips into the linked folder outside (and `verify` then refused the folder)."""
    root = make_render(tmp_path / "r", categories=("volume",))
    (root / where).mkdir(parents=True, exist_ok=True)
    outside = tmp_path / "elsewhere"
    (root / where).rename(outside)
    (root / where).symlink_to(outside, target_is_directory=True)
    (outside / "victim.flac").write_bytes(b"precious")
    before = sorted(p.name for p in outside.rglob("*"))
    argv = ["render", "--source", "tones", "--sources", "1", "--categories", "volume", "--out", str(root)]
    assert main(argv + (["--sweep"] if sweep else [])) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"'{where}' leads outside {root} through a symbolic link" in err[0], err
    assert "replace the link by a folder" in err[0]
    assert sorted(p.name for p in outside.rglob("*")) == before
    assert (outside / "victim.flac").read_bytes() == b"precious"


@pytest.mark.parametrize("escape", ["..", "absolute", "symlink"])
def test_a_render_folders_marker_naming_a_file_outside_is_refused(escape, tmp_path, capsys):
    """A render keeps no file list in its marker; one that names a path outside is not the toolkit's."""
    from generation.identity import sha256_file
    from generation.ownership import MARKER

    root = make_render(tmp_path / "r", categories=("volume",))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (root / "link").symlink_to(tmp_path, target_is_directory=True)
    rel = {"..": "../victim.txt", "absolute": str(victim), "symlink": "link/victim.txt"}[escape]
    marker = {"kind": "render", "toolkit_version": "0", "files": {rel: sha256_file(victim)}}
    (root / MARKER).write_text(json.dumps(marker))
    assert main(["render", "--source", "tones", "--sources", "1", "--categories", "volume", "--out", str(root)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a marker the toolkit wrote (its 'files' names a path outside the folder" in err[0]
    assert victim.read_text() == "precious"


# -------------------------------------------------------------- a Hub folder's shard naming an audio path
def _hub(tmp_path: Path) -> Path:
    from _harness_helpers import hub_rows, write_config

    write_config(tmp_path / "hub", "volume", hub_rows("volume"))
    return tmp_path / "hub"


def _forge(hub: Path, tmp_path: Path, escape: str) -> tuple[Path, str]:
    """Make the second clip's ``audio`` of ``hub`` ``{"bytes": null, "path": P}``, P leading to a real FLAC
    outside through ``..``, an absolute path or a link. Returns (the shard, P)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from _harness_helpers import flac_bytes, synth_clip

    victim = tmp_path / "victim.flac"
    victim.write_bytes(flac_bytes(synth_clip("volume", "increase"), 16000))
    (hub / "link").symlink_to(tmp_path, target_is_directory=True)
    shard = hub / "volume" / "test-00000-of-00001.parquet"
    table = pq.read_table(shard)
    audio = table.column("audio").to_pylist()
    path = {"..": "../victim.flac", "absolute": str(victim), "symlink": "link/victim.flac"}[escape]
    audio[1] = {"bytes": None, "path": path}
    i = table.schema.get_field_index("audio")
    pq.write_table(table.set_column(i, table.schema.field(i), pa.array(audio, type=table.schema.field(i).type)), shard)
    return shard, path


@pytest.mark.parametrize("source", ["folder", "repo id"])
@pytest.mark.parametrize("escape", ["..", "absolute", "symlink"])
def test_a_hub_shard_whose_audio_is_only_a_path_is_refused_never_followed(escape, source, tmp_path, monkeypatch):
    """Was: an audio value ``{"bytes": null, "path": "/abs/victim.flac"}`` in a Hub folder's (or repo's) shard
    made the harness (and probe, fine-tuning, few-shot: all read through ``load_split``) read that file."""
    import datasets

    from harness_tasks.dataset import DatasetError, load_split

    hub = _hub(tmp_path)
    assert len(load_split("volume", source=str(hub))) == 2  # the honest folder loads
    shard, path = _forge(hub, tmp_path, escape)
    src = str(hub)
    if source == "repo id":  # the Hub replaced by the forged folder (offline)
        from generation import published

        monkeypatch.setattr(published, "_hub_card", lambda repo: None)
        real = datasets.load_dataset
        monkeypatch.setattr(datasets, "load_dataset", lambda repo, config, split: real(
            "parquet", data_files={split: [str(shard)]}, split=split) if repo == "me/forged" else pytest.fail(repo))
        src = "me/forged"
    with pytest.raises(DatasetError, match=r"clip 'tone00__volume__linear__low__decrease' \(row 1\) has no audio "
                                           rf"bytes, only the path '{path}'.*never followed"):
        load_split("volume", source=src)


@pytest.mark.parametrize("escape", ["..", "absolute", "symlink"])
def test_listen_show_and_report_never_follow_a_hub_shards_audio_path(escape, tmp_path, capsys):
    """The clip pages (`listen`, `show`, `report --html`) read a Hub folder's audio bytes through one catalog."""
    from analysis.listen.catalog import CatalogError, open_catalog

    hub = _hub(tmp_path)
    _, path = _forge(hub, tmp_path, escape)
    cid = "tone00__volume__linear__low__decrease"
    catalog = open_catalog(hub)
    assert catalog.audio_bytes("tone00__volume__linear__low__increase")[:4] == b"fLaC"
    with pytest.raises(CatalogError, match=f"clip {cid} has no audio bytes, only the path '{path}'"):
        catalog.audio_bytes(cid)  # was: None, and a TypeError further on
    import vocalgrad

    docs = [{"id": vocalgrad.clip_id("tone00", "volume", "linear", "low", d), "category": "volume", "direction": d,
             "label": d, "tier": "low", "trajectory": "linear", "source_id": "tone00"} for d in vocalgrad.DIRECTIONS]
    res = write_results(tmp_path / "res", "m", lambda d: d["direction"], docs=docs)
    capsys.readouterr()
    for argv in (["show", cid, "--data", str(hub), "--out", str(tmp_path / "c.png")],
                 ["report", str(res), "--data", str(hub), "--out", str(tmp_path / "rep"), "--draws", "20",
                  "--no-plots", "--html"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is never followed" in err[0], err
    assert not (tmp_path / "c.png").exists() and not (tmp_path / "rep").exists()


# ---------------------------------------------------------------------------------- publish, verify, align
def test_publish_never_uploads_a_file_through_a_link_leading_out(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from generation.publish import PublishError, check_hub_folder

    hub = tmp_path / "hub"
    (hub / "volume").mkdir(parents=True)
    pq.write_table(pa.table({"id": ["c"]}), hub / "volume" / "test-00000-of-00001.parquet")
    (hub / "README.md").write_text("---\nconfigs:\n- config_name: volume\n---\n")
    assert check_hub_folder(hub) == ["README.md", "volume/test-00000-of-00001.parquet"]
    (tmp_path / "secret.txt").write_text("token")
    (hub / "notes.txt").symlink_to(tmp_path / "secret.txt")  # was: uploaded with the shards
    with pytest.raises(PublishError, match=r"'notes.txt' leads outside .* through a symbolic link; publish uploads "
                                           "only files inside the folder"):
        check_hub_folder(hub)


def test_verify_replaces_a_linked_record_never_writes_through_it(tmp_path):
    root = make_render(tmp_path / "r", categories=("volume",))
    victim = tmp_path / "victim.json"
    victim.write_text("precious")
    (root / "verify.json").symlink_to(victim)
    assert main(["verify", str(root)]) == 1  # one category of nine: problems found, the record written
    assert victim.read_text() == "precious"
    assert not (root / "verify.json").is_symlink() and json.loads((root / "verify.json").read_text())["ok"] is False


def test_align_replaces_linked_outputs_never_writes_through_them(tmp_path):
    from analysis.finetune.directions import write_alignment

    out = tmp_path / "align"
    out.mkdir()
    for name in ("alignment.json", "directions.npz"):
        (tmp_path / f"victim_{name}").write_text("precious")
        (out / name).symlink_to(tmp_path / f"victim_{name}")  # was: np.savez_compressed wrote through the link
    res = {"layers": [0], "categories": ["pitch", "volume"], "cosine": [[[1.0, 0.5], [0.5, 1.0]]]}
    write_alignment(out, res, np.zeros((2, 1, 4), dtype=np.float32), np.asarray(res["cosine"], dtype=np.float32))
    for name in ("alignment.json", "directions.npz"):
        assert (tmp_path / f"victim_{name}").read_text() == "precious" and not (out / name).is_symlink()
    assert np.load(out / "directions.npz")["cosine"].dtype == np.float32


# ----------------------------------------------------------------------------------------------- fine-tuning
@pytest.mark.parametrize("name", ["checkpoint", "checkpoint.old", "adapter", "finetune.json"])
def test_finetune_never_resumes_from_or_writes_through_a_link_leading_out(name, tmp_path):
    """A checkpoint is unpickled on resume: one linked from outside the run folder is never read."""
    from analysis.finetune.train import _finished_run
    from generation.contained import OutsideFolderError

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "state.json").write_text("{}")
    out = tmp_path / "ft"
    out.mkdir()
    (out / name).symlink_to(elsewhere if name != "finetune.json" else elsewhere / "state.json")
    with pytest.raises(OutsideFolderError, match=f"'{name}' leads outside .* through a symbolic link"):
        _finished_run(out, {"k": 1}, overwrite=False)
    assert _finished_run(out, {"k": 1}, overwrite=True) is None  # --overwrite removes the link itself
    assert not (out / name).exists() and (elsewhere / "state.json").read_text() == "{}"


# ------------------------------------------------------------------ results files, leaderboards, leftovers
def test_task_names_of_a_results_file_never_name_a_sample_log_outside(tmp_path):
    """A sample log's name comes from a task name in the results file; names that climb (``..``), are
    absolute or are not the toolkit's tasks are not ours and are skipped, so a planted log is never read."""
    from analysis.report.extras import parse_extra_task
    from analysis.report.loading import parse_format_task, parse_task, samples_file
    from analysis.report.psychometric import SWEEP_TASK

    docs = clips(sources=1, categories=("volume",))
    res = write_results(tmp_path / "res", "m", lambda d: d["direction"], docs=docs)
    assert main(["report", str(res), "--out", str(tmp_path / "a"), "--draws", "20", "--no-plots"]) == 0
    data = json.loads(res.read_text())
    forged = ["vocalgrad_volume/../../victim", f"vocalgrad_volume/{tmp_path}/victim", "../vocalgrad_volume",
              "vocalgrad_sweep_volume/../../victim", "vocalgrad_sources_volume/../x"]
    wrong = write_results(tmp_path / "wrong", "m", lambda d: "increase" if d["direction"] == "decrease" else "decrease",
                          docs=docs)
    wrong_log = samples_file(wrong, "vocalgrad_volume").read_text()  # a wrong answer on every clip
    (res.parent / "samples_vocalgrad_volume").mkdir()
    for task in forged:
        data["results"][task] = data["results"]["vocalgrad_volume"]
        assert parse_task(task) is parse_format_task(task) is parse_extra_task(task) is SWEEP_TASK.match(task) is None
        planted = samples_file(res, task)
        planted.parent.mkdir(parents=True, exist_ok=True)
        planted.write_text(wrong_log)
    res.write_text(json.dumps(data))
    assert main(["report", str(res), "--out", str(tmp_path / "b"), "--draws", "20", "--no-plots"]) == 0
    a, b = (json.loads((tmp_path / d / "report.json").read_text()) for d in "ab")
    for key in ("models", "formats", "extras", "psychometric"):  # the planted logs' wrong answers counted nowhere
        assert json.dumps(a[key], sort_keys=True) == json.dumps(b[key], sort_keys=True), key
    assert a["models"][0]["overall"]["acc"] == 1.0 and a["models"][0]["overall"]["n"] == 24


def test_a_leaderboards_earlier_run_files_are_not_read_through_a_link(tmp_path):
    from analysis.leaderboard.page import _legacy_files

    out = tmp_path / "lb"
    (out / "runs").mkdir(parents=True)
    run = json.dumps({"run_id": "x", "build": "b", "model": "m", "variant": "default"})
    (out / "runs" / "mine.json").write_text(run)
    (tmp_path / "theirs.json").write_text(run)
    (out / "runs" / "linked.json").symlink_to(tmp_path / "theirs.json")
    assert _legacy_files(out) == ["runs/mine.json"]


def test_leftovers_of_killed_runs_are_never_removed_through_a_link(tmp_path):
    from generation.audio import HOST_TAG
    from generation.ownership import remove_leftovers

    out = tmp_path / "hub"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    name = f".x.{HOST_TAG}.4194303.tmp"  # a dead process's temporary name
    (elsewhere / name).write_text("theirs")
    (out / name).write_text("ours")
    (out / "link").symlink_to(elsewhere, target_is_directory=True)
    assert remove_leftovers(out, warn=False) == [out / name]
    assert (elsewhere / name).read_text() == "theirs"
