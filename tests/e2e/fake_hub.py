"""A stand-in Hugging Face Hub for `canrun pull` tests: the endpoints huggingface_hub uses (model
info by revision, resolve with ETag / X-Linked-Etag and a redirect to a CDN path for LFS files,
HTTP Range), a gated repository, and switches for the failures a client must survive: server
errors, a response cut short, a corrupt body."""
import hashlib
import json
import re
import threading
import urllib.parse

from local_server import LocalServer, QuietHandler

LFS_SUFFIXES = (".safetensors", ".bin", ".gguf")


class Repo:
    def __init__(self, files, commit=None, branches=None, token=None):
        self.files = dict(files)  # path -> bytes
        self.commit = commit or hashlib.sha1(b"".join(sorted(self.files.values()))).hexdigest()
        self.branches = {"main": self.commit, **(branches or {})}  # every commit serves `files`
        self.token = token  # a gated repository: only this bearer token may read it

    def resolve(self, revision):
        """The commit a branch names, a known commit itself, or None."""
        if revision in self.branches:
            return self.branches[revision]
        return revision if revision in self.branches.values() else None

    def etag(self, path):
        data = self.files[path]
        if path.endswith(LFS_SUFFIXES):
            return hashlib.sha256(data).hexdigest()
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id


class FakeHub(LocalServer):
    def __init__(self, repos):
        super().__init__(Handler)
        self.repos = repos  # repo id -> Repo
        self.blobs = {}  # sha256 -> bytes, the CDN
        for repo in repos.values():
            for path, data in repo.files.items():
                if path.endswith(LFS_SUFFIXES):
                    self.blobs[repo.etag(path)] = data
        self.errors_500 = 0  # the next this many requests answer 500
        self.cut_short = 0  # the next this many CDN bodies stop halfway (the connection drops)
        self.corrupt = False  # CDN bodies come with one byte changed
        self.requests = []  # (method, path, Range header) in arrival order
        self.lock = threading.Lock()

    def take(self, switch):
        with self.lock:
            if getattr(self, switch) > 0:
                setattr(self, switch, getattr(self, switch) - 1)
                return True
            return False


class Handler(QuietHandler):
    def do_HEAD(self):
        self.answer(head=True)

    def do_GET(self):
        self.answer(head=False)

    def send(self, status, body=b"", headers=None, head=False, error_code=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if error_code:
            self.send_header("X-Error-Code", error_code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def error(self, status, code, message, head):
        self.send(status, json.dumps({"error": message}).encode(), {"Content-Type": "application/json"}, head, code)

    def repo_or_error(self, repo_id, head):
        """The repository, or None after answering 404 / 401 / 403 as the Hub does."""
        repo = self.server.repos.get(repo_id)
        if repo is None:
            self.error(404, "RepoNotFound", "Repository Not Found", head)
            return None
        if repo.token is not None:
            auth = self.headers.get("Authorization", "")
            if not auth:
                self.error(401, "GatedRepo", "Access to this repository is restricted", head)
                return None
            if auth != f"Bearer {repo.token}":
                self.error(403, "GatedRepo", "Your token has no access", head)
                return None
        return repo

    def answer(self, head):
        server = self.server
        path = urllib.parse.urlsplit(self.path).path
        with server.lock:
            server.requests.append((self.command, path, self.headers.get("Range")))
        if server.take("errors_500"):
            return self.error(500, None, "Internal Error", head)
        info = re.fullmatch(r"/api/models/([^/]+/[^/]+)/revision/([^/]+)", path)
        resolve = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        tree = re.fullmatch(r"/api/models/([^/]+/[^/]+)/tree/([^/]+)", path)
        cdn = re.fullmatch(r"/cdn/([0-9a-f]{64})", path)
        if info:
            repo = self.repo_or_error(info.group(1), head)
            if repo is None:
                return
            revision = urllib.parse.unquote(info.group(2))
            commit = repo.resolve(revision)
            if commit is None:
                return self.error(404, "RevisionNotFound", f"Invalid rev id: {revision}", head)
            siblings = [{"rfilename": p, "size": len(d)} for p, d in sorted(repo.files.items())]
            body = json.dumps({"id": info.group(1), "sha": commit, "siblings": siblings}).encode()
            return self.send(200, body, {"Content-Type": "application/json"}, head)
        if tree:  # huggingface_hub's snapshot_download lists the files this way
            repo = self.repo_or_error(tree.group(1), head)
            if repo is None:
                return
            entries = [{"type": "file", "path": p, "size": len(d), "oid": repo.etag(p)}
                       for p, d in sorted(repo.files.items())]
            return self.send(200, json.dumps(entries).encode(), {"Content-Type": "application/json"}, head)
        if resolve:
            repo = self.repo_or_error(resolve.group(1), head)
            if repo is None:
                return
            revision, file = urllib.parse.unquote(resolve.group(2)), urllib.parse.unquote(resolve.group(3))
            commit = repo.resolve(revision)
            if commit is None:
                return self.error(404, "RevisionNotFound", f"Invalid rev id: {revision}", head)
            if file not in repo.files:
                return self.error(404, "EntryNotFound", f"{file} does not exist", head)
            data, etag = repo.files[file], repo.etag(file)
            if file.endswith(LFS_SUFFIXES):
                # The CDN is another host, as on the Hub: clients read the metadata off this redirect.
                cdn_url = server.url.replace("127.0.0.1", "localhost")
                return self.send(302, b"", {"Location": f"{cdn_url}/cdn/{etag}", "X-Repo-Commit": commit,
                                            "X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(data)),
                                            "ETag": '"not-the-blob"'}, head)
            return self.body(data, {"ETag": f'"{etag}"', "X-Repo-Commit": commit}, head)
        if cdn and cdn.group(1) in server.blobs:
            data = server.blobs[cdn.group(1)]
            if server.corrupt:
                data = bytes([data[0] ^ 0xFF]) + data[1:]
            return self.body(data, {"ETag": f'"{cdn.group(1)}"'}, head, cut=server.take("cut_short"))
        self.error(404, None, f"no route {path}", head)

    def body(self, data, headers, head, cut=False):
        """`data` whole, or from the byte a Range header asks for (206); `cut` drops the
        connection halfway through the body."""
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
        status = 200
        if match:
            start = int(match.group(1))
            if start >= len(data):
                return self.send(416, b"", {"Content-Range": f"bytes */{len(data)}"}, head)
            status = 206
            headers = {**headers, "Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"}
        part = data[start:]
        if not cut:
            return self.send(status, part, headers, head)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(part)))
        self.end_headers()
        self.wfile.write(part[: len(part) // 2])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(1)
