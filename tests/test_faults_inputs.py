"""Input checks (issue 28): numeric options in range, damaged files, source anomalies, unclear messages.

Each test is one case that once ended in a traceback, a silent wrong result or an unclear message,
and checks what happens now: one line via the error path, a skip with its reason in skipped.csv,
a warning, or a correct repair.
"""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest
import soundfile as sf

import vocalgrad as vg
from tests._sources_helpers import speech_like as _speech_like
from vocalgrad_commands.cli import main
from generation.cli_errors import explain, run_command
from _timing import hang_guard

SR = 48000


def _parser_error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


# ------------------------------------------------------------------------------------------ numeric options
@pytest.mark.parametrize("argv, said", [
    (["render", "--source", "tones", "--sample-rate", "10000000"], "argument --sample-rate: must be 8000-655350 Hz"),
    (["render", "--source", "tones", "--sample-rate", "100"], "argument --sample-rate: must be 8000-655350 Hz"),
    (["hub", "R", "--out", "H", "--row-group-rows", "0"], "argument --row-group-rows: must be >= 1, got 0"),
    (["hub", "R", "--out", "H", "--max-shard-mb", "0"], "argument --max-shard-mb: must be > 0, got 0"),
    (["hub", "R", "--out", "H", "--max-shard-mb", "-5"], "argument --max-shard-mb: must be > 0, got -5"),
    (["verify", "B", "--min-sdr", "nan"], "argument --min-sdr: must be a finite number, got 'nan'"),
    (["show", "ID", "--data", "D", "--dpi", "100000"], "argument --dpi: must be 10-600 dots per inch"),
    (["listen", "D", "--annotator", "a", "--port", "99999"], "argument --port: must be 0-65535"),
    (["listen", "D", "--annotator", "a", "--port", "-1"], "argument --port: must be 0-65535"),
])
def test_numeric_options_out_of_range_are_one_line(argv, said, tmp_path, capsys):
    if argv[0] == "render":
        argv = [*argv, "--out", str(tmp_path / "r")]
    assert said in _parser_error(argv, capsys)
    assert not (tmp_path / "r").exists()


def test_render_api_refuses_a_sample_rate_flac_cannot_store(tmp_path):
    from generation.render import render

    with pytest.raises(ValueError, match="--sample-rate 10000000: must be 8000-655350 Hz"):
        render("tones", tmp_path / "r", split="beep", sample_rate=10_000_000)
    assert not (tmp_path / "r").exists()


# ------------------------------------------------------------------------------------------ damaged files
@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    from tests._harness_helpers import make_hub_folder

    return make_hub_folder(tmp_path_factory.mktemp("hub") / "hub", categories=("volume",))


def test_a_hub_folder_of_sweeps_only_is_a_data_folder(hub, tmp_path):
    """``report --data`` (and listen, show) on a Hub folder holding only sweep configs reads its clips (was:
    "neither a render folder nor a Hub folder")."""
    import shutil

    from analysis.listen.catalog import open_catalog

    dst = tmp_path / "hub"
    shutil.copytree(hub, dst)
    (dst / "volume").rename(dst / "sweep_volume")
    catalog = open_catalog(dst)
    assert catalog.kind == "hub" and list(catalog.clips) == list(open_catalog(hub).clips)
    clip = next(iter(catalog.clips))
    assert catalog.audio_bytes(clip) == open_catalog(hub).audio_bytes(clip)


