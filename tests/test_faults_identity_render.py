"""Content identity on the generation side: sources, recipes, builds, registries (issue 28, part 2).

Each test is one case that once mixed or lost data silently (a replaced source's old clips kept, an
edited recipe accepted under the paper's name, a render reading its own output, a plugin replacing
the paper's volume transform) and checks what happens now. Renders are one source, one category.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import vocalgrad as vg
from generation import attributes, registry
from vocalgrad_commands.cli import main
from generation.hub import build_hub
from generation.hub_dir import HubDir
from generation.identity import DigestMismatch, build_digest, sha256_file, short
from generation.measures import MEASURES
from generation.recipe import RECIPE_DIR, load_recipe
from generation.render import render
from generation.render_dir import RenderDir
from generation.render_identity import IdentityError, RecipeNameWarning
from generation.sources import SourceWarning
from generation.transforms import TRANSFORMS
from generation.transforms.base import register
from generation.verify import IDENTITY, verify

SR = 48000
#: The content digest of the shipped faithful-v1 recipe (the paper's settings, SPEC §4). It changes only
#: when a setting that shapes the clips changes: then the paper set changes too, and this pin must be
#: updated on purpose.
FAITHFUL_DIGEST = "a9ee77172f5d51a146ee50b53d3ce630fdf389d2aa88f2727da4a65720c27a50"
FAITHFUL = (RECIPE_DIR / "faithful-v1.toml").read_text()
VOL_LOW = "low = [-6.0, 6.0]"


def voice(f0: float, seconds: float = 1.6) -> np.ndarray:
    """A harmonic tone with 0.2 s of silence each side (a source with a clear speech span)."""
    t = np.arange(int(seconds * SR)) / SR
    y = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 6)) * np.hanning(t.size) ** 0.2
    pad = np.zeros(int(0.2 * SR))
    return np.concatenate([pad, 0.15 * y / np.max(np.abs(y)), pad]).astype(np.float32)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``X/a.wav`` rendered (volume only) into ``X/build``."""
    root = tmp_path_factory.mktemp("identity")
    (root / "X").mkdir()
    sf.write(root / "X" / "a.wav", voice(180.0), SR, subtype="PCM_16")
    render("folder:" + str(root / "X"), root / "X" / "build", categories=["volume"], jobs=1, progress=False)
    return root / "X"


@pytest.fixture
def folder(built, tmp_path):
    """A private copy of the built source folder and its render."""
    dst = tmp_path / "X"
    shutil.copytree(built, dst)
    meta = json.loads((dst / "build" / "render.json").read_text())
    (dst / "build" / "render.json").write_text(json.dumps({**meta, "source": f"folder:{dst}"}, indent=2,
                                                          sort_keys=True) + "\n")
    return dst


def _clips(out: Path) -> dict[str, str]:
    return {p.name: sha256_file(p) for p in sorted((out / "clips").rglob("*.flac"))}


def _again(folder: Path, **kw):
    return render(f"folder:{folder}", folder / "build", categories=kw.pop("categories", ["volume"]), jobs=1,
                  progress=False, **kw)


# --------------------------------------------------------------------------------------------- sources
def test_render_json_records_recipe_sources_and_build_digests(folder):
    rd = RenderDir(folder / "build")
    meta = rd.meta
    assert meta["recipe"] == "faithful-v1" and meta["recipe_digest"] == FAITHFUL_DIGEST
    assert meta["sources"] == {"a": {"sha256": sha256_file(folder / "a.wav"),
                                     "flac_sha256": sha256_file(rd.source_path("a"))}}
    rows = rd.rows()
    assert meta["n_clips"] == len(rows) == 24
    assert meta["build_digest"] == build_digest((r["clip_id"], r["sha256"]) for r in rows) == rd.build_digest()


