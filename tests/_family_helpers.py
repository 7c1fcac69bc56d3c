"""Tiny random checkpoints of every model family (offline, CPU), saved with their processors.

``BUILDERS[family](folder) -> folder``. All sub-configs use ``initializer_range`` 0.2 so that
the audio visibly moves the logits of a random model.
"""

from __future__ import annotations

from pathlib import Path

import _harness_helpers as hh

BUILDERS = {
    "qwen2_audio": hh.build_tiny_qwen2_audio,
    "audioflamingo3": hh.build_tiny_audio_flamingo3,
}
