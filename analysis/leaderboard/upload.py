"""Push a leaderboard folder to the Hub: the page as a static Space, the runs as a results dataset.

Both pushes are one ``huggingface_hub`` commit each, built from :class:`huggingface_hub.CommitOperationAdd`
operations. :func:`plan` builds exactly the operations :func:`push` sends, so ``--dry-run`` (which
needs no token and no network) shows what a push would upload, file by file, with size and sha256.
"""

from __future__ import annotations

import re
from pathlib import Path

from generation.identity import sha256_file

from .page import RESULTS_CARD, RUNS, SPACE_CARD
from .runs import LeaderboardError

__all__ = ["plan", "push"]

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
#: Files of the Space (path in the folder = path in the repo).
SPACE_FILES = ("index.html", "leaderboard.json", "leaderboard.csv", SPACE_CARD)


def plan(folder, *, space: str | None = None, results: str | None = None) -> list[dict]:
    """The commits a push would make: one dict per repo with its ``operations``.

    Returns
    -------
    list of dict
        ``{"repo_id", "repo_type", "operations": [CommitOperationAdd, ...], "files": [{"path_in_repo",
        "bytes", "sha256"}, ...]}``; the Space first.
    """
    from huggingface_hub import CommitOperationAdd

    root = Path(folder)
    if not (root / "leaderboard.json").is_file():
        raise LeaderboardError(f"{root}: not a leaderboard folder (no leaderboard.json); make it with "
                               f"`vocalgrad leaderboard RESULTS... --out {root}`")
    from generation.contained import inside
    from generation.ownership import read_marker

    listed = (read_marker(root) or {}).get("files")
    runs = (sorted(r for r in listed if r.startswith(f"{RUNS}/")) if isinstance(listed, dict)  # what it wrote
            else [f"{RUNS}/{p.name}" for p in sorted((root / RUNS).glob("*.json"))])  # an earlier version's folder
    where = f"{root} (files to upload)"
    commits = []
    for repo_id, repo_type, pairs in (
            (space, "space", [(f, inside(root, f, source=where)) for f in SPACE_FILES]),
            (results, "dataset", [("README.md", inside(root, RESULTS_CARD, source=where))]
             + [(r, inside(root, r, source=where)) for r in runs])):
        if not repo_id:
            continue
        if not _REPO_ID.match(repo_id):
            raise LeaderboardError(f"repo id must be ORG/NAME (letters, digits, '.', '_', '-'), got {repo_id!r}")
        missing = [str(p) for _, p in pairs if not p.is_file()]
        if missing:
            raise LeaderboardError(f"{root}: missing {', '.join(missing)}; rerun `vocalgrad leaderboard`")
        ops = [CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(p)) for name, p in pairs]
        files = [{"path_in_repo": name, "bytes": p.stat().st_size, "sha256": sha256_file(p)} for name, p in pairs]
        commits.append({"repo_id": repo_id, "repo_type": repo_type, "operations": ops, "files": files})
    return commits


def push(folder, *, space: str | None = None, results: str | None = None, token: str | None = None) -> list[str]:
    """Create the repos if needed and send the commits of :func:`plan`; returns the commit URLs."""
    import huggingface_hub
    from huggingface_hub import HfApi, constants

    commits = plan(folder, space=space, results=results)
    token = token or huggingface_hub.get_token()
    if not token:
        raise LeaderboardError("no Hugging Face token found: set HF_TOKEN or run `hf auth login` (a write token "
                               "is needed); --dry-run shows the upload without one")
    if constants.HF_HUB_OFFLINE:
        raise LeaderboardError("HF_HUB_OFFLINE is set; unset it to push (or use --dry-run)")
    api = HfApi(token=token)
    urls = []
    for c in commits:
        try:
            extra = {"space_sdk": "static"} if c["repo_type"] == "space" else {}
            api.create_repo(c["repo_id"], repo_type=c["repo_type"], exist_ok=True, **extra)
            info = api.create_commit(c["repo_id"], repo_type=c["repo_type"], operations=c["operations"],
                                     commit_message=f"vocalgrad leaderboard: {len(c['operations'])} files")
        except Exception as exc:  # never echo the token
            raise LeaderboardError(f"push to {c['repo_id']} failed: {type(exc).__name__}: "
                                   f"{str(exc).replace(token, '***')}") from None
        urls.append(str(getattr(info, "commit_url", info)))
    return urls
