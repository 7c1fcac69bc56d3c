"""``vocalgrad transfer``: a labelled multiple-choice audio classification task, scored by logits
(paper Table 22; benchmark.md §11).

For each clip the prompt lists the classes as options A, B, C ... and asks for the letter
(``"What is the speaker's {task} in this audio?\\n\\nOptions:\\nA. anger\\n...\\n\\nAnswer with only
the option letter."``, the question as in the paper's MELD emotion run); the clip follows the
text as at evaluation. The prediction is the argmax over the logits of the single letter tokens
``" A"``, ``" B"`` ... at the final input position (ties to the first option); if the tokenizer
has no single-token spelling with a leading space, the bare letters ``"A"`` ... are used and the
report says so. Scores: per-class precision / recall / F1 and their unweighted means, with
``zero_division = 0`` (:mod:`.transfer_metrics`).

Data: ``hf:NAME`` (anything ``datasets.load_dataset`` opens: a repo id or a local folder of
parquet / audio files) with an audio column and a label column, or ``folder:DIR`` with a CSV of
``file,label`` rows (``--labels``; files relative to ``DIR``).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from analysis.cli_options import add_command, add_model_arguments, add_run_arguments
from generation.audio import atomic_write_text
from generation.option_types import comma_text

from .transfer_metrics import argmax_first, classification_scores

__all__ = ["TransferSet", "letter_token_ids", "load_transfer_set", "mc_prompt", "register_cli", "run_transfer"]

#: The paper's MELD emotion classes (option order A-G).
MELD_EMOTIONS: tuple[str, ...] = ("anger", "disgust", "fear", "joy", "neutral", "sadness", "surprise")


def mc_prompt(classes, *, task: str = "emotion", question: str | None = None) -> str:
    """Multiple-choice prompt: question, lettered options, answer instruction."""
    classes = list(classes)
    if not 2 <= len(classes) <= 26:
        raise ValueError(f"need 2 to 26 classes, got {len(classes)}")
    q = question or f"What is the speaker's {task} in this audio?"
    options = "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(classes))
    return f"{q}\n\nOptions:\n{options}\n\nAnswer with only the option letter."


def letter_token_ids(tokenizer, n: int) -> tuple[list[int], str]:
    """Token ids of the option letters: ``" A"`` ... if each is one token, else ``"A"`` ....

    Returns
    -------
    (ids, spelling) : (list of int, str)
        ``spelling`` is ``"space"`` or ``"bare"``.

    Raises
    ------
    ValueError
        If neither spelling gives one distinct token per letter.
    """
    for spelling, prefix in (("space", " "), ("bare", "")):
        ids = []
        for i in range(n):
            toks = tokenizer(prefix + chr(65 + i), add_special_tokens=False)["input_ids"]
            if len(toks) != 1:
                break
            ids.append(int(toks[0]))
        if len(ids) == n and len(set(ids)) == n:
            return ids, spelling
    raise ValueError("the tokenizer has no single-token spelling of the option letters (' A' or 'A')")


@dataclass
class TransferSet:
    """Clips and gold labels of a transfer task."""

    ids: list[str]
    labels: list[str]
    classes: list[str]
    source: str
    _audio: Any = None           # callable i -> (wave, sr)

    def __len__(self) -> int:
        return len(self.ids)

    def audio(self, i: int) -> tuple[np.ndarray, int]:
        return self._audio(i)


def _classes(labels, classes) -> list[str]:
    if classes:
        return list(classes)
    return sorted(set(labels))


def load_transfer_set(data: str, *, labels: str | None = None, classes=None, split: str = "test",
                      config: str | None = None, audio_column: str = "audio", id_column: str | None = None,
                      limit: int | None = None) -> TransferSet:
    """Open ``hf:NAME`` or ``folder:DIR`` (see the module docstring).

    ``labels`` is the label column for ``hf:`` (default ``label``) and the CSV for ``folder:``.
    ``classes`` fixes the option order (default: the sorted gold labels).
    """
    from harness_tasks.clip_audio import decode_audio

    if data.startswith("folder:"):
        root = Path(data[len("folder:"):]).expanduser()
        if not labels:
            raise ValueError("folder: data needs --labels CSV (columns file,label)")
        from generation.user_files import read_text

        rows = list(csv.DictReader(io.StringIO(read_text(labels, "a labels CSV with columns file,label"), newline="")))
        if not rows or not {"file", "label"} <= set(rows[0]):
            raise ValueError(f"{labels}: expected a CSV with columns file,label")
        rows = rows[:limit]
        from generation.contained import outside_reason

        for i, r in enumerate(rows):
            why = outside_reason(root, r["file"], links=False)
            if why:
                raise ValueError(f"{labels}, row {i + 2}: file {why}; list files relative to {root}")
        files = [root / r["file"] for r in rows]
        missing = [str(p) for p in files if not p.is_file()]
        if missing:
            raise FileNotFoundError(f"{labels}: {len(missing)} listed files do not exist, e.g. {missing[0]}")
        gold = [r["label"].strip() for r in rows]
        return TransferSet(ids=[r["file"] for r in rows], labels=gold, classes=_classes(gold, classes),
                           source=data, _audio=lambda i: decode_audio(str(files[i]), name=str(files[i])))
    if data.startswith("hf:"):
        import datasets

        name = data[len("hf:"):]
        col = labels or "label"
        try:
            ds = datasets.load_dataset(name, config, split=split)
        except Exception as exc:
            raise RuntimeError(f"cannot load {name!r} split {split!r} ({type(exc).__name__}: {exc})") from exc
        for c in (audio_column, col):
            if c not in ds.column_names:
                raise ValueError(f"{name}: no column {c!r} (columns: {ds.column_names}); see --audio-column/--labels")
        if isinstance(ds.features[audio_column], datasets.Audio):
            ds = ds.cast_column(audio_column, datasets.Audio(decode=False))
        if limit:
            ds = ds.select(range(min(limit, len(ds))))
        feat = ds.features[col]
        gold = [feat.int2str(v) if isinstance(feat, datasets.ClassLabel) else str(v) for v in ds[col]]
        ids = [str(v) for v in ds[id_column]] if id_column else [str(i) for i in range(len(ds))]
        return TransferSet(ids=ids, labels=gold, classes=_classes(gold, classes), source=data,
                           _audio=lambda i: decode_audio(ds[i][audio_column], name=f"{name}[{i}]"))
    raise ValueError(f"--data must start with hf: or folder:, got {data!r}")


def run_transfer(*, model: str, data: TransferSet, out, adapter: str | None = None, task: str = "emotion",
                 question: str | None = None, batch_size: int = 8, device: str = "auto", dtype: str = "auto",
                 audio_first: bool = False, system_prompt: str | None = None, trust_remote_code: bool = False,
                 progress: bool = True, lm=None) -> dict:
    """Score one model (optionally with a LoRA adapter) on a transfer set; write ``transfer.json``,
    ``predictions.csv`` and ``transfer.md`` to ``out``."""
    from tqdm.auto import tqdm

    from harness_tasks.models.families import Item, load

    unknown = sorted(set(data.labels) - set(data.classes))
    if unknown:
        raise ValueError(f"{data.source}: gold labels {unknown} are not among the classes {data.classes}")
    if lm is None:
        lm = load(model, dtype=dtype, device=device, trust_remote_code=trust_remote_code, peft=adapter)
    prompt = mc_prompt(data.classes, task=task, question=question)
    tok_ids, spelling = letter_token_ids(lm.tokenizer, len(data.classes))
    scores = []
    for start in tqdm(range(0, len(data), batch_size), desc="transfer", disable=not progress):
        rows = range(start, min(start + batch_size, len(data)))
        batch = lm.batch([Item(prompt, [data.audio(i)], audio_first=audio_first, system=system_prompt)
                          for i in rows])
        scores.append(lm.logits(batch)[:, tok_ids].numpy())
    s = np.concatenate(scores)
    pred = [data.classes[k] for k in argmax_first(s)]
    res = classification_scores(data.labels, pred, data.classes)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    info = {"model": str(model), "adapter": str(adapter) if adapter else None, "data": data.source,
            "classes": data.classes, "letters": [chr(65 + i) for i in range(len(data.classes))],
            "letter_tokens": spelling, "prompt": prompt, "audio_first": audio_first, **res}
    _write(out / "transfer.json", json.dumps(info, indent=2))
    lines = ["id,gold,pred," + ",".join(f"logit_{chr(65 + i)}" for i in range(len(data.classes)))]
    lines += [",".join([_csv(cid), _csv(g), _csv(p)] + [f"{v:.6g}" for v in row])
              for cid, g, p, row in zip(data.ids, data.labels, pred, s)]
    _write(out / "predictions.csv", "\n".join(lines) + "\n")
    _write(out / "transfer.md", transfer_markdown([info]))
    return info


def _csv(v: str) -> str:
    return '"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n') else v


def _write(path: Path, text: str) -> None:
    atomic_write_text(path, text)


def transfer_markdown(results: list[dict]) -> str:
    """Table 22 layout: one row per model/adapter, macro P/R/F1, then per-class F1."""
    if not results:
        return ""
    classes = results[0]["classes"]
    head = "| model | adapter | n | macro P | macro R | macro F1 | " + " | ".join(f"F1 {c}" for c in classes) + " |"
    lines = [head, "|" + "---|" * (6 + len(classes))]
    for r in results:
        adapter = Path(r["adapter"]).parent.name if r.get("adapter") else "base"
        pc = r["per_class"]
        lines.append(f"| {r['model']} | {adapter} | {r['n']} | {100 * r['macro_precision']:.1f} | "
                     f"{100 * r['macro_recall']:.1f} | {100 * r['macro_f1']:.1f} | "
                     + " | ".join(f"{100 * pc[c]['f1']:.1f}" for c in classes) + " |")
    note = ("" if all(r.get("letter_tokens") == "space" for r in results)
            else "\nLetter tokens: bare 'A'... (the tokenizer has no single-token ' A').\n")
    return "\n".join(lines) + "\n" + note


def register_cli(subparsers) -> None:
    """Add ``vocalgrad transfer --model M [--adapter DIR] --data hf:...|folder:... --out DIR``."""
    p = add_command(
        subparsers, "transfer", _run_cli,
        help="multiple-choice transfer task scored by option-letter logits (paper Table 22)",
        description="""Score a model (and optionally a LoRA adapter from `vocalgrad finetune`) on a labelled
            multiple-choice audio classification set: options A, B, ..., prediction = argmax of the letter-token
            logits at the final input position; per-class P/R/F1 and macro means. See docs/finetune.md.""")
    add_model_arguments(p)
    p.add_argument("--data", required=True, metavar="hf:NAME|folder:DIR",
                   help="labelled audio set: a datasets source (hf:NAME, a local dataset) or a folder of clips")
    p.add_argument("--labels", metavar="CSV_OR_COLUMN",
                   help="folder: a CSV with columns file,label; hf: the label column (default label)")
    p.add_argument("--classes", type=comma_text, metavar="LIST", help="comma-separated classes in option order (default: sorted "
                   "gold labels; the paper's MELD order is " + ",".join(MELD_EMOTIONS) + ")")
    p.add_argument("--task", default="emotion", help="word in the question (default %(default)s)")
    p.add_argument("--question", help="replace the whole question line")
    p.add_argument("--split", default="test", help="hf: split (default %(default)s)")
    p.add_argument("--config", help="hf: config name")
    p.add_argument("--audio-column", default="audio", help="hf: the audio column (default %(default)s)")
    p.add_argument("--id-column", help="hf: column with clip ids (default: row numbers)")
    p.add_argument("--limit", type=int, help="first N clips only")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    add_run_arguments(p)


def _run_cli(args) -> int:
    ts = load_transfer_set(args.data, labels=args.labels, split=args.split, config=args.config,
                           classes=[c.strip() for c in args.classes.split(",")] if args.classes else None,
                           audio_column=args.audio_column, id_column=args.id_column, limit=args.limit)
    res = run_transfer(model=args.model, adapter=args.adapter, data=ts, out=args.out, task=args.task,
                       question=args.question, batch_size=args.batch_size, device=args.device,
                       dtype=args.dtype, audio_first=args.audio_first, system_prompt=args.system_prompt,
                       trust_remote_code=args.trust_remote_code, progress=not args.quiet)
    print(f"{res['n']} clips, {len(res['classes'])} classes: macro-F1 {100 * res['macro_f1']:.1f}, "
          f"macro-P {100 * res['macro_precision']:.1f}, macro-R {100 * res['macro_recall']:.1f}, "
          f"accuracy {100 * res['accuracy']:.1f}")
    print(f"wrote {args.out}/transfer.json, predictions.csv, transfer.md")
    return 0
