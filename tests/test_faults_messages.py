"""Messages in the user's terms: a symbolic link loop in a render's clips folder is one line from `hub`
and `verify` alike (was: a RuntimeError traceback from `hub` while `verify` passed); a Hub folder built with
`hub --allow-partial` verifies as partial, as its render does (was: "category not in the build: 8")."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from vocalgrad_commands.cli import main
from generation.verify import verify

RENDER = ["--source", "tones", "--sources", "1", "--categories", "volume,noise", "--jobs", "1", "--quiet"]


@pytest.fixture(scope="module")
def render(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("msg") / "render"
    assert main(["render", *RENDER, "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("link", ["volume/loop.flac", "loop", "volume/a.flac>volume/b.flac"])
def test_a_symbolic_link_loop_in_the_clips_folder_is_one_line_from_hub_and_verify(link, render, tmp_path, capsys):
    r = tmp_path / "r"
    shutil.copytree(render, r)
    if ">" in link:  # a cycle of two links
        a, b = link.split(">")
        os.symlink(Path(b).name, r / "clips" / a)
        os.symlink(Path(a).name, r / "clips" / b)
        loops = [r / "clips" / a, r / "clips" / b]
    else:
        os.symlink(Path(link).name, r / "clips" / link)  # a self-link
        loops = [r / "clips" / link]
    capsys.readouterr()
    assert main(["hub", str(r), "--out", str(tmp_path / "hub"), "--allow-partial"]) == 2
    err = capsys.readouterr().err.splitlines()
    kind = "symbolic link loop in the clips folder (not a clip; nothing can be read through it: remove it)"
    assert err == [f"vocalgrad hub: cannot build the Hub folder: {kind}: {loops[0]}"] if len(loops) == 1 else \
        err[1:] == [f"  {kind}: {p}" for p in loops], err
    res = verify(r, write_record=False)
    assert not res.ok and res.problems[kind] == [str(p) for p in loops]
    for p in loops:
        p.unlink()
    assert verify(r, write_record=False).ok  # the near miss: the same folder without the loop
    assert main(["hub", str(r), "--out", str(tmp_path / "hub"), "--allow-partial"]) == 0


def test_a_link_that_resolves_is_no_loop(render, tmp_path):
    r = tmp_path / "r"
    shutil.copytree(render, r)
    os.symlink("..", r / "clips" / "up")  # leads somewhere: not a loop, and not followed into
    assert verify(r, write_record=False).ok


def test_a_hub_folder_built_with_allow_partial_verifies_as_partial(render, tmp_path, capsys):
    hub = tmp_path / "hub"
    assert main(["hub", str(render), "--out", str(hub), "--allow-partial"]) == 0
    capsys.readouterr()
    assert main(["verify", str(hub)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"vocalgrad verify {hub} (hub): PASS (partial)"), out
    assert out[1] == ("  partial: 2 of 9 categories, as asked (rendered with --categories noise,volume); not rendered: "
                      "speed, pitch, distortion, roughness, echo, clarity, vibration")
    record = json.loads((hub / "build.json").read_text())
    assert record["renders"]["test"]["categories"] == ["noise", "volume"]
    # a partial build without the --categories record: the build record says it was built partial
    del record["renders"]["test"]["categories"]
    (hub / "build.json").write_text(json.dumps(record))
    res = verify(hub, write_record=False)
    assert res.ok and res.partial == ["2 of 9 categories (built with `vocalgrad hub --allow-partial` from a partial "
                                      "render); not in the build: speed, pitch, distortion, roughness, echo, clarity, "
                                      "vibration"]
    # the near miss: a Hub folder that does not say it was built partial (an earlier version's) lacks them
    del record["renders"]["test"]["missing_conditions"]
    (hub / "build.json").write_text(json.dumps(record))
    res = verify(hub, write_record=False)
    assert not res.ok and len(res.problems["category not in the build"]) == 7
