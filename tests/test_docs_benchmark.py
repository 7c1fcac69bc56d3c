"""docs/benchmark.md is the project's own definition: §1-§11 exist, and every "benchmark.md §N" resolves."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmark.md"
SECTIONS = ["1", "2", "3", "4", "4a", "5", "6", "7", "8", "9", "10", "11"]


def _slug(heading: str) -> str:
    """GitHub's anchor of a markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _headings():
    text = DOC.read_text(encoding="utf-8")
    return re.findall(r"^#{2,3} (\d+a?)\. (.+)$", text, flags=re.M)


def _project_files():
    """The project's own text files (not a virtual environment or build folder inside the checkout)."""
    roots = ["generation", "harness_tasks", "analysis", "vocalgrad_commands", "benchmarks", "tests", "docs", "scripts"]
    files = [ROOT / "vocalgrad.py", ROOT / "README.md", ROOT / "dataset_card.md"]
    for root in roots:
        files += [p for ext in ("py", "md", "yaml") for p in (ROOT / root).rglob(f"*.{ext}")]
    return [p for p in files if p.is_file() and "__pycache__" not in p.parts]


def test_sections_1_to_11_in_order():
    assert [n for n, _ in _headings()] == SECTIONS


def test_every_section_reference_in_the_project_exists():
    known = {n for n, _ in _headings()}
    cited = set()
    for path in _project_files():
        for m in re.finditer(r"benchmark\.md §(\d+a?)((?:[–/-]§\d+a?)*)", path.read_text(encoding="utf-8")):
            refs = [m.group(1)] + re.findall(r"§(\d+a?)", m.group(2))
            cited.update(refs)
            missing = [r for r in refs if r not in known]
            assert not missing, f"{path.relative_to(ROOT)} cites benchmark.md §{missing} which does not exist"
    assert {"4a", "7", "10"} <= cited  # the scan really found the project's references


def test_markdown_links_to_benchmark_md_resolve():
    anchors = {_slug(f"{n}. {t}") for n, t in _headings()}
    links = 0
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for target, anchor in re.findall(r"\]\(((?:docs/)?benchmark\.md)(?:#([^)]+))?\)", path.read_text("utf-8")):
            assert (path.parent / target).resolve() == DOC, f"{path.name}: link {target} does not reach docs/benchmark.md"
            assert not anchor or anchor in anchors, f"{path.name}: anchor #{anchor} is not a heading of benchmark.md"
            links += 1
    assert links >= 5


def test_prompt_in_the_doc_is_the_real_prompt():
    import vocalgrad
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"\*\*Prompt\.\*\*.*?```\w*\n(.*?)```", text, flags=re.S).group(1).rstrip("\n")
    assert block.replace("{attribute}", "echo") == vocalgrad.default_prompt("echo")
