"""``vocalgrad transfer`` and ``vocalgrad align`` end to end on a tiny offline model."""

from __future__ import annotations

import csv
import json

import _finetune_helpers as fh
import _harness_helpers as hh
import _probe_helpers as ph
import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("torch")

from analysis.finetune.transfer import letter_token_ids, load_transfer_set, mc_prompt  # noqa: E402
from analysis.finetune.transfer_metrics import classification_scores  # noqa: E402


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return ph.build_tiny("qwen2_audio", tmp_path_factory.mktemp("m") / "qwen2_audio")


def _folder_set(root):
    root.mkdir()
    rows = []
    for i, lab in enumerate(["anger", "joy", "sadness", "anger", "joy", "joy"]):
        sf.write(root / f"c{i}.flac", hh.synth_clip("pitch", "increase", seed=i), 16000)
        rows.append({"file": f"c{i}.flac", "label": lab})
    with open(root / "labels.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["file", "label"])
        w.writeheader()
        w.writerows(rows)
    return root


def test_prompt_and_letters():
    p = mc_prompt(["anger", "joy"], task="emotion")
    assert p == ("What is the speaker's emotion in this audio?\n\nOptions:\nA. anger\nB. joy\n\n"
                 "Answer with only the option letter.")
    with pytest.raises(ValueError, match="2 to 26"):
        mc_prompt(["x"])


def test_transfer_folder_end_to_end(model, tmp_path):
    from vocalgrad_commands.cli import main
    from harness_tasks.models.families import load

    root = _folder_set(tmp_path / "set")
    out = tmp_path / "out"
    rc = main(["transfer", "--model", str(model), "--data", f"folder:{root}", "--labels", str(root / "labels.csv"),
               "--classes", "anger,disgust,joy,sadness", "--out", str(out), "--device", "cpu", "--quiet"])
    assert rc == 0
    res = json.loads((out / "transfer.json").read_text())
    assert res["classes"] == ["anger", "disgust", "joy", "sadness"] and res["n"] == 6
    ids, spelling = letter_token_ids(load(str(model), device="cpu").tokenizer, 4)
    assert res["letter_tokens"] == spelling and len(set(ids)) == 4
    with open(out / "predictions.csv") as f:
        preds = list(csv.DictReader(f))
    for r in preds:                                   # the prediction is the first maximal letter logit
        logits = [float(r[f"logit_{c}"]) for c in "ABCD"]
        assert r["pred"] == res["classes"][int(np.argmax(logits))]
    again = classification_scores([r["gold"] for r in preds], [r["pred"] for r in preds], res["classes"])
    assert again["macro_f1"] == pytest.approx(res["macro_f1"])
    assert res["per_class"]["disgust"]["support"] == 0
    assert "macro F1" in (out / "transfer.md").read_text()
    assert main(["transfer", "--model", str(model), "--data", f"folder:{root}", "--out", str(out)]) == 2


def test_transfer_hf_source(model, tmp_path):
    import datasets

    root = _folder_set(tmp_path / "set")
    ds = datasets.Dataset.from_dict({"audio": [str(root / f"c{i}.flac") for i in range(6)],
                                     "emotion": ["anger", "joy", "sadness", "anger", "joy", "joy"]})
    ds = ds.cast_column("audio", datasets.Audio())
    (tmp_path / "hf").mkdir()
    ds.to_parquet(str(tmp_path / "hf" / "test-00000-of-00001.parquet"))
    ts = load_transfer_set(f"hf:{tmp_path / 'hf'}", labels="emotion")
    assert ts.classes == ["anger", "joy", "sadness"] and len(ts) == 6
    y, sr = ts.audio(2)
    assert sr == 16000 and y.ndim == 1 and np.abs(y).max() > 0.01
    with pytest.raises(ValueError, match="no column 'label'"):
        load_transfer_set(f"hf:{tmp_path / 'hf'}")


def test_align_end_to_end(model, tmp_path):
    from vocalgrad_commands.cli import main

    hub = fh.make_volume_hub(tmp_path / "hub", test_categories=("volume", "pitch", "noise"), test_sources=2)
    out = tmp_path / "al"
    assert main(["align", "--model", str(model), "--data", str(hub), "--categories", "volume,pitch,noise",
                 "--layers", "all", "--out", str(out), "--device", "cpu", "--quiet"]) == 0
    res = json.loads((out / "alignment.json").read_text())
    cos = np.array(res["cosine"])
    assert res["layers"] == [0, 1, 2] and cos.shape == (3, 3, 3) and len(res["rows"]) == 3 * 3
    np.testing.assert_allclose(np.diagonal(cos[1:], axis1=1, axis2=2), 1.0, atol=1e-6)
    assert np.all(np.isnan(cos[0]))                  # layer 0 (embeddings) at the last position: no direction
    assert res["pairs"]["volume"] == {"sources": 2, "pairs": 2, "unpaired": 0}
