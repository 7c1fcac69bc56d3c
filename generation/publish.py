"""Upload a Hub folder made by ``vocalgrad hub`` to the Hugging Face Hub (``vocalgrad publish``).

The token comes from ``huggingface_hub`` (``HF_TOKEN`` or ``hf auth login``) and is never
printed. Everything that can be checked locally is checked before the first request: the token
exists, the folder looks like a VocalGrad Hub folder, and it holds no ``.py`` file.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from vocalgrad import VocalGradError

from .render_dir import RenderDir

__all__ = ["PublishError", "check_hub_folder", "publish", "retarget_card", "register_cli"]

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


class PublishError(VocalGradError, RuntimeError):
    """Publishing cannot start or failed; the message says what to do."""


def check_hub_folder(hub_dir) -> list[str]:
    """Files to upload from ``hub_dir`` (relative POSIX paths, sorted).

    Raises
    ------
    PublishError
        If ``README.md`` with a YAML ``configs:`` header is missing, a ``.py`` file is present
        (``datasets`` >= 4 refuses such repos), there are no parquet shards, or a file is a symbolic
        link leading outside the folder (never uploaded).
    """
    root = Path(hub_dir)
    if not root.is_dir():
        raise PublishError(f"{root}: no such folder; build it with `vocalgrad hub DIR --out {root}`")
    if RenderDir.looks_like(root):
        raise PublishError(f"{root} is a render folder, not a Hub folder: build the Hub folder first with "
                           f"`vocalgrad hub {root} --out HUB`, then `vocalgrad publish HUB --repo ORG/NAME`")
    problems = []
    readme = root / "README.md"
    if not readme.is_file():
        problems.append(f"{readme}: missing (the dataset card with the configs)")
    else:
        head = readme.read_text(encoding="utf-8", errors="replace")
        if not head.startswith("---\n") or "\nconfigs:\n" not in head.split("\n---\n", 1)[0]:
            problems.append(f"{readme}: no YAML header with `configs:`; rebuild with `vocalgrad hub`")
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    from .contained import outside_reason

    out = [why for why in (outside_reason(root, f) for f in files) if why]
    if out:  # a link to ~/.ssh/id_rsa planted in the folder is never uploaded
        problems.append(f"{out[0]}{f' (and {len(out) - 1} more)' if len(out) > 1 else ''}; publish uploads only "
                        "files inside the folder: remove the link or copy the file in")
    scripts = [f for f in files if f.endswith(".py")]
    if scripts:
        problems.append(f"loading scripts are refused by datasets>=4; remove {', '.join(scripts)}")
    if not any(f.endswith(".parquet") for f in files):
        problems.append(f"{root}: no parquet shards")
    hidden = [f for f in files if any(part.startswith(".") for part in f.split("/"))]
    if problems:
        raise PublishError("cannot publish:\n  " + "\n  ".join(problems))
    return [f for f in files if f not in hidden]


def publish(hub_dir, repo_id: str, *, private: bool = False, revision: str | None = None,
            token: str | None = None, commit_message: str | None = None) -> str:
    """Create ``repo_id`` if needed and upload ``hub_dir`` to it.

    Parameters
    ----------
    hub_dir : path-like
        Folder written by ``vocalgrad hub``.
    repo_id : str
        ``ORG/NAME`` of the dataset repo.
    private : bool
        Create the repo as private (an existing repo keeps its visibility).
    revision : str, optional
        Branch to commit to (created from ``main`` if missing); default ``main``.
    token : str, optional
        Hub token; default: the one ``huggingface_hub`` finds (``HF_TOKEN``, stored login).
    commit_message : str, optional
        Summary of the commit.

    Returns
    -------
    str
        URL of the (last) commit.

    Notes
    -----
    One ``upload_folder`` call, which also deletes shards of an earlier upload that the folder no
    longer has. With ``hf_xet`` installed (the default of ``huggingface_hub`` >= 1) it streams the
    files, commits large folders in several batches and resumes when re-run after an interruption;
    without ``hf_xet`` it makes one commit through the LFS protocol.

    Raises
    ------
    PublishError
        Before any request when the token is missing, ``repo_id`` is malformed, the Hub is set
        offline or the folder is unusable; after, when the Hub refuses (message without token).
    """
    if not _REPO_ID.match(repo_id or ""):
        raise PublishError(f"--repo must be ORG/NAME (letters, digits, '.', '_', '-'), got {repo_id!r}")
    files = check_hub_folder(hub_dir)
    import huggingface_hub
    from huggingface_hub import HfApi, constants

    token = token or huggingface_hub.get_token()
    if not token:
        raise PublishError(
            "no Hugging Face token found: set HF_TOKEN or run `hf auth login` (a write token is needed)")
    if constants.HF_HUB_OFFLINE:
        raise PublishError("HF_HUB_OFFLINE is set; unset it to publish")
    if retarget_card(hub_dir, repo_id):  # the card's loading examples name the repo it is published to
        print(f"vocalgrad publish: the card's examples now load {repo_id!r}", file=sys.stderr)
    api = HfApi(token=token)
    message = commit_message or f"Upload VocalGrad ({sum(f.endswith('.parquet') for f in files)} parquet shards)"
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if revision and revision != "main":
            api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
        info = api.upload_folder(
            repo_id=repo_id, folder_path=str(hub_dir), repo_type="dataset", revision=revision,
            commit_message=message, allow_patterns=files, delete_patterns=["*.parquet"],
        )
    except Exception as exc:  # huggingface_hub raises many types; never echo headers or the token
        text = str(exc).replace(token, "***")
        raise PublishError(f"upload to {repo_id} failed: {type(exc).__name__}: {text}") from None
    return str(info.commit_url if hasattr(info, "commit_url") else info)


def retarget_card(hub_dir, repo_id: str) -> bool:
    """Make the card's loading examples name ``repo_id`` (rewrites ``HUB/README.md``); True if it changed."""
    from . import audio as aio
    from .card import retarget_repo_id
    from .ownership import record_rewrite

    readme = Path(hub_dir) / "README.md"
    raw = readme.read_bytes()
    text = raw.decode("utf-8")
    new = retarget_repo_id(text, repo_id)
    if new == text:
        return False
    aio.atomic_write_bytes(readme, new.encode("utf-8"))
    record_rewrite(hub_dir, "README.md", raw, new.encode("utf-8"))  # still the build's own card
    return True


def register_cli(subparsers) -> None:
    """Add ``vocalgrad publish HUB --repo ORG/NAME [--private] [--revision REV]``."""
    p = subparsers.add_parser(
        "publish", help="upload a Hub folder to the Hugging Face Hub",
        description="Create the dataset repo if needed and upload the folder written by `vocalgrad hub`. "
                    "Needs a write token (HF_TOKEN or `hf auth login`). See docs/hub.md.",
    )
    p.add_argument("hub_dir", metavar="HUB", help="folder written by `vocalgrad hub`")
    p.add_argument("--repo", required=True, metavar="ORG/NAME", help="dataset repo id")
    p.add_argument("--private", action="store_true", help="create the repo as private")
    p.add_argument("--revision", metavar="BRANCH", help="branch to commit to (created if missing; default main)")
    p.add_argument("--message", help="commit summary")
    p.set_defaults(func=_run_cli)


def _run_cli(args) -> int:
    try:
        url = publish(args.hub_dir, args.repo, private=args.private, revision=args.revision,
                      commit_message=args.message)
    except PublishError as exc:
        print(f"vocalgrad publish: {exc}", file=sys.stderr)
        return 2
    print(f"published {args.hub_dir} -> {url}")
    return 0

