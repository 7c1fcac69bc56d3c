"""`vocalgrad publish` against a fake Hub on 127.0.0.1, then `load_dataset(repo_id)` through it.

``huggingface_hub`` reads ``HF_ENDPOINT`` at import time, so publishing and loading run in a
child process whose environment points at the fake server (tests/hub_server.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vocalgrad
from generation import hub as hubmod

from _hub_helpers import read_manifest, real_render
from hub_server import FakeHub

pytest.importorskip("huggingface_hub")
pytest.importorskip("datasets")

TOKEN = "hf_fakeTOKENfortests0123456789"
ROOT = Path(vocalgrad.__file__).resolve().parent

_CHILD = r"""
import json, sys
sys.path.insert(0, {root!r})
from generation import publish
code = publish._run_cli(type("A", (), dict(hub_dir={hub!r}, repo={repo!r}, private={private!r},
                                          revision={revision!r}, message=None))())
out = {{"code": code}}
if code == 0 and {load!r}:
    import datasets
    ds = datasets.load_dataset({repo!r}, "pitch", split="test", revision={revision!r},
                               cache_dir={cache!r})
    out["ids"] = list(ds["id"])
    out["features_ok"] = ds.features == __import__("vocalgrad").features(48000)
    # Byte-level check of the audio (decoding through torchcodec is tested in-process, where torch
    # is imported once; importing it here would double this test's time).
    import hashlib
    raw = ds.cast_column("audio", datasets.Audio(decode=False))
    out["audio_ok"] = all(hashlib.sha256(r["audio"]["bytes"]).hexdigest() == r["sha256"] for r in raw)
print("RESULT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def server():
    fake = FakeHub().start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def hub_dir(tmp_path_factory):
    render = real_render(tmp_path_factory)  # tones, 1 source, 9 categories (shared with other modules)
    out = tmp_path_factory.mktemp("pub") / "hub"
    hubmod.build_hub(render, out)
    return render, out


def _child(server, tmp_path, hub, repo, *, token=TOKEN, private=False, revision=None, load=False):
    # The child talks to the fake server: drop every offline switch (TRANSFORMERS_OFFLINE also sets
    # huggingface_hub offline) and any real token or endpoint of the caller.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING", "TRANSFORMERS_"))}
    env.update(HF_ENDPOINT=server.endpoint, HF_HOME=str(tmp_path / "hf_home"), HF_HUB_DISABLE_XET="1",
               HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1", PYTHONPATH=str(ROOT))
    if token:
        env["HF_TOKEN"] = token
    code = _CHILD.format(root=str(ROOT), hub=str(hub), repo=repo, private=private, revision=revision,
                         load=load, cache=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT")]
    assert line, proc.stdout + proc.stderr
    return json.loads(line[-1][6:]), proc.stdout + proc.stderr


def _repo_requests(server) -> int:
    """Requests about repos (the client's agent-registry lookup is not one)."""
    return sum(not path.startswith("/api/agent-harnesses") for _, path in server.log)


def _unexpected(server) -> list:
    # The client's best-effort agent-registry lookup is the only route the fake does not serve.
    return [u for u in server.unknown if not u[1].startswith("/api/agent-harnesses")]


def test_no_token_fails_before_any_request(server, hub_dir, tmp_path):
    _, hub = hub_dir
    before = _repo_requests(server)
    result, output = _child(server, tmp_path, hub, "org/notoken", token=None)
    assert result["code"] == 2
    assert "no Hugging Face token found: set HF_TOKEN or run `hf auth login`" in output
    assert _repo_requests(server) == before


def test_bad_folder_and_repo_id_fail_before_any_request(hub_dir, tmp_path):
    from generation import publish

    _, hub = hub_dir
    bad = tmp_path / "bad"
    (bad / "pitch").mkdir(parents=True)
    (bad / "pitch/x.parquet").write_bytes((hub / "pitch/test-00000-of-00001.parquet").read_bytes())
    (bad / "loader.py").write_text("print('hi')\n")
    with pytest.raises(publish.PublishError) as info:
        publish.publish(bad, "org/bad", token=TOKEN)
    assert "README.md: missing" in str(info.value) and "loading scripts are refused" in str(info.value)
    assert "loader.py" in str(info.value)
    (bad / "loader.py").unlink()
    (bad / "README.md").write_text("# no header\n")
    with pytest.raises(publish.PublishError, match="no YAML header with `configs:`"):
        publish.publish(bad, "org/bad", token=TOKEN)
    with pytest.raises(publish.PublishError, match="--repo must be ORG/NAME"):
        publish.publish(hub, "not-a-repo-id", token=TOKEN)
    with pytest.raises(publish.PublishError, match="no such folder"):
        publish.publish(tmp_path / "nowhere", "org/x", token=TOKEN)
    assert publish.check_hub_folder(hub) == sorted(  # every file but the hidden marker and lock of the folder
        p.relative_to(hub).as_posix() for p in hub.rglob("*") if p.is_file() and not p.name.startswith("."))
    assert (hub / ".vocalgrad.json").is_file()


def test_publish_then_load_by_repo_id(server, hub_dir, tmp_path):
    render, hub = hub_dir
    result, output = _child(server, tmp_path, hub, "ynk/vg-test", load=True)
    assert result["code"] == 0, output
    assert TOKEN not in output
    assert f"Bearer {TOKEN}" in server.auth_headers  # the token reached the server, only in the header
    remote = server.files("ynk/vg-test")
    local = {p.relative_to(hub).as_posix(): p.read_bytes() for p in hub.rglob("*")
             if p.is_file() and not p.name.startswith(".")}  # the folder's marker and lock stay local
    assert {k: v for k, v in remote.items() if k != ".gitattributes"} == local
    assert result["ids"] == [r["clip_id"] for r in read_manifest(render) if r["category"] == "pitch"]
    assert result["audio_ok"] and result["features_ok"]
    assert ("POST", "/api/validate-yaml") in server.log  # the card header passed the YAML check
    assert not _unexpected(server)
    assert not server.repos[("dataset", "ynk/vg-test")].private


def test_republish_removes_stale_shards_and_branch(server, hub_dir, tmp_path):
    render, _ = hub_dir
    hub2 = tmp_path / "hub2"
    hubmod.build_hub(render, hub2, max_shard_bytes=500_000, verify_sha256=False)  # several shards now
    result, output = _child(server, tmp_path, hub2, "ynk/vg-test2")
    assert result["code"] == 0, output
    hub1 = tmp_path / "hub1"
    hubmod.build_hub(render, hub1, verify_sha256=False)
    result, output = _child(server, tmp_path, hub1, "ynk/vg-test2", revision="v1", private=True, load=True)
    assert result["code"] == 0, output
    repo = server.repos[("dataset", "ynk/vg-test2")]
    assert not repo.private  # an existing repo keeps its visibility
    on_branch = server.files("ynk/vg-test2", "v1")
    assert sorted(p for p in on_branch if p.endswith(".parquet")) == [
        f"{c}/test-00000-of-00001.parquet" for c in sorted((*vocalgrad.CATEGORY_NAMES, "sources"))]
    assert len([p for p in server.files("ynk/vg-test2", "main") if p.endswith(".parquet")]) > 9
    assert len(result["ids"]) == 24


def test_private_repo(server, hub_dir, tmp_path):
    _, hub = hub_dir
    result, output = _child(server, tmp_path, hub, "ynk/vg-private", private=True)
    assert result["code"] == 0, output
    assert server.repos[("dataset", "ynk/vg-private")].private
