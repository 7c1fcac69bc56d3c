"""Batch size leaves the answers unchanged: every tiny model family through ``vocalgrad-hf`` at
batch size 1 and 8 on the same eight clips of mixed lengths (fp32, greedy, left padding, per-row
stop). Families that cannot batch (``Family.batchable = False``: their audio encoder sees the
padding) are answered one clip at a time by the adapter; the test shows that a real mixed batch
would drift for them, and that the adapter never builds one."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _family_helpers import BUILDERS, PROCESSORS  # noqa: E402
from _harness_helpers import tone_clip  # noqa: E402

from harness_tasks import prompts  # noqa: E402
from harness_tasks.models.base import Query  # noqa: E402
from harness_tasks.models.hf import HFAudioLM  # noqa: E402

#: Clip lengths (s): every row of a batch of 8 has a different length.
SECONDS = (0.45, 1.3, 0.7, 1.85, 0.55, 1.0, 1.6, 0.8)


def queries() -> list[Query]:
    text = prompts.build_prompt("pitch")
    return [Query(text + " " * (i % 3), [tone_clip(i, s)], max_new_tokens=3, index=i)
            for i, s in enumerate(SECONDS)]


@pytest.fixture(scope="module", params=list(BUILDERS))
def adapter(request, tmp_path_factory):
    name = request.param
    folder = BUILDERS[name](tmp_path_factory.mktemp(name))
    make = PROCESSORS.get(name)
    return HFAudioLM(pretrained=str(folder), processor=make(folder) if make else None, device="cpu",
                     dtype="float32", retry_unparsed=False, answer_log="none", batch_size=8)


def test_answers_at_batch_size_1_and_8_are_identical(adapter, monkeypatch):
    lm = adapter.lm
    sizes: list[int] = []
    real_batch = lm.batch
    monkeypatch.setattr(lm, "batch", lambda items: (sizes.append(len(items)), real_batch(items))[1])
    adapter.batch_size = 8
    if not lm.batchable:
        # the adapter never builds a batch for it: each clip alone, as at batch size 1 (4 clips suffice)
        adapter._run(queries()[:4], disable_tqdm=True)
        assert sizes == [1] * 4, lm.family
        return
    eight = adapter._run(queries(), disable_tqdm=True)
    assert sizes == [len(SECONDS)]
    adapter.batch_size = 1
    sizes.clear()
    one = adapter._run(queries(), disable_tqdm=True)
    assert sizes == [1] * len(SECONDS)
    assert eight == one, lm.family


def test_a_mixed_batch_equals_single_runs_exactly_where_the_family_batches(adapter):
    """Batchable: the logits of the 8-row batch are those of the single runs (< 1e-4). Not
    batchable: a real batch of four of these clips (0.45 to 1.85 s) drifts (> 1e-4), which is why
    the adapter runs them one at a time."""
    lm = adapter.lm
    items = [adapter.item(q) for q in queries()]
    if not lm.batchable:
        items = items[:4]                   # the shortest and the longest clips are among them
    together = lm.logits(lm.batch(items))
    alone = torch.cat([lm.logits(lm.batch([it])) for it in items])
    diff = float((together - alone).abs().max())
    print(f"\n{lm.family}: batch of {len(items)} vs single runs, max abs logit difference {diff:.1e}")
    if lm.batchable:
        assert diff < 1e-4
    else:
        assert diff > 1e-4


def test_unbatchable_family_warns_once_at_start(tmp_path, caplog):
    import logging

    from _family_helpers import build_tiny_granite_speech, granite_processor

    folder = build_tiny_granite_speech(tmp_path / "granite")
    with caplog.at_level(logging.WARNING, logger="vocalgrad"):
        HFAudioLM(pretrained=str(folder), processor=granite_processor(folder), device="cpu", dtype="float32",
                  answer_log="none", batch_size=4)
    assert "granite_speech answers one clip at a time (batch_size=4 not used)" in caplog.text
