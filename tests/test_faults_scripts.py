"""Benchmarks and scripts are commands too: their options are checked by the parser (types and ranges)
and their output folder before the work, in one error line, exit 2 (was: `calibration.py --sources -3`
a traceback; `--out` an existing file ran the whole simulation, 194 s, then a traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from _timing import hang_guard

ROOT = Path(__file__).resolve().parent.parent

#: (script, arguments, what the error line says); FILE is an existing file of the user's.
CASES = [
    ("benchmarks/calibration.py", ["--sources", "-3"], "argument --sources: invalid choice: -3 (choose from 2, 5, 20, 100)"),
    ("benchmarks/calibration.py", ["--sources", "2", "7"], "argument --sources: invalid choice: 7"),
    ("benchmarks/calibration.py", ["--workers", "0"], "argument --workers: must be >= 1, got 0"),
    ("benchmarks/calibration.py", ["--draws", "x"], "argument --draws: must be a whole number >= 1, got 'x'"),
    ("benchmarks/calibration.py", ["--out", "FILE"], "argument --out: FILE: an existing file, where a folder is written"),
    ("benchmarks/calibration.py", ["--out", "FILE/sub"], "argument --out: FILE/sub: FILE is a file, not a folder"),
    ("benchmarks/device_check.py", ["--out", "FILE"], "argument --out: FILE: an existing file"),
    ("benchmarks/device_check.py", ["--families", ","], "argument --families: names nothing"),
    ("benchmarks/finetune_speed.py", ["--clips", "0"], "argument --clips: must be >= 1, got 0"),
    ("benchmarks/finetune_speed.py", ["--scopes", ""], "argument --scopes: names nothing"),
    ("benchmarks/harness_overhead.py", ["--clips", "100"], "argument --clips: must be two different sizes"),
    ("benchmarks/harness_overhead.py", ["--seconds", "0"], "argument --seconds: must be > 0, got 0"),
    ("benchmarks/harness_overhead.py", ["--sr", "100"], "argument --sr: must be 8000-655350 Hz"),
    ("benchmarks/human_row_coverage.py", ["--clip-sd", "0"], "argument --clip-sd: must be > 0, got 0"),
    ("benchmarks/identity_cost.py", ["--jobs", "0"], "argument --jobs: must be >= 1, got 0"),
    ("benchmarks/lmms_side_by_side.py", ["--batches", "1,0"], "argument --batches: must be >= 1, got 0"),
    ("benchmarks/load_speed.py", ["--repeats", "0"], "argument --repeats: must be >= 1, got 0"),
    ("benchmarks/model_throughput.py", ["--seconds", "nan"], "argument --seconds: must be a finite number, got 'nan'"),
    ("benchmarks/model_throughput.py", ["--batches", "8,x"], "argument --batches: must be a whole number >= 1, got 'x'"),
    ("benchmarks/probe_speed.py", ["--dims", ","], "argument --dims: names nothing"),
    ("benchmarks/probe_speed.py", ["--n-test", "-1"], "argument --n-test: must be >= 1, got -1"),
    ("benchmarks/psychometric_pseudo_true.py", ["--sims", "0"], "argument --sims: must be >= 1, got 0"),
    ("benchmarks/render_speed.py", ["--categories", ","], "argument --categories: names nothing"),
    ("benchmarks/report_html_speed.py", ["--max-clips", "0"], "argument --max-clips: must be >= 1, got 0"),
    ("benchmarks/sweep_report_cost.py", ["--cpus", "0,all"], "argument --cpus: must be >= 1, got 0"),
    ("benchmarks/sweep_report_cost.py", ["--keep", "FILE"], "argument --keep: FILE: an existing file"),
    ("benchmarks/uneven_categories_coverage.py", ["--sims", "0"], "argument --sims: must be >= 1, got 0"),
    ("benchmarks/uneven_categories_coverage.py", ["--sources", "19"], "argument --sources: every run needs at least 20"),
    ("benchmarks/uneven_categories_coverage.py", ["--small", "21", "--sources", "20"],
     "argument --sources: every run needs at least 20 voices and at least --small's 21"),
    ("scripts/make_demo_voices.py", ["--out", "FILE"], "argument --out: FILE: an existing file"),
    ("scripts/plant_mistakes.py", ["0"], "argument N: must be >= 1, got 0"),
    ("scripts/plant_mistakes.py", ["1000"], "argument N: there are"),
    ("scripts/fingerprint.py", ["FILE"], "FILE: no render below it (no manifest.parquet)"),
    ("scripts/fingerprint.py", [".", "--against", "FILE"], "--against FILE: not a readable fingerprint JSON"),
]


@pytest.mark.parametrize("script,args,said", CASES, ids=[f"{c[0].split('/')[1]} {' '.join(c[1])}" for c in CASES])
def test_a_bad_option_of_a_benchmark_or_script_is_one_error_line_before_the_work(script, args, said, tmp_path):
    user_file = tmp_path / "FILE"
    user_file.write_bytes(b"\xffthe user's file\n")
    args = [a.replace("FILE", str(user_file)) for a in args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(ROOT / script), *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=hang_guard(300))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert lines[-1].startswith(f"{Path(script).name}: error: ") and said.replace("FILE", str(user_file)) in lines[-1], \
        lines
    # argparse's usage, one error line (make_demo_voices notes a missing speech engine at import)
    assert len([x for x in lines if not x.startswith(("usage:", " ", "note: "))]) == 1, lines
    assert user_file.read_bytes() == b"\xffthe user's file\n" and sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


def test_calibration_takes_the_near_misses_of_its_checks(tmp_path, monkeypatch):
    """A design's number of sources, one worker, a new --out folder and an existing one pass the parser."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import calibration as cal

    class Parsed(Exception):
        pass

    def gather(quick, draws, sources=None):
        raise Parsed(quick, draws, sources)
    monkeypatch.setattr(cal, "gather_cells", gather)
    (tmp_path / "old").mkdir()
    for out in ("new", "old", "new/deeper"):
        with pytest.raises(Parsed) as got:
            cal.main(["--sources", "2", "100", "--workers", "1", "--draws", "1", "--out", str(tmp_path / out)])
        assert got.value.args == (False, 1, [2, 100])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]  # the parser wrote nothing
