"""A small fake of the Hugging Face Hub HTTP API, on 127.0.0.1, for the publish tests.

It speaks enough of the API for ``huggingface_hub`` (create_repo, create_branch, upload_folder
through preupload + LFS "basic" transfer + NDJSON commit, list_repo_tree) and for
``datasets.load_dataset(repo_id, ...)`` (repo info, tree/paths-info listings, resolve downloads
with HEAD and Range requests). Repos live in memory.

What it cannot check (see docs/hub.md): the Xet upload protocol (tests set HF_HUB_DISABLE_XET=1,
so the legacy LFS path is used), server-side YAML/card validation, the dataset viewer's
parquet conversion, gated access, rate limits and real authentication (any bearer token is
accepted for writes; a missing one is refused with 401).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

_TYPES = {"datasets": "dataset", "models": "model", "spaces": "space"}


def _git_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class _File:
    data: bytes
    lfs: bool

    def entry(self, path: str) -> dict:
        e = {"type": "file", "oid": _git_oid(self.data), "size": len(self.data), "path": path}
        if self.lfs:
            sha = hashlib.sha256(self.data).hexdigest()
            e["lfs"] = {"oid": sha, "size": len(self.data), "pointerSize": 134}
        return e


@dataclass
class _Repo:
    repo_id: str
    private: bool
    branches: dict = field(default_factory=dict)  # name -> commit sha
    commits: dict = field(default_factory=dict)  # sha -> {path: _File}

    def resolve(self, revision: str) -> tuple[str, dict] | None:
        revision = unquote(revision)
        sha = self.branches.get(revision, revision if revision in self.commits else None)
        return (sha, self.commits[sha]) if sha else None


class FakeHub:
    """In-memory Hub; start with :meth:`start`, stop with :meth:`stop`.

    Attributes
    ----------
    endpoint : str
        ``http://127.0.0.1:PORT`` (set ``HF_ENDPOINT`` to it before importing huggingface_hub).
    log : list of (str, str)
        Every request as (method, path).
    unknown : list of (str, str)
        Requests the fake does not implement (answered 404).
    auth_headers : list of str
        Authorization headers seen (tests assert they were sent, never print them).
    """

    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], _Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.log: list = []
        self.unknown: list = []
        self.auth_headers: list = []
        self._lock = threading.Lock()
        hub = self

        class Handler(_Handler):
            fake = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> "FakeHub":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def files(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> dict[str, bytes]:
        """Committed files of a repo at ``revision`` (path -> bytes)."""
        got = self.repos[(repo_type, repo_id)].resolve(revision)
        return {p: f.data for p, f in got[1].items()} if got else {}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    # ---------------------------------------------------------------- plumbing
    def _send(self, code: int, body: bytes = b"", ctype: str = "application/json", headers=None, head=False):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, obj, code: int = 200, headers=None, head=False):
        self._send(code, json.dumps(obj).encode(), headers=headers, head=head)

    def _error(self, code: int, msg: str, head=False):
        self._json({"error": msg}, code, headers={"X-Error-Message": msg}, head=head)

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        auth = self.headers.get("Authorization")
        with self.fake._lock:
            self.fake.log.append((method, self.path))
            if auth:
                self.fake.auth_headers.append(auth)
        for pattern, meth, handler in _ROUTES:
            if meth == method or (meth == "GET" and method == "HEAD"):
                m = re.fullmatch(pattern, path)
                if m:
                    return handler(self, m, query, head=(method == "HEAD"))
        with self.fake._lock:
            self.fake.unknown.append((method, self.path))
        self._body()
        self._error(404, f"fake hub: no route for {method} {path}", head=method == "HEAD")

    def do_GET(self):
        self._dispatch("GET")

    def do_HEAD(self):
        self._dispatch("HEAD")

    def do_POST(self):
        self._dispatch("POST")

    def do_PUT(self):
        self._dispatch("PUT")

    def _repo(self, kind: str, repo_id: str, head=False) -> _Repo | None:
        repo = self.fake.repos.get((_TYPES.get(kind, kind), unquote(repo_id)))
        if repo is None or (repo.private and not self.headers.get("Authorization")):
            self._error(404, "Repository not found", head=head)
            return None
        return repo

    def _need_auth(self, head=False) -> bool:
        if not (self.headers.get("Authorization") or "").startswith("Bearer "):
            self._error(401, "Invalid credentials in Authorization header", head=head)
            return False
        return True

    # ---------------------------------------------------------------- write API
    def create_repo(self, m, q, head=False):
        payload = json.loads(self._body() or b"{}")
        if not self._need_auth():
            return
        name = payload["name"] if not payload.get("organization") else f"{payload['organization']}/{payload['name']}"
        rtype = payload.get("type") or "model"
        key = (rtype, name)
        prefix = "" if rtype == "model" else f"{rtype}s/"
        url = f"{self.fake.endpoint}/{prefix}{name}"
        if key in self.fake.repos:  # the Hub answers 409 with the url; exist_ok=True reads it
            return self._json({"error": "You already created this repo", "url": url}, 409)
        private = payload.get("visibility") == "private" or bool(payload.get("private"))
        repo = _Repo(name, private)
        sha = hashlib.sha1(f"init:{name}".encode()).hexdigest()
        repo.commits[sha] = {".gitattributes": _File(b"*.parquet filter=lfs diff=lfs merge=lfs -text\n", False)}
        repo.branches["main"] = sha
        self.fake.repos[key] = repo
        self._json({"url": url, "name": name, "id": name})

    def create_branch(self, m, q, head=False):
        payload = json.loads(self._body() or b"{}")
        if not self._need_auth():
            return
        repo = self._repo(m["kind"], m["repo"])
        if repo is None:
            return
        branch = unquote(m["branch"])
        if branch in repo.branches:
            return self._error(409, "Reference already exists")
        start = repo.resolve(payload.get("startingPoint") or "main")
        repo.branches[branch] = start[0]
        self._json({})

    def preupload(self, m, q, head=False):
        payload = json.loads(self._body() or b"{}")
        if not self._need_auth() or self._repo(m["kind"], m["repo"]) is None:
            return
        files = [{"path": f["path"], "uploadMode": "lfs" if f["path"].endswith(".parquet") else "regular",
                  "shouldIgnore": False} for f in payload.get("files", [])]
        self._json({"files": files, "commitOid": None})

    def lfs_batch(self, m, q, head=False):
        payload = json.loads(self._body() or b"{}")
        if not self._need_auth() or self._repo(m["kind"], m["repo"]) is None:
            return
        objects = []
        for obj in payload.get("objects", []):
            out = {"oid": obj["oid"], "size": obj["size"]}
            if obj["oid"] not in self.fake.lfs:
                out["actions"] = {"upload": {"href": f"{self.fake.endpoint}/_lfs/{obj['oid']}"}}
            objects.append(out)
        self._json({"transfer": "basic", "objects": objects})

    def lfs_put(self, m, q, head=False):
        data = self._body()
        if hashlib.sha256(data).hexdigest() != m["oid"]:
            return self._error(400, "sha256 mismatch")
        self.fake.lfs[m["oid"]] = data
        self._send(200, b"")

    def commit(self, m, q, head=False):
        raw = self._body()
        if not self._need_auth():
            return
        repo = self._repo(m["kind"], m["repo"])
        if repo is None:
            return
        revision = unquote(m["rev"])
        if revision not in repo.branches:
            return self._error(404, f"Invalid rev id: {revision}")
        files = dict(repo.commits[repo.branches[revision]])
        summary = ""
        for line in raw.decode().splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                summary = value.get("summary", "")
            elif key == "file":
                files[value["path"]] = _File(base64.b64decode(value["content"]), False)
            elif key == "lfsFile":
                if value["oid"] not in self.fake.lfs:
                    return self._error(422, f"LFS object {value['oid']} was not uploaded")
                files[value["path"]] = _File(self.fake.lfs[value["oid"]], True)
            elif key in ("deletedFile", "deletedFolder"):
                gone = value["path"].rstrip("/")
                files = {p: f for p, f in files.items() if p != gone and not p.startswith(gone + "/")}
            else:
                return self._error(400, f"fake hub: unsupported commit operation {key}")
        parent = repo.branches[revision]
        sha = hashlib.sha1((parent + summary + "".join(
            f"{p}:{_git_oid(f.data)}" for p, f in sorted(files.items()))).encode()).hexdigest()
        repo.commits[sha] = files
        repo.branches[revision] = sha
        self._json({"commitUrl": f"{self.fake.endpoint}/datasets/{repo.repo_id}/commit/{sha}",
                    "commitOid": sha, "pullRequestUrl": None})

    def validate_yaml(self, m, q, head=False):
        """Check the README's YAML header: parses, has a licence and well-formed ``configs``."""
        import yaml

        content = json.loads(self._body() or b"{}").get("content", "")
        errors = []
        if not content.startswith("---\n"):
            errors.append("README.md has no YAML metadata header")
        else:
            try:
                meta = yaml.safe_load(content[4:].split("\n---\n", 1)[0]) or {}
            except yaml.YAMLError as exc:
                meta, errors = {}, [f"YAML does not parse: {exc}"]
            if not isinstance(meta, dict):
                errors.append("YAML header is not a mapping")
                meta = {}
            if meta and "license" not in meta:
                errors.append("license is missing")
            names = set()
            for cfg in meta.get("configs", []) or []:
                if not isinstance(cfg, dict) or "config_name" not in cfg or "data_files" not in cfg:
                    errors.append(f"malformed config entry {cfg!r}")
                    continue
                if cfg["config_name"] in names:
                    errors.append(f"duplicate config_name {cfg['config_name']}")
                names.add(cfg["config_name"])
            if sum(bool(c.get("default")) for c in meta.get("configs", []) or [] if isinstance(c, dict)) > 1:
                errors.append("more than one default config")
        if errors:
            return self._json({"errors": [{"message": e} for e in errors]}, 400)
        self._json({"warnings": []})

    # ---------------------------------------------------------------- read API
    def repo_info(self, m, q, head=False):
        repo = self._repo(m["kind"], m["repo"], head=head)
        if repo is None:
            return
        got = repo.resolve(m["rev"] or "main")
        if got is None:
            return self._error(404, "Revision not found", head=head)
        sha, files = got
        self._json({
            "id": repo.repo_id, "_id": repo.repo_id, "sha": sha, "private": repo.private, "disabled": False,
            "gated": False, "downloads": 0, "likes": 0, "tags": [], "author": repo.repo_id.split("/")[0],
            "lastModified": "2026-01-01T00:00:00.000Z", "createdAt": "2026-01-01T00:00:00.000Z",
            "siblings": [{"rfilename": p} for p in sorted(files)],
        }, head=head)

    def _listing(self, files: dict, prefix: str, recursive: bool) -> list[dict]:
        prefix = prefix.strip("/")
        out, dirs = [], set()
        for p in sorted(files):
            if prefix and not p.startswith(prefix + "/"):
                continue
            rest = p[len(prefix) + 1:] if prefix else p
            parts = rest.split("/")
            for i in range(1, len(parts)):
                d = "/".join(([prefix] if prefix else []) + parts[:i])
                if (recursive or i == 1) and d not in dirs:
                    dirs.add(d)
                    out.append({"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0,
                                "path": d})
            if recursive or len(parts) == 1:
                out.append(files[p].entry(p))
        return out

    def tree(self, m, q, head=False):
        repo = self._repo(m["kind"], m["repo"])
        if repo is None:
            return
        got = repo.resolve(m["rev"])
        if got is None:
            return self._error(404, "Revision not found")
        prefix = unquote(m["path"] or "")
        files = got[1]
        if prefix and not any(p == prefix or p.startswith(prefix.rstrip("/") + "/") for p in files):
            return self._error(404, f"Entry not found: {prefix}")
        recursive = q.get("recursive", ["false"])[0].lower() in ("1", "true")
        self._json(self._listing(files, prefix, recursive))

    def paths_info(self, m, q, head=False):
        raw = self._body()
        repo = self._repo(m["kind"], m["repo"])
        if repo is None:
            return
        got = repo.resolve(m["rev"])
        if got is None:
            return self._error(404, "Revision not found")
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            paths = json.loads(raw or b"{}").get("paths", [])
        else:
            paths = parse_qs(raw.decode()).get("paths", [])
        files, out = got[1], []
        for p in paths:
            p = p.strip("/")
            if p in files:
                out.append(files[p].entry(p))
            elif any(f.startswith(p + "/") for f in files):
                out.append({"type": "directory", "oid": hashlib.sha1(p.encode()).hexdigest(), "size": 0, "path": p})
        self._json(out)

    def resolve(self, m, q, head=False):
        repo = self._repo(m["kind"], m["repo"], head=head)
        if repo is None:
            return
        got = repo.resolve(m["rev"])
        if got is None:
            return self._error(404, "Revision not found", head=head)
        sha, files = got
        path = unquote(m["path"])
        if path not in files:
            return self._send(404, b"Entry not found", "text/plain",
                              headers={"X-Error-Code": "EntryNotFound", "X-Repo-Commit": sha}, head=head)
        f = files[path]
        etag = hashlib.sha256(f.data).hexdigest() if f.lfs else _git_oid(f.data)
        headers = {"X-Repo-Commit": sha, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
        if f.lfs:
            headers.update({"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(f.data))})
        rng = self.headers.get("Range")
        data, code = f.data, 200
        if rng:
            mr = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
            if mr:
                n = len(f.data)
                if mr[1] == "":
                    start, end = max(0, n - int(mr[2])), n - 1
                else:
                    start, end = int(mr[1]), min(int(mr[2]) if mr[2] else n - 1, n - 1)
                data, code = f.data[start:end + 1], 206
                headers["Content-Range"] = f"bytes {start}-{end}/{n}"
        self._send(code, data, "application/octet-stream", headers=headers, head=head)


_KIND = r"(?P<kind>datasets|models|spaces)"
_REPO = r"(?P<repo>[^/]+/[^/]+)"
_ROUTES = [
    (r"/api/repos/create", "POST", _Handler.create_repo),
    (r"/api/validate-yaml", "POST", _Handler.validate_yaml),
    (rf"/api/{_KIND}/{_REPO}/branch/(?P<branch>.+)", "POST", _Handler.create_branch),
    (rf"/api/{_KIND}/{_REPO}/preupload/(?P<rev>[^/]+)", "POST", _Handler.preupload),
    (rf"/api/{_KIND}/{_REPO}/commit/(?P<rev>[^/]+)", "POST", _Handler.commit),
    (rf"/api/{_KIND}/{_REPO}/paths-info/(?P<rev>[^/]+)", "POST", _Handler.paths_info),
    (rf"/api/{_KIND}/{_REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?", "GET", _Handler.tree),
    (rf"/api/{_KIND}/{_REPO}(?:/revision/(?P<rev>[^/]+))?", "GET", _Handler.repo_info),
    (rf"/{_KIND}/{_REPO}\.git/info/lfs/objects/batch", "POST", _Handler.lfs_batch),
    (r"/_lfs/(?P<oid>[0-9a-f]{64})", "PUT", _Handler.lfs_put),
    (rf"/{_KIND}/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)", "GET", _Handler.resolve),
]
