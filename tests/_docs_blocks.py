"""The fenced blocks of README.md and docs/*.md, and what the docs test does with each command in them.

Every ```bash``` (or ``sh``/``shell``) and ```python``` block is run by ``tests/test_docs_run.py``; other
languages (``text`` for synopses, layouts and prompts, ``json``, ``bibtex``, ...) are never run. A block can
carry markers, HTML comments on the lines right above its opening fence (invisible on the rendered page)::

    <!-- docs-test: skip: REASON -->                   the block is not run (REASON says why)
    <!-- docs-test: skip-line "TEXT": REASON -->         the commands containing TEXT are not run
    <!-- docs-test: output -->                          (on a ```text block) what the run block right
                                                        before it printed: each non-blank line of this
                                                        block must be a whole line of that output (spaces
                                                        collapsed; durations may differ, see VARYING), so
                                                        a shown table, count or size is true

Blocks run **as written**: nothing is substituted or appended. A command that needs what a reader may
lack is written twice in the document, visibly: the form that needs it (left out here, by rule or marker)
and the offline form beside it (``VOCALGRAD_DATASET=demo_out/hub ...``, ``--source demo --sources 1``).
Inside a bash block each command (continuation lines joined, comments dropped, ``&&`` split) is run in
order unless :func:`skip_reason` finds that it needs what a test machine lacks (network, GPU, weights,
a corpus at an absolute path, a placeholder): those are left out with the reason, the rest must succeed.
``python tests/_docs_blocks.py`` lists every block and the fate of each command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN_LANGS = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python"}
MARKER = re.compile(r"^<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(```+)\s*([\w+-]*)(?:\s+[^`]*)?$")  # an info string may follow the language

#: Commands that cannot run on a test machine, with the reason (first match wins).
SKIP_RULES = [
    (r"\bpip install\b|\bapt-get\b|\bgit clone\b|\bgit submodule\b|\bhf download\b",
     "installs or downloads software"),
    (r"\bvllm\b", "starts a vLLM server (GPU)"),
    (r"\bvocalgrad publish\b", "uploads to the Hugging Face Hub"),
    (r"\bvocalgrad listen\b", "serves the listening page until it is stopped"),
    (r"\bscripts/test\.sh\b", "is the test suite itself"),
    (r"\baccelerate launch\b|\btorchrun\b|--device cuda\b|device=cuda", "needs GPUs"),
    (r"\bvocalgrad-openai\b", "needs an OpenAI-compatible server or API key"),
    (r"\bvocalgrad-worker\b", "needs the model's own environment"),
    (r"\bynklab/vocalgrad\b", "reads the Hub dataset ynklab/vocalgrad"),
    (r"(?:^|\s)\.\.\.(?:\s|$)|\s\[", "is a synopsis with placeholders"),
    (r"(?:^|[\s:=])(/(?:data|path|envs)/\S*)", "needs {0} (a corpus, checkout or environment of the reader's)"),
    (r"(?:^|\s)([A-Z][A-Z_]*)(?=$|[\s/])", "has the placeholder {0}"),
    (r"\s--full\b", "renders all 21,600 clips"),
]
#: A vocalgrad-eval run that names no dataset reads the Hub dataset (checked after every other rule).
HUB_DATASET = re.compile(r"^(?!.*(?:VOCALGRAD_DATASET=|vocalgrad_dataset)).*\bvocalgrad-eval\b.*--tasks\s+vocalgrad")
HUB_MODEL = re.compile(r"(?:pretrained=|--model\s+|(?<![\w-])model=)([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)")


@dataclass
class Block:
    """One fenced block of a document."""

    doc: str                      # path relative to the repository root
    line: int                     # line of the opening fence (1-based)
    lang: str
    text: str
    skip: str | None = None       # reason, when a marker skips the block
    skip_lines: list[tuple[str, str]] = field(default_factory=list)
    output: bool = False          # the block shows what the run block before it printed

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def runner(self) -> str | None:
        return RUN_LANGS.get(self.lang)

    def prepared(self) -> str:
        """The text that runs: the block as written (there are no substitutions)."""
        return self.text


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _marker(block: Block, spec: str) -> None:
    kind, _, rest = spec.partition(":") if not spec.startswith("skip-line") else ("skip-line", "", spec[9:])
    kind, rest = kind.strip(), rest.strip()
    if kind == "skip":
        block.skip = rest or "marked skip"
    elif kind == "output":
        if block.runner:
            raise ValueError(f"{block.id}: a docs-test 'output' marker goes on the ```text block that shows "
                             "what the command block before it printed")
        block.output = True
    elif kind == "replace":
        raise ValueError(f"{block.id}: docs-test 'replace' markers are gone: a block runs as written; write the "
                         "offline form as its own command next to the one that needs the network or a corpus")
    elif kind == "skip-line" and (m := re.match(r'"([^"]+)"\s*:?\s*(.*)', rest)):
        block.skip_lines.append((m.group(1), m.group(2) or "marked skip-line"))
    else:
        raise ValueError(f"{block.id}: unknown docs-test marker {spec!r} (skip: / skip-line \"TEXT\": / output)")


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one markdown file with their markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        block = Block(str(path.relative_to(ROOT)), i + 1, lang, "\n".join(lines[i + 1:j]) + "\n")
        k = i - 1
        specs = []
        while k >= 0 and (mm := MARKER.match(lines[k])):
            specs.insert(0, mm.group(1))
            k -= 1
        for spec in specs:
            _marker(block, spec)
        out.append(block)
        i = j + 1
    return out


def _squeeze(text: str) -> str:
    return " ".join(text.split())


#: What legitimately differs between two runs of the same command, and is compared as a pattern: a
#: duration in seconds ("in 3.1 s", "done in 139 s"), which depends on the machine and its load. Nothing
#: else: counts, sizes, names and paths in a sample output must be what the command prints.
VARYING = [(re.compile(r"(?<![\w.])\d+(?:\.\d+)? s\b"), "<N> s")]


def _comparable(line: str) -> str:
    line = _squeeze(line)
    for pattern, stand_in in VARYING:
        line = pattern.sub(stand_in, line)
    return line


def missing_output(block: Block, printed: str) -> list[str]:
    """The lines of an ``output`` block that are not a whole line of what the command block before it
    printed (spaces collapsed, durations in :data:`VARYING` compared as a pattern)."""
    seen = {_comparable(line) for line in printed.splitlines()}
    return [line for line in block.text.splitlines() if line.strip() and _comparable(line) not in seen]


def all_blocks() -> list[Block]:
    return [b for p in documents() for b in blocks(p)]


def _strip_comment(line: str) -> str:
    """The line without a shell comment (a # outside quotes at the start or after a blank)."""
    quote = None
    for n, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (n == 0 or line[n - 1].isspace()):
            return line[:n].rstrip()
    return line.rstrip()


def _open_quote(text: str) -> bool:
    """Whether ``text`` ends inside a quoted string."""
    quote = None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
    return quote is not None


def commands(text: str) -> list[str]:
    """Logical commands of a bash block: continuations joined, comments dropped, split at top-level ``&&``."""
    logical, cur = [], ""
    for raw in text.splitlines():
        inside = bool(cur) and _open_quote(cur)
        line = raw if inside else _strip_comment(raw)
        line = line.lstrip() if cur and not inside else line
        if line.endswith("\\"):
            cur += line[:-1].rstrip() + " "
            continue
        cur += line
        if _open_quote(cur):              # a quoted argument spans lines (JSON model_args, python -c)
            cur += "\n"
            continue
        if cur.strip():
            logical.append(cur.strip())
        cur = ""
    if cur.strip():
        logical.append(cur.strip())
    out = []
    for cmd in logical:
        out += [c.strip() for c in re.split(r"\s&&\s", cmd) if c.strip()]
    return out


def skip_reason(cmd: str, block: Block) -> str | None:
    """Why a command cannot run on a test machine, or None."""
    for text, reason in block.skip_lines:
        if text in cmd:
            return reason
    code = re.match(r"python3? -c ", cmd)            # inline Python: its brackets and names are code
    for pattern, reason in SKIP_RULES:
        if code and ("placeholder" in reason or "synopsis" in reason):
            continue
        m = re.search(pattern, cmd)
        if m:
            return reason.format(*(m.groups() or ("",)))
    m = HUB_MODEL.search(cmd)
    if m and not Path(m.group(1)).exists():
        return f"needs the model weights {m.group(1)} from the Hub"
    if HUB_DATASET.search(cmd):
        return "reads the Hub dataset ynklab/vocalgrad (no VOCALGRAD_DATASET; the page shows the offline form)"
    return None


def plan(block: Block) -> list[tuple[str, str | None]]:
    """(command, reason it is left out or None) for every command of a runnable bash block."""
    out: list[tuple[str, str | None]] = []
    for cmd in commands(block.prepared()):
        why = skip_reason(cmd, block)
        if why is None and re.match(r"cd\s", cmd) and any(w for _, w in out):
            why = "changes into what a skipped step makes"
        out.append((cmd, why))
    return out


if __name__ == "__main__":
    for b in all_blocks():
        if not b.runner:
            print(f"{b.id} [{b.lang or 'no language'}] not run")
        elif b.skip:
            print(f"{b.id} [{b.lang}] SKIPPED: {b.skip}")
        elif b.runner == "python":
            print(f"{b.id} [python] run")
        else:
            print(f"{b.id} [bash]")
            for cmd, why in plan(b):
                print(f"    {'skip' if why else 'run '} {cmd[:110]}" + (f"   <- {why}" if why else ""))
