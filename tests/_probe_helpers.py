"""Fixtures for the probe tests: tiny Hub folders with a train config, tiny 2-layer models."""

from __future__ import annotations

import contextlib
from pathlib import Path

import _harness_helpers as hh

import vocalgrad

#: LM layers of the probe's tiny models (the harness helpers build 1-layer models).
TINY_LAYERS = 2


def make_probe_hub(root: Path, *, categories=("volume", "noise"), sources: int = 2, sr: int = 16000,
                   tiers=("low",), trajectories=("linear",)) -> Path:
    """Hub folder with ``<category>/test-*`` configs and a ``train`` config of synthetic tones.

    Train rows use other source ids (``tone{s+50}``) so the two splits share no clip.
    """
    root = Path(root)
    hh.make_hub_folder(root, categories=categories, sources=sources, sr=sr, tiers=tiers, trajectories=trajectories)
    train = []
    for cat in categories:
        for r in hh.hub_rows(cat, sources=sources + 1, sr=sr, config_split="train", tiers=tiers,
                             trajectories=trajectories):
            sid = "tr" + r["source_id"]
            r.update(source_id=sid, sentence_id=sid,
                     id=vocalgrad.clip_id(sid, cat, r["trajectory"], r["tier"], r["direction"]))
            train.append(r)
    hh.write_config(root, "train", train, split="train")
    return root


@contextlib.contextmanager
def _layers(n: int):
    orig = hh._text_config

    def patched(vocab_size: int) -> dict:
        return {**orig(vocab_size), "num_hidden_layers": n}

    hh._text_config = patched
    try:
        yield
    finally:
        hh._text_config = orig


def build_tiny(arch: str, folder: Path, *, layers: int = TINY_LAYERS) -> Path:
    """Tiny random ``qwen2_audio`` or ``audioflamingo3`` with ``layers`` LM layers, saved to ``folder``."""
    builders = {"qwen2_audio": hh.build_tiny_qwen2_audio, "audioflamingo3": hh.build_tiny_audio_flamingo3}
    with _layers(layers):
        return builders[arch](Path(folder))


ARCHS = ("qwen2_audio", "audioflamingo3")


def loaded_encoder(name: str):
    """A built-in encoder with its packaged weights loaded; the test is skipped when its package is missing."""
    import pytest

    from analysis.probe.encoders import EncoderUnavailable, get_encoder

    enc = get_encoder(name)
    try:
        return enc.load()
    except EncoderUnavailable as exc:
        pytest.skip(str(exc))


def to_16k(y, sr: int):
    """``y`` resampled from ``sr`` to 16 kHz (the toolkit's resampler, as the encoders use it)."""
    from generation.audio import resample

    return resample(y, sr, 16000)
