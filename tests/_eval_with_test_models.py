"""``vocalgrad-eval`` with test-only adapters registered (run as a script by the tests).

``vocalgrad-test-counting``: the oracle's answers, but every clip handed to the model is
appended (fsync-ed) to ``counter=<file>`` first; ``delay=<s>`` slows each batch down;
``fail_ids=<id>|<id>`` makes those clips raise inside ``answer()``; ``hold=<file>`` makes ``answer()``
wait until that file exists (to line processes up, or to keep one busy until it is killed).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness_tasks.models.oracle import OracleLM  # noqa: E402


class CountingLM(OracleLM):
    IDENTITY_EXCLUDE = OracleLM.IDENTITY_EXCLUDE | {"counter", "delay", "fail_ids", "hold"}

    def __init__(self, *, counter: str, delay: Any = 0.0, fail_ids: str = "", hold: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.counter, self.delay = counter, float(delay)
        self.fail_ids = set(filter(None, str(fail_ids or "").split("|")))
        self.hold = Path(hold) if hold else None

    def answer(self, queries):
        while self.hold is not None and not self.hold.exists():
            time.sleep(0.05)
        with open(self.counter, "a") as fh:
            for q in queries:
                fh.write(q.clip_id + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        bad = [q.clip_id for q in queries if q.clip_id in self.fail_ids]
        if bad:
            raise RuntimeError(f"scripted failure for {bad}")
        time.sleep(self.delay)
        return super().answer(queries)


if __name__ == "__main__":
    from lm_eval.api.registry import model_registry

    from harness_tasks import register_models
    from harness_tasks.cli import main

    register_models()
    if "vocalgrad-test-counting" not in model_registry:
        model_registry.register("vocalgrad-test-counting", target=CountingLM)
    sys.exit(main(sys.argv[1:]))
