"""Every command that writes to a path the user names, as its argv for an output path OUT (RES: a results
folder, DATA: a data folder, CLIP: a clip id); ``ext_tasks``/``sweep_tasks`` take OUT as their only argument.
Shared by the writer audits (tests/test_faults_writers.py, tests/test_faults_outputs.py)."""

OUT_WRITERS = {
    "report": ["report", "RES", "--out", "OUT", "--draws", "20", "--no-plots"],
    "leaderboard": ["leaderboard", "RES", "--out", "OUT"],
    "demo": ["demo", "--out", "OUT"],
    "probe": ["probe", "--data", "DATA", "--model", "m", "--out", "OUT"],
    "finetune": ["finetune", "--data", "DATA", "--model", "m", "--category", "volume", "--out", "OUT"],
    "align": ["align", "--data", "DATA", "--model", "m", "--out", "OUT"],
    "transfer": ["transfer", "--data", "DATA", "--model", "m", "--out", "OUT"],
    "finetune-report": ["finetune-report", "DATA", "--out", "OUT"],
    "listen --answers": ["listen", "DATA", "--annotator", "a", "--answers", "OUT"],
    "show": ["show", "CLIP", "--data", "DATA", "--out", "OUT"],
    "ext_tasks": [],
    "sweep_tasks": [],
    "vocalgrad-eval --output_path": ["--model", "vocalgrad-oracle", "--tasks", "vocalgrad", "--output_path", "OUT"],
}