def test_a_replaced_source_is_refused_naming_it_and_nothing_is_written(folder):
    out = folder / "build"
    before, meta_before = _clips(out), (out / "render.json").read_bytes()
    source_before = (out / "sources" / "a.flac").read_bytes()
    sf.write(folder / "a.wav", voice(260.0), SR, subtype="PCM_16")  # new audio, same name
    new = sha256_file(folder / "a.wav")
    for cats in (["volume"], ["volume", "pitch"]):  # a rerun, and a rerun adding a category
        with pytest.raises(IdentityError, match=rf"1 source\(s\) changed .*: a \(rendered from \w{{12}}, now "
                                                rf"{short(new)}\); nothing was written"):
            _again(folder, categories=cats)
    assert _clips(out) == before and (out / "render.json").read_bytes() == meta_before
    assert (out / "sources" / "a.flac").read_bytes() == source_before  # not overwritten from the new audio
    assert not (out / "clips" / "pitch").exists()


def test_a_replaced_source_on_the_command_line_is_one_line_exit_2(folder, capsys):
    sf.write(folder / "a.wav", voice(260.0), SR, subtype="PCM_16")
    code = main(["render", "--source", f"folder:{folder}", "--out", str(folder / "build"), "--categories", "volume",
                 "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("vocalgrad render: error: ") and "Restore the source audio" in err[-1]


def test_verify_flags_a_sources_file_that_differs_from_its_record_and_a_rerun_repairs_it(folder):
    out = folder / "build"
    good = (out / "sources" / "a.flac").read_bytes()
    pcm = (voice(260.0) * 32767).astype(np.int16)
    sf.write(out / "sources" / "a.flac", pcm, SR, format="FLAC", subtype="PCM_16")
    res = verify(out, write_record=False)
    assert any("sources/a.flac" in p and "differs from the" in p for p in res.problems[IDENTITY])
    assert res.repair and "vocalgrad render" in res.repair
    assert any("source clip differs from render.json" in p for p in RenderDir(out).verify().problems)  # hub refuses
    s = _again(folder)
    assert s.clips_rendered == 24 and "sha256 differs" in s.repaired[0]
    assert (out / "sources" / "a.flac").read_bytes() == good
    assert IDENTITY not in verify(out, write_record=False).problems


def test_verify_flags_a_manifest_that_differs_from_the_recorded_build_digest(folder):
    out = folder / "build"
    meta = json.loads((out / "render.json").read_text())
    other = build_digest([("x", "1")])
    (out / "render.json").write_text(json.dumps({**meta, "build_digest": other}))
    problems = verify(out, write_record=False).problems[IDENTITY]
    assert len(problems) == 1 and f"records {short(other)}" in problems[0] and short(meta["build_digest"]) in problems[0]
    _again(folder)  # a rerun rewrites the digest of the clips the folder holds
    assert json.loads((out / "render.json").read_text())["build_digest"] == meta["build_digest"]


# --------------------------------------------------------------------------------------------- recipes
def test_the_faithful_recipe_content_digest_is_pinned(tmp_path):
    assert load_recipe().digest == FAITHFUL_DIGEST
    renamed = tmp_path / "copy.toml"  # name, description, comments and layout are not content
    renamed.write_text(FAITHFUL.replace('name = "faithful-v1"', 'name = "my-copy"').replace("\n", "\n\n")
                       .replace('description = "', 'description = "edited prose; ') + "\n# a comment\n")
    assert load_recipe(str(renamed)).digest == FAITHFUL_DIGEST
    edited = tmp_path / "edited.toml"
    edited.write_text(FAITHFUL.replace(VOL_LOW, "low = [-1.0, 1.0]", 1))
    assert load_recipe(str(edited)).digest != FAITHFUL_DIGEST


def test_an_edited_recipe_keeping_the_name_is_refused_in_an_existing_build(folder, tmp_path, capsys):
    out = folder / "build"
    edited = tmp_path / "faithful-v1.toml"  # an edited copy that keeps name = "faithful-v1"
    edited.write_text(FAITHFUL.replace(VOL_LOW, "low = [-1.0, 1.0]", 1))
    digest = load_recipe(str(edited)).digest
    before, meta_before = _clips(out), (out / "render.json").read_bytes()
    with pytest.warns(RecipeNameWarning, match="named 'faithful-v1' like the shipped recipe but its content differs"):
        with pytest.raises(DigestMismatch, match=rf"is {short(FAITHFUL_DIGEST)}, this run's recipe .* is "
                                                 rf"{short(digest)}; one render folder holds one recipe content"):
            _again(folder, recipe=str(edited))
    assert _clips(out) == before and (out / "render.json").read_bytes() == meta_before
    code = main(["render", "--source", f"folder:{folder}", "--out", str(out), "--categories", "volume", "--quiet",
                 "--recipe", str(edited)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith("vocalgrad render: error: recipe contents differ: ")
    assert short(FAITHFUL_DIGEST) in err[-1] and short(digest) in err[-1]


def test_an_edited_recipe_digest_in_render_json_is_named_and_verify_sees_it(folder, capsys):
    """render.json's recipe_digest edited by hand: verify names the edited record (was: PASS), and a rerun refuses
    naming render.json, not the recipe (was: "recipe contents differ", blaming the recipe)."""
    out = folder / "build"
    meta = json.loads((out / "render.json").read_text())
    assert meta["recipe_seal"]
    edited = {**meta, "recipe_digest": "0" * 64}
    (out / "render.json").write_text(json.dumps(edited))
    res = verify(out, write_record=False)
    assert not res.ok
    (problem,) = res.problems[IDENTITY]
    assert problem.startswith(f"{out / 'render.json'}: its recipe record was edited after the render (recipe "
                              "'faithful-v1', recipe_digest 000000") and "restore render.json's recipe_digest" in problem
    before = _clips(out)
    code = main(["render", "--source", f"folder:{folder}", "--out", str(out), "--categories", "volume", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith(f"vocalgrad render: error: {out / 'render.json'}: its recipe record was "
                                            "edited after the render")
    assert "recipe contents differ" not in err[-1] and _clips(out) == before
    (out / "render.json").write_text(json.dumps(meta))  # restored: sound again
    assert verify(out, write_record=False).ok


# ---------------------------------------------------------------------------------------------- builds
def test_the_hub_folder_records_the_build_digest_per_config(folder, tmp_path):
    out = folder / "build"
    hub = tmp_path / "hub"
    build_hub(out, hub, allow_partial=True)
    meta = RenderDir(out).meta
    info = HubDir(hub).build_info("volume")
    assert (info.digest, info.n_clips, info.source_kind, info.recipe, info.recipe_digest, info.render_digest) == (
        meta["build_digest"], 24, "folder", "faithful-v1", FAITHFUL_DIGEST, meta["build_digest"])
    assert HubDir(hub).build_digest("all") == meta["build_digest"]  # the nine configs' clips: here volume's
    assert HubDir(hub).build_digest("sources") == build_digest([("a__source", meta["sources"]["a"]["flac_sha256"])])
    assert f"**Build digest (test):** `{short(meta['build_digest'])}` over 24 clips" in (hub / "README.md").read_text()
    assert "build digest differs from build.json" not in verify(hub).problems
    record = json.loads((hub / "build.json").read_text())
    record["configs"]["volume"]["build_digest"] = "0" * 64
    (hub / "build.json").write_text(json.dumps(record))
    assert verify(hub).problems["build digest differs from build.json"][0].startswith("volume: its shards give ")


# ------------------------------------------------------------------------------------ own output as source
def test_a_render_never_reads_its_own_output_or_another_render_as_sources(folder):
    shutil.copytree(folder / "build", folder / "old-render")  # another render folder inside the source
    with pytest.warns(SourceWarning, match=r"left out toolkit output, never read as sources: .*build \(25 file"):
        s = _again(folder)
    assert s.clips_total == 24 and s.units_done_before == 1
    assert RenderDir(folder / "build").selection() == ["a"]
    assert {r["source_id"] for r in RenderDir(folder / "build").rows()} == {"a"}


# ------------------------------------------------------------------------------------------ registries
class _EntryPoint:
    def __init__(self, name, load):
        self.name, self.value, self.dist, self._load = name, f"{name}_pkg:ATTR", None, load

    def load(self):
        return self._load()


def _load_plugins(monkeypatch, *eps):
    monkeypatch.setattr(attributes, "_entry_points", lambda: list(eps))
    monkeypatch.setattr(attributes, "_REGISTRY", {})
    monkeypatch.setattr(attributes, "_PROBLEMS", [])
    with pytest.warns(attributes.PluginWarning):
        attributes.installed()
    return attributes.problems()


def test_a_plugin_cannot_replace_the_papers_volume_transform_and_leaves_no_trace(monkeypatch):
    gain, pitch_measure = TRANSFORMS["gain"], MEASURES["pitch"]
    saved = registry.snapshot()

    def flat(x, sr, schedule, params, *, cache=None):  # would remove the volume ramp
        return x

    def registers_gain():  # `@register("gain", ...)` at import, then a declaration
        register("mine_first", gain.params_type, np.float32)(flat)
        register("gain", gain.params_type, np.float32)(flat)

    def assigns_measure():  # assigns to a registry directly, with a declaration that is otherwise fine
        register("mine_other", gain.params_type, np.float32)(flat)
        MEASURES["pitch"] = lambda y, sr: 0.0
        return []

    problems = _load_plugins(monkeypatch, _EntryPoint("gainy", registers_gain), _EntryPoint("measy", assigns_measure))
    assert "transform name 'gain' is taken by generation.transforms.volume.gain" in problems[0]
    assert "replaced the installed measure 'pitch'" in problems[1]
    assert TRANSFORMS["gain"] is gain and MEASURES["pitch"] is pitch_measure
    assert registry.snapshot() == saved  # mine_first, mine_other: undone
    # the paper's volume transform still ramps: a high-tier increase rises by ~36 dB over the span
    from generation.render import render_clip
    from generation.sources import SourceItem
    from generation.span import detect_span

    rec = load_recipe()
    x = voice(180.0, seconds=3.0)
    res, _ = render_clip(x, SourceItem("v", "unused"), rec, detect_span(x, SR, **rec.span), category="volume",
                         tier="high", trajectory="linear", direction="increase")
    a, b = res.onset, res.offset
    k = (b - a) // 8
    rise = MEASURES["volume"](res.y[b - k:b], SR) - MEASURES["volume"](res.y[a:a + k], SR)
    assert 25.0 < rise < 45.0


def test_every_registry_refuses_a_taken_name():
    from generation.sources.base import _READERS, register_source
    from harness_tasks.models import families

    gain, folder_reader = TRANSFORMS["gain"], _READERS["folder"]
    with pytest.raises(registry.NameTaken, match="transform name 'gain' is taken by generation.transforms.volume.gain"):
        register("gain", gain.params_type, np.float32)(lambda *a, **k: None)
    with pytest.raises(registry.NameTaken, match="source reader name 'folder' is taken"):
        register_source("folder")(lambda arg, options: [])

    class Impostor(type(families.FAMILIES["qwen2_audio"])):
        pass

    with pytest.raises(registry.NameTaken, match="model family name 'qwen2_audio' is taken"):
        families.register(Impostor())
    assert TRANSFORMS["gain"] is gain and _READERS["folder"] is folder_reader
    assert type(families.FAMILIES["qwen2_audio"]).__name__ == "Qwen2Audio"
    assert vg.CATEGORY_NAMES[0] == "speed"  # the vocabulary is untouched
