"""Token-position probes (`vocalgrad probe --positions`) on a tiny random Qwen2-Audio (offline, CPU)."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.probe.positions import AUDIO_QUERY_ONLY, find_unique, locate, position_table, segment_ends


def test_segment_ends_and_unique_spans():
    assert segment_ends([5, 6, 7, 8]) == [5, 6, 7, 8]
    assert segment_ends(list(range(100, 110))) == [101, 104, 106, 109]
    assert segment_ends([3, 4]) == [3, 3, 4, 4]        # empty quarters fall back to their first index
    with pytest.raises(ValueError):
        segment_ends([])
    assert find_unique([1, 2, 3, 2, 3], [3, 2], what="x") == 2
    with pytest.raises(ValueError, match="found 2 times"):
        find_unique([1, 2, 3, 2, 3], [2, 3], what="x")


def test_locate_positions_in_a_row():
    # [pad pad] <s> A A A A A A A A  Q1 Q2 the vol ume Q3 ? </s> asst
    ids = [0, 0, 9] + [7] * 8 + [11, 12, 20, 21, 22, 13, 14, 15, 16]
    mask = [i == 7 for i in ids]
    prompt = [11, 12, 20, 21, 22, 13, 14]
    got = locate(ids, mask, prompt, [[30], [20, 21, 22]], ["a1", "a2", "a3", "a4", "o", "q_attr", "q_p", "q_l"],
                 order="audio_query")
    assert got == {"a1": 4, "a2": 6, "a3": 8, "a4": 10, "o": 19, "q_attr": 15, "q_p": 16, "q_l": 17}
    with pytest.raises(ValueError, match="audio before the query"):
        locate(ids, mask, prompt, [[20]], ["q_l"], order="query_audio")
    text_first = [9, 11, 12, 20, 21, 22, 13, 14] + [7] * 8 + [15, 16]
    with pytest.raises(ValueError, match="does not come before"):
        locate(text_first, [i == 7 for i in text_first], prompt, [[20]], ["q_l"], order="audio_query")


def test_position_table_averages_categories_equally():
    rows = [{"order": "query_audio", "layer": 1, "position": "o", "category": c, "accuracy": a}
            for c, a in (("pitch", 1.0), ("volume", 0.5), ("echo", 0.6))]
    assert position_table(rows)[("query_audio", 1)]["o"] == pytest.approx(0.7)


@pytest.mark.slow
def test_probe_positions_on_a_tiny_model(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from _probe_helpers import build_tiny, make_probe_hub

    from analysis.probe.model_features import ModelFeatures
    from analysis.probe.positions import PositionFeatures
    from vocalgrad_commands.cli import main

    model = build_tiny("qwen2_audio", tmp_path / "m")
    hub = make_probe_hub(tmp_path / "hub", categories=("volume", "pitch"))
    # the positions found in the real inputs: audio quarters, query and attribute tokens
    pf = PositionFeatures(ModelFeatures(str(model), device="cpu", dtype="float32"))
    y = np.sin(np.linspace(0, 800, 16000)).astype(np.float32)
    prompt = "Does the voice pitch increase or decrease over time?\n\nAnswer with only one word."
    f = pf.features([prompt, prompt], [(y, 16000), (y[:8000], 16000)], attribute="voice pitch",
                    order="audio_query", positions=["a4", "q_attr", "q_l", "o"], layers=[0, 2])
    assert f[("q_l", 2)].shape == (2, 32) and f[("o", 0)].dtype == np.float32
    from harness_tasks.models.families import Item

    inputs = pf.mf.lm.batch([Item(prompt=prompt, audios=[(y, 16000)], audio_first=True)])
    hs, mask = pf.mf.hidden_states(inputs)
    row = inputs["input_ids"][0].tolist()
    tok = pf.tokenizer
    q_attr = f[("q_attr", 0)][0]
    attr_last = tok("voice pitch", add_special_tokens=False)["input_ids"][-1]
    where = [i for i, t in enumerate(row) if t == attr_last]
    assert any(np.allclose(hs[0][0, i].numpy(), q_attr) for i in where)
    audio = np.flatnonzero(mask[0].numpy())
    assert np.allclose(f[("a4", 2)][0], hs[2][0, audio[-1]].numpy())
    # a batch of two (padded) against a batch of one: float32 sums in another order differ by ~1e-7
    # (transformers 5.25), while two different positions differ by O(1)
    assert np.allclose(f[("o", 2)][0], hs[2][0, -1].numpy(), atol=1e-5)
    assert not np.allclose(f[("o", 2)][0], hs[2][0, -2].numpy(), atol=1e-5)

    out = tmp_path / "out"
    code = main(["probe", "--data", str(hub), "--model", str(model), "--out", str(out), "--positions",
                 "a1,a2,a3,a4,o,q_attr,q_p,q_l", "--layers", "1,2", "--device", "cpu", "--dtype", "float32",
                 "--epochs", "10", "--quiet", "--batch-size", "2"])
    assert code == 0
    md = (out / "probe.md").read_text()
    assert "Token-position probes" in md and "| query→audio | 1 |" in md and "| audio→query | 2 |" in md
    assert "Kimi-Audio (paper), query→audio | 1 | 85.5 | 78.3 | 78.5 | 92.4 | 93.1" in md
    import csv

    rows = list(csv.DictReader(open(out / "positions.csv")))
    # 2 categories x (5 positions query->audio + 8 audio->query) x 2 layers
    assert len(rows) == 2 * (5 + 8) * 2
    assert not any(r["order"] == "query_audio" and r["position"] in AUDIO_QUERY_ONLY for r in rows)
    assert all(r["dim"] == "32" and 0 <= float(r["accuracy"]) <= 1 for r in rows)
    # cached: a second run computes nothing
    code = main(["probe", "--data", str(hub), "--model", str(model), "--out", str(out), "--positions", "o,q_l",
                 "--layers", "1", "--device", "cpu", "--dtype", "float32", "--epochs", "5", "--quiet"])
    assert code == 0
    assert main(["probe", "--data", str(hub), "--model", str(model), "--out", str(out), "--positions", "o",
                 "--device", "cpu"]) == 2          # default layers 1,10,25 exceed the tiny model