def _truncated_copy(hub, tmp_path) -> tuple[Path, Path]:
    import shutil

    dst = tmp_path / "hub"
    shutil.copytree(hub, dst)
    shard = next((dst / "volume").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    return dst, shard


def test_verify_of_a_truncated_shard_is_a_problem_found(hub, tmp_path, capsys):
    dst, shard = _truncated_copy(hub, tmp_path)
    assert main(["verify", str(dst)]) == 1                  # exit 1 = problems found, not a traceback
    out = capsys.readouterr().out
    assert "FAIL unreadable file (truncated or damaged; its clips are not counted): 1" in out
    assert f"{shard}: ArrowInvalid" in out


def test_eval_on_a_truncated_shard_names_it(hub, tmp_path):
    from harness_tasks.dataset import DatasetError, load_split

    dst, shard = _truncated_copy(hub, tmp_path)
    with pytest.raises(DatasetError) as err:
        load_split("volume", source=str(dst))
    msg = explain(err.value)
    assert msg.startswith(f"{shard}: not a readable parquet file (") and "vocalgrad verify" in msg


def test_hub_card_that_is_a_binary_file(tmp_path, capsys):
    from tests._hub_helpers import make_render_dir

    render = make_render_dir(tmp_path / "r", n_sources=1)
    card = tmp_path / "card.md"
    card.write_bytes(bytes(range(256)) * 8)
    assert main(["hub", str(render), "--out", str(tmp_path / "h"), "--card", str(card)]) == 2
    err = capsys.readouterr().err
    assert f"{card}: card template is not UTF-8 text" in err and "Traceback" not in err
    assert not (tmp_path / "h").exists()


# ------------------------------------------------------------------------------------------ list options
#: Every comma-separated list option of every command, with the arguments it needs beside it.
LIST_OPTIONS = [
    (["render", "--source", "tones", "--out", "{out}"], "--categories"),
    (["render", "--source", "tones", "--sweep", "--out", "{out}"], "--trajectories"),
    (["listen", "D", "--annotator", "a"], "--categories"),
    (["probe", "--data", "D", "--out", "{out}"], "--categories"),
    (["probe", "--data", "D", "--out", "{out}"], "--stages"),
    (["probe", "--data", "D", "--out", "{out}"], "--layers"),
    (["probe", "--data", "D", "--out", "{out}"], "--positions"),
    (["probe", "--data", "D", "--out", "{out}"], "--orders"),
    (["align", "--model", "M", "--data", "D", "--out", "{out}"], "--categories"),
    (["align", "--model", "M", "--data", "D", "--out", "{out}"], "--layers"),
    (["transfer", "--model", "M", "--data", "D", "--out", "{out}"], "--classes"),
]


@pytest.mark.parametrize("empty", ["", ",", " , "])
@pytest.mark.parametrize("argv, option", LIST_OPTIONS, ids=[f"{a[0]} {o}" for a, o in LIST_OPTIONS])
def test_an_empty_list_option_is_refused_in_one_line(argv, option, empty, tmp_path, capsys):
    """``render --sweep --trajectories ''`` rendered all four trajectories while ``--categories ''`` was refused:
    every list option of every command now refuses an empty list by the parser, naming the option."""
    out = tmp_path / "out"
    argv = [a.replace("{out}", str(out)) for a in argv] + [f"{option}={empty}"]
    line = _parser_error(argv, capsys)
    assert f"argument {option}: names " in line and ("nothing" in line or "no category" in line), line
    assert not out.exists()


def test_every_list_option_is_parsed_as_a_list():
    """No list option escapes the rule: every option whose help or metavar says it takes a list parses
    through the one list type (generation.option_types), and the table above names each."""
    from vocalgrad_commands.cli import build_parser
    from generation.option_types import comma_list, comma_text
    from generation.render_cli import category_list

    sub = next(a for a in build_parser()._actions if isinstance(getattr(a, "choices", None), dict))
    found = set()
    for name, parser in sub.choices.items():
        for a in parser._actions:
            text = f"{a.help or ''} {a.metavar or ''}"
            if a.option_strings and ("comma" in text.lower() or "LIST" in text):
                found.add((name, a.option_strings[-1]))
                assert a.type in (comma_list, comma_text, category_list), (name, a.option_strings)
    assert found == {(argv[0], option) for argv, option in LIST_OPTIONS}


def test_the_api_refuses_an_empty_trajectory_list(tmp_path):
    from generation.render import render
    from generation.sweep_plan import sweep_trajectories

    assert sweep_trajectories(None) == vg.TRAJECTORIES and sweep_trajectories(["jump", "linear"]) == ("linear", "jump")
    with pytest.raises(ValueError, match="--trajectories: names none"):
        sweep_trajectories([])
    with pytest.raises(ValueError, match="--trajectories: names none"):
        render("tones", tmp_path / "o", categories=["volume"], sweep=True, trajectories=[], progress=False)
    with pytest.raises(ValueError, match="--trajectories applies to --sweep renders only"):
        render("tones", tmp_path / "o", categories=["volume"], trajectories=[], progress=False)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("tasks", [["--tasks", ""], ["--tasks=,"], ["-t", " "]])
def test_eval_with_an_empty_task_list_is_one_line(tasks, capsys):
    from harness_tasks.cli import main as eval_main

    assert eval_main(["--model", "vocalgrad-oracle", *tasks]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["vocalgrad-eval: error: argument --tasks: names nothing; give one or more comma-separated tasks "
                   "(e.g. --tasks vocalgrad)"]


# ------------------------------------------------------------------------------------------ vocalgrad-eval
def test_eval_unknown_task_is_one_line(capsys):
    from harness_tasks.cli import main as eval_main

    assert eval_main(["--model", "vocalgrad-oracle", "--tasks", "vocalgrad_bogus"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("vocalgrad-eval: error: unknown task vocalgrad_bogus; did you mean")


@pytest.mark.parametrize("model, args, said", [
    ("chance", {"seed": "abc"}, "--model_args seed must be a whole number, got 'abc'"),
    ("chance", {"p_increase": "x"}, "--model_args p_increase must be a number, got 'x'"),
    ("chance", {"p_increase": "2"}, "p_increase must be in [0, 1]"),
    ("constant", {"direction": "up"}, "direction must be one of"),
    ("openai", {"model": "m", "concurrency": "many"}, "--model_args concurrency must be a whole number"),
    ("openai", {"model": "m", "timeout": "inf"}, "--model_args timeout must be a finite number"),
    ("openai", {}, "vocalgrad-openai needs model=<name>"),
    ("worker", {"cmd": "w", "timeout": "0"}, "--model_args timeout must be a finite number > 0, got '0'"),
    ("worker", {"cmd": "w", "timeout": -1}, "--model_args timeout must be a finite number > 0, got -1"),
    ("worker", {"cmd": "w", "startup_timeout": "nan"}, "--model_args startup_timeout must be a finite number > 0"),
])
def test_model_args_of_the_wrong_type_are_one_line(model, args, said, capsys):
    from harness_tasks.models.baselines import ChanceLM, ConstantLM
    from harness_tasks.models.openai import OpenAIAudioLM
    from harness_tasks.models.worker import WorkerLM

    cls = {"chance": ChanceLM, "constant": ConstantLM, "openai": OpenAIAudioLM, "worker": WorkerLM}[model]
    assert run_command("vocalgrad-eval", lambda: cls(**args)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0]


def test_answer_log_that_is_a_file(tmp_path):
    from harness_tasks.models.answer_log import AnswerLog

    afile = tmp_path / "afile"
    afile.write_text("hi\n")
    with pytest.raises(vg.VocalGradError) as err:
        AnswerLog(afile)
    assert explain(err.value).startswith(f"answer log {afile}: a file, not a folder")
    assert "VOCALGRAD_ANSWER_LOG" in str(err.value) and afile.read_text() == "hi\n"


# ------------------------------------------------------------------------------------------ listen
@pytest.fixture(scope="module")
def listen_render(tmp_path_factory):
    from tests._listen_helpers import make_render

    return make_render(tmp_path_factory.mktemp("listen") / "r", categories=("volume",))


def test_listen_on_a_busy_port_says_so(listen_render, tmp_path, capsys):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        port = busy.getsockname()[1]
        assert main(["listen", str(listen_render), "--annotator", "a", "--answers", str(tmp_path / "a.jsonl"),
                     "--port", str(port)]) == 2
    finally:
        busy.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"vocalgrad listen: error: port {port} on 127.0.0.1 is in use (another `vocalgrad listen`, or "
                   "another server); stop it, or choose another --port (--port 0 picks a free one)"]


def test_listen_deeply_nested_json_is_a_400(listen_render, tmp_path):
    from analysis.listen import ListenApp, open_catalog
    from tests._listen_helpers import serving

    app = ListenApp(open_catalog(listen_render), "a", tmp_path / "a.jsonl")
    body = "[" * 2000 + "]" * 2000
    with serving(app) as url:
        conn = http.client.HTTPConnection(url.split("//")[1], timeout=hang_guard(10))
        conn.request("POST", "/api/answer", body, {"X-Listen-Token": app.request_token,
                                                   "Content-Type": "application/json"})
        resp = conn.getresponse()
        status, data = resp.status, json.loads(resp.read())
        conn.close()
    assert (status, data) == (400, {"error": "body is nested too deeply"})


def test_listen_says_nothing_when_a_browser_resets_a_connection(listen_render, tmp_path, capfd):
    """A browser resets a connection mid-request (they do): no traceback on the console, the server goes on
    (was: a 20-line ConnectionResetError traceback per reset)."""
    import struct
    import time
    import urllib.request

    from analysis.listen import ListenApp, open_catalog
    from tests._listen_helpers import serving

    app = ListenApp(open_catalog(listen_render), "a", tmp_path / "a.jsonl")
    with serving(app) as url:
        host, port = url.split("//")[1].split(":")
        for _ in range(3):
            sock = socket.create_connection((host, int(port)), timeout=hang_guard(5))
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # an unfinished request, then a reset (RST)
            time.sleep(0.05)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
        time.sleep(0.3)
        with urllib.request.urlopen(url + "/", timeout=hang_guard(10)) as resp:  # still serving
            assert resp.status == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err and len(err.strip().splitlines()) <= 3


def test_show_out_a_folder_writes_the_picture_into_it(listen_render, tmp_path, capsys):
    """``show --out DIR``: DIR/CLIP_ID.png (was: an error naming an internal temp file)."""
    from analysis.listen import open_catalog

    clip = next(iter(open_catalog(listen_render).clips))
    assert main(["show", clip, "--data", str(listen_render), "--out", str(tmp_path), "--dpi", "20"]) == 0
    cap = capsys.readouterr()
    assert cap.out.strip() == str(tmp_path / f"{clip}.png") and ".tmp" not in cap.err
    assert (tmp_path / f"{clip}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{clip}.png"]


def test_report_human_on_a_binary_file_is_one_line(tmp_path, capsys):
    """``report --human FILE`` on a binary file: refused in one line, as listen refuses it (was: one warning per
    line, exit 0, no human row)."""
    bad = tmp_path / "photo.jsonl"
    bad.write_bytes(bytes(range(256)) * 12 + b"\n" + bytes(range(255, -1, -1)) * 4 + b"\n")
    assert main(["report", "--human", str(bad), "--out", str(tmp_path / "rep"), "--no-plots"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"vocalgrad report: error: {bad}: not an answers file of `vocalgrad listen` (line 1 is not a JSON "
                   "answer line with annotator, clip_id, answer, direction); give the .jsonl file `vocalgrad listen "
                   "--answers` wrote"]
    assert not (tmp_path / "rep").exists()


def test_report_pictures_are_drawn_in_parallel_once_then_read_from_the_cache(listen_render, tmp_path, monkeypatch):
    """``report --html``'s clip pictures: drawn by worker processes, the same bytes as drawn one by one, and a
    second report redraws nothing (cache keyed by the sha256 of audio, source, metadata and settings)."""
    import analysis.report.html_pictures as hp
    from analysis.listen import open_catalog

    cat = open_catalog(listen_render)
    ids = list(cat.clips)[:2]
    serial = hp.pictures(cat, ids[:1], dpi=20, jobs=1, cache=tmp_path / "serial")  # (the workers inherit its imports)
    first = hp.pictures(cat, ids, dpi=20, jobs=2, cache=tmp_path / "c")
    assert all(png[:8] == b"\x89PNG\r\n\x1a\n" and not err for png, err in first.values())
    assert len(list((tmp_path / "c").rglob("*.png"))) == 2 and serial[ids[0]] == first[ids[0]]

    def never(*args):
        raise AssertionError("redrawn")

    monkeypatch.setattr(hp, "_draw", never)
    assert hp.pictures(cat, ids, dpi=20, jobs=2, cache=tmp_path / "c") == first
    keys = {hp.picture_key(cat, i, dpi=20) for i in ids}
    assert len(keys) == 2 and hp.picture_key(cat, ids[0], dpi=21) not in keys


# ------------------------------------------------------------------------------------------ plugins
def test_a_plugin_calling_sys_exit_is_left_out_with_a_warning(tmp_path, monkeypatch, capsys):
    from generation import attributes

    site = tmp_path / "site"
    (site / "exitplug-0.1.dist-info").mkdir(parents=True)
    (site / "exitplug-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: exitplug\nVersion: 0.1\n")
    (site / "exitplug-0.1.dist-info" / "entry_points.txt").write_text("[vocalgrad.attributes]\nquitter = exitplug:ATTR\n")
    (site / "exitplug.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(attributes, "_REGISTRY", {})
    monkeypatch.setattr(attributes, "_PROBLEMS", [])
    with pytest.warns(attributes.PluginWarning, match=r"quitter = exitplug:ATTR \(exitplug\): called sys.exit\(3\)"):
        reg = attributes.installed()
    assert list(reg)[:9] == list(vg.CATEGORY_NAMES) and "quitter" not in reg
    assert main(["attributes"]) == 0                         # every command still runs (was: exit 3, no output)
    assert "called sys.exit(3) while loading" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ names and paths
def test_a_200_character_source_name_is_refused_up_front(tmp_path):
    from generation.option_types import NameTooLongError
    from generation.render import render

    src = tmp_path / "src"
    src.mkdir()
    sf.write(src / ("a" * 200 + ".wav"), _speech_like(0.5), SR)
    with pytest.raises(NameTooLongError) as err:
        render(f"folder:{src}", tmp_path / "out", categories=["volume"], jobs=1, progress=False)
    msg = explain(err.value)
    assert msg.startswith(f"source {src / ('a' * 200 + '.wav')} (id aaaa") and "rename the file" in msg
    assert ".tmp" not in msg and not (tmp_path / "out").exists()          # nothing half-built


def test_a_245_character_out_is_refused_naming_it(tmp_path, capsys):
    from tests._hub_helpers import make_render_dir

    render = make_render_dir(tmp_path / "r", n_sources=1, categories=("volume",))
    out = tmp_path / ("c" * 245)
    assert main(["hub", str(render), "--out", str(out), "--allow-partial"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"vocalgrad hub: error: --out {out}: the name cccc")
    assert "is 245 characters long" in err[0] and ".partial" not in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


def test_out_that_is_an_existing_file(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("keep me\n")
    assert main(["render", "--source", "tones", "--split", "beep", "--sources", "1", "--categories", "volume",
                 "--out", str(afile), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (f"vocalgrad render: error: --out {afile}: exists and is not a folder; "
                                               "choose another --out")
    assert afile.read_text() == "keep me\n"


# ------------------------------------------------------------------------------------------ verify
def test_verify_of_a_render_made_with_categories_passes_as_partial(tmp_path, capsys):
    from tests._hub_helpers import make_render_dir

    d = make_render_dir(tmp_path / "r", n_sources=1, categories=("volume",))
    meta = json.loads((d / "render.json").read_text())
    (d / "render.json").write_text(json.dumps({**meta, "categories": ["volume"]}))
    assert main(["verify", str(d)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"vocalgrad verify {d} (render): PASS (partial) -- 24 clips")
    assert out[1] == ("  partial: 1 of 9 categories, as asked (rendered with --categories volume); not rendered: "
                      "speed, pitch, distortion, roughness, noise, echo, clarity, vibration")
    assert json.loads((d / "verify.json").read_text())["partial"] == [out[1].split("partial: ", 1)[1]]
    # without render.json's categories (a render that lost clips of a category) it still fails
    (d / "render.json").write_text(json.dumps({k: v for k, v in meta.items() if k != "categories"}))
    assert main(["verify", str(d)]) == 1
    assert "FAIL category not in the build: 8" in capsys.readouterr().out
