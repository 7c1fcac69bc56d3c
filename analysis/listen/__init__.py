"""``vocalgrad listen``: a human listening test on a render or Hub folder (see docs/listen.md).

>>> from analysis.listen import ListenApp, make_server, open_catalog      # doctest: +SKIP
>>> app = ListenApp(open_catalog("build/"), "ann1", "answers.jsonl", per_category=20)  # doctest: +SKIP
>>> make_server(app, port=8765).serve_forever()                                 # doctest: +SKIP

For the report, :func:`human_evaluation_fields` reads ``answers.jsonl`` files into the fields of
a "human" model row and :func:`annotator_agreement` gives per-annotator agreement.
"""

from __future__ import annotations

import errno
import sys

from analysis.cli_options import comma_list
from generation.cli_errors import explain
from generation.option_types import comma_text, port, refuse_symlink_loop

from .answers import (AnswerLog, AnswersError, annotator_agreement, human_evaluation, human_evaluation_fields,
                      human_records)
from .catalog import Catalog, CatalogError, open_catalog
from .server import ListenApp, is_loopback, make_server
from .study import annotator_order, select_study

__all__ = [
    "AnswerLog", "AnswersError", "Catalog", "CatalogError", "ListenApp", "annotator_agreement",
    "annotator_order", "human_evaluation", "human_evaluation_fields", "human_records", "make_server", "open_catalog",
    "register_cli", "select_study",
]


def register_cli(sub) -> None:
    """Add the ``listen`` sub-command."""
    p = sub.add_parser("listen", help="serve a local listening test page (human baseline)",
                       description="Serve a listening test on http://HOST:PORT/ for one annotator. Answers are "
                                   "appended to --answers; rerun the same command to resume.")
    p.add_argument("data", metavar="HUB_OR_RENDER", help="render folder (manifest.parquet), Hub folder or a local copy of "
                   "the authors' published release (metadata.csv)")
    p.add_argument("--annotator", required=True, help="annotator name (letters, digits, _ . -)")
    p.add_argument("--answers", default="answers.jsonl", help="answers file (default ./answers.jsonl; "
                   "several annotators may share it)")
    p.add_argument("--per-category", type=int, help="clips per category (default: all); same set for everyone")
    p.add_argument("--subset", choices=("paper",),
                   help="paper: the paper's 50 annotated clips per category (needs the frozen VCTK test set), "
                        "so that the human row is comparable with the paper's")
    p.add_argument("--practice", type=int, default=0, help="practice clips with feedback first (default 0)")
    p.add_argument("--categories", type=comma_text, help="comma-separated subset of categories")
    p.add_argument("--config", help="Hub folder only: config to read (default: the nine categories)")
    p.add_argument("--seed", type=int, default=0, help="seed of the clip selection (default 0)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=port, default=8765, help="port, 0-65535 (default 8765; 0 = any free port)")
    p.add_argument("--allow-remote", action="store_true",
                   help="required with a --host other than a loopback address")
    p.add_argument("--verbose", action="store_true", help="log every request to stderr")
    p.set_defaults(func=_cli)


def _cli(args) -> int:
    if not is_loopback(args.host):
        if not args.allow_remote:
            print(f"vocalgrad listen: error: --host {args.host} would expose the test to other machines; "
                  "add --allow-remote if that is what you want", file=sys.stderr)
            return 2
    cats = comma_list(args.categories)
    try:
        refuse_symlink_loop(args.answers, what=f"--answers {args.answers}")
        catalog = open_catalog(args.data, config=args.config)
        app = ListenApp(catalog, args.annotator, args.answers, per_category=args.per_category,
                        practice=args.practice, seed=args.seed, categories=cats, subset=args.subset)
        server = make_server(app, host=args.host, port=args.port, quiet=not args.verbose)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            print(f"vocalgrad listen: error: port {args.port} on {args.host} is in use (another `vocalgrad listen`, "
                  "or another server); stop it, or choose another --port (--port 0 picks a free one)", file=sys.stderr)
        else:
            print(f"vocalgrad listen: error: {explain(exc) or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"vocalgrad listen: error: {exc}", file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    if not is_loopback(args.host):
        print(f"WARNING: serving on {host} port {port}: anyone who can reach this machine on that port can "
              "listen to the clips and post answers as this annotator (no encryption, no login). Use it only "
              "on a trusted network; the default --host 127.0.0.1 keeps the test on this machine.",
              file=sys.stderr, flush=True)
    shown = f"[{host}]" if ":" in host else host
    st = app.state()["progress"]
    print(f"annotator {app.annotator}: {st['done']}/{st['total']} answered"
          + (f", practice {st['practice_done']}/{st['practice_total']}" if st["practice_total"] else "")
          + f"; answers -> {app.log.path}")
    print(f"open http://{shown}:{port}/ in a browser (Ctrl+C stops; rerun to resume)", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
