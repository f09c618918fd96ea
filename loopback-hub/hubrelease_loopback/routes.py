"""Repo-level routes of the loopback Hub: create, info, refs, preupload, commit, tree, resolve, refs edits.

Shapes follow what huggingface_hub 2.4.0 parses (``hf_api.py``, ``_commit_api.py``, ``file_download.py``);
the route table follows the Hub's HTTP API as huggingface_hub 2.x calls it.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import hashlib
import html
import json
import re
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, cast
from urllib.parse import quote, urlencode

from hubrelease.safe_parse import ScreenError, parse_json, parse_yaml
from hubrelease_loopback import cardcheck, gating
from hubrelease_loopback.auth import covers
from hubrelease_loopback.gitpatterns import GitAttributes, GitIgnore
from hubrelease_loopback.store import (
    FileOp,
    HubStore,
    RepoKey,
    StoreError,
    comment_event,
    event,
    lfs_pointer,
    new_discussion,
    wants_lfs,
)
from hubrelease_loopback.wire import Request, Response, error_response, json_response, parse_range

SPOOL_BYTES = 1024 * 1024
"""A commit body kept in memory up to this size, on disk past it."""
DEFAULT_BRANCH = "main"


def _repo_url(request: Request, key: RepoKey) -> str:
    return f"{request.hub.url}/{key.url_prefix}{key.repo_id}"


def create_repo(request: Request) -> Response:
    body = request.json()
    key = _key_from_body(body)
    private = body.get("private") or body.get("visibility") == "private"
    if private and request.grant is None:
        raise StoreError(401, "a private repo needs a token: anonymous clients could never read it")
    if not request.can_write_new(key, bool(private)):
        raise StoreError(403, f"this token may not create repos in {key.repo_id.split('/')[0]}")
    url = _repo_url(request, key)
    if not request.hub.store.create_repo(key, bool(private)):
        return json_response({"error": "You already created this repo", "url": url}, 409)
    return json_response({"url": url, "name": key.repo_id})


def _key_from_body(body: dict[str, Any], name: str = "name", namespace: str = "organization") -> RepoKey:
    repo_type = body.get("type") or "model"
    if not isinstance(body.get(name), str) or not body[name]:
        raise StoreError(400, f"{name} is required")
    if namespace in body:
        return RepoKey(repo_type, f"{body.get(namespace) or 'local'}/{body[name]}")
    return RepoKey(repo_type, body[name])


def delete_repo(request: Request) -> Response:
    """``DELETE /api/repos/delete`` with ``{name, organization, type}`` (``hf_api.py`` delete_repo)."""
    key = request.require_repo(_key_from_body(request.json()))
    request.hub.store.delete_repo(key)
    return json_response({})


def move_repo(request: Request) -> Response:
    """``POST /api/repos/move`` with ``{fromRepo, toRepo, type}`` (``hf_api.py`` move_repo)."""
    body = request.json()
    source = request.require_repo(_key_from_body(body, "fromRepo", ""))
    target = _key_from_body(body, "toRepo", "")
    if not request.can_write_new(target, request.hub.store.refs(source)["private"]):
        raise StoreError(403, f"this token may not create repos in {target.repo_id.split('/')[0]}")
    request.hub.store.move_repo(source, target)
    return json_response({"url": _repo_url(request, target)})


def moved(request: Request, raw_path: str) -> Response | None:
    """307 to a moved repo's new name for any request naming its old one, as the Hub redirects and
    huggingface_hub's client follows (``utils/_http.py`` 347, ``follow_redirects=True``; 763-782 for
    HEAD); None when the path names no moved repo or the caller could not read where it went."""
    if "ns" not in request.params or "name" not in request.params:
        return None
    try:
        target = request.hub.store.moved_to(request.repo)
    except StoreError:  # not a repo name
        return None
    if target is None or not request.hub.store.exists(target) or not request.can_read(target):
        return None
    path, mark, query = raw_path.partition("?")
    old = re.escape(f"/{request.params['ns']}/{request.params['name']}")
    location = re.sub(rf"{old}(?=/|$)", lambda _: f"/{target.repo_id}", path, count=1)
    return Response(307, {"Location": location + mark + query})


def repo_settings(request: Request) -> Response:
    """``PUT /api/{t}s/{id}/settings`` with ``{private?, visibility?, gated?}`` (``update_repo_settings``)."""
    key = request.require_repo()
    body = request.json()
    gated = body.get("gated")
    if gated is not None and gated not in gating.GATED:  # before any change: all or nothing
        raise StoreError(400, f"invalid gated value {gated!r}")
    private = body.get("private")
    if body.get("visibility") in ("private", "public"):
        private = body["visibility"] == "private"
    if private is not None:
        if private and request.grant is None:
            raise StoreError(401, "a private repo needs a token: anonymous clients could never read it")

        def change(refs: dict[str, Any]) -> None:
            refs["private"] = bool(private)

        request.hub.store.update_refs(key, change)
    if gated is not None:

        def gate(refs: dict[str, Any]) -> None:
            refs["gated"] = gated

        request.hub.store.update_refs(key, gate)
    return json_response({})


def whoami(request: Request) -> Response:
    """``GET /api/whoami-v2``: who the token is, its role and the namespaces its scope names."""
    grant = request.grant
    if grant is None:
        raise StoreError(401, "Invalid credentials in Authorization header")
    scopes = grant.scopes or ("*/*",)
    orgs = sorted({scope.split("/")[-2] for scope in scopes})  # [TYPE/]ns/name: the namespace
    token: dict[str, Any] = {
        "displayName": "loopback",
        "role": grant.role if grant.scopes is None else "fineGrained",
    }
    if grant.scopes is not None:
        permissions = ["repo.content.read"] + (["repo.write"] if grant.role == "write" else [])
        token["fineGrained"] = {
            "scoped": [{"entity": {"name": s}, "permissions": permissions} for s in grant.scopes]
        }
    return json_response(
        {
            "type": "user",
            "id": "loopback",
            "name": gating.user_name(grant),
            "fullname": "loopback Hub user",
            "orgs": [{"type": "org", "name": org} for org in orgs if org != "*"],
            "auth": {"type": "access_token", "accessToken": token},
        }
    )


def list_repos(request: Request) -> Response:
    """``GET /api/{models,datasets,spaces}``: the repos the caller can read, filtered by ``author`` and
    ``search`` as the Hub does, paginated with a ``Link`` header (``utils/_pagination.py``)."""
    plural = request.params["t"]
    author = request.query.get("author", [""])[0]
    search = request.query.get("search", [""])[0].lower()
    limit = request.number(request.query.get("limit", ["0"])[0] or 0, "limit")
    store = request.hub.store
    found = [
        key
        for key in store.repos()
        if f"{key.repo_type}s" == plural
        and (not author or key.repo_id.split("/")[0] == author)
        and search in key.repo_id.lower()
        and request.can_read(key)
    ]
    if limit:
        found = found[:limit]
    start = request.number(request.query.get("cursor", ["0"])[0] or 0, "cursor")
    page = found[start : start + request.hub.page_size]
    headers = {}
    if start + request.hub.page_size < len(found):
        query = {k: v[0] for k, v in request.query.items()}
        query["cursor"] = str(start + request.hub.page_size)
        headers["Link"] = f'<{request.hub.url}/api/{plural}?{urlencode(query)}>; rel="next"'
    items: list[dict[str, Any]] = []
    for key in page:
        refs = store.refs(key)
        head = store.commit_data(key, refs["branches"]["main"]) if "main" in refs["branches"] else None
        items.append(
            {
                "_id": _object_id(key),
                "id": key.repo_id,
                "private": bool(refs["private"]),
                "author": key.repo_id.split("/")[0],
                "createdAt": refs.get("created") or (head["date"] if head else None),
                "lastModified": head["date"] if head else None,
                "sha": head["id"] if head else None,
                "downloads": 0,
                "likes": 0,
                "tags": [],
            }
        )
    return json_response(items, headers=headers)


def user_repos(request: Request) -> Response:
    """``GET /api/settings/repositories`` (or ``/api/organizations/{ns}/...``): the repos the caller
    writes, with their storage (``hf_api.py`` ``list_user_repos``; ``hf repos list``)."""
    if request.grant is None:
        raise StoreError(401, "Invalid credentials in Authorization header")
    namespace = request.arg("ns")
    store = request.hub.store
    items: list[dict[str, Any]] = []
    for key in store.repos():
        if (namespace and key.repo_id.split("/")[0] != namespace) or not request.can_write(key):
            continue
        refs = store.refs(key)
        head = store.commit_data(key, refs["branches"]["main"]) if "main" in refs["branches"] else None
        items.append(
            {
                "id": key.repo_id,
                "type": key.repo_type,
                "updatedAt": head["date"] if head else refs.get("created"),
                "visibility": "private" if refs["private"] else "public",
                "storage": sum(int(e["size"]) for e in head["tree"].values()) if head else 0,
            }
        )
    return json_response(items)


def duplicate_repo(request: Request) -> Response:
    """``POST /api/{t}s/{id}/duplicate`` with ``{repository, visibility?}`` (``hf_api.py`` duplicate_repo):
    the caller reads the source and may create the target."""
    source = request.require_repo()
    body = request.json()
    target = RepoKey(source.repo_type, str(body.get("repository") or ""))
    private = body.get("visibility") == "private" or (
        body.get("visibility") is None and request.hub.store.refs(source)["private"]
    )
    read_only = request.grant is not None and request.grant.role == "read"
    if read_only or not request.can_write_new(target, private):
        raise StoreError(403, f"this token may not create repos in {target.repo_id.split('/')[0]}")
    objects = request.hub.store.duplicate(source, target, private)
    tenant = request.hub.store.tenant(target)
    for sha256 in objects:
        request.hub.xet.share_xorbs(sha256, tenant)
    return json_response({"url": _repo_url(request, target), "filesCopyPending": False})


def _object_id(key: RepoKey) -> str:
    return hashlib.sha1(key.holder.encode(), usedforsecurity=False).hexdigest()[:24]


def _front_matter(content: str) -> dict[str, Any] | None:
    """A card's YAML front matter as a mapping (None without one), read through the input screen
    (``safe_parse.parse_yaml``: aliases measured before anything expands them); ValueError says why it is invalid."""
    if not content.startswith("---"):
        return None
    end = content.find("\n---", 3)
    if end < 0:
        raise ValueError("front matter is not closed by '---'")
    try:
        data = parse_yaml(content[3:end])
    except ScreenError as exc:
        raise ValueError(f"invalid YAML: {exc.problem}") from None
    if data is not None and not isinstance(data, dict):
        raise ValueError("front matter must be a mapping")
    return data


CARD_CACHE = 128
"""Cards whose parsed front matter is kept (by README blob id: a commit's card is parsed once)."""
_cards: OrderedDict[str, bytes | None] = OrderedDict()
_cards_lock = threading.Lock()


def _card_data(store: HubStore, tree: dict[str, Any]) -> bytes | None:
    """The JSON of the README's front matter (None: no card, or a broken one, which has no cardData
    on the Hub either), parsed once per README blob however often ``repo_info`` is asked."""
    entry = tree.get("README.md")
    if entry is None or entry["lfs"]:
        return None
    oid = str(entry["oid"])
    with _cards_lock:
        if oid in _cards:
            _cards.move_to_end(oid)
            return _cards[oid]
    try:
        card = _front_matter(store.text(tree, "README.md"))
    except ValueError:
        card = None
    data = None if card is None else json.dumps(card, default=str).encode()  # YAML dates become text
    with _cards_lock:
        _cards[oid] = data
        while len(_cards) > CARD_CACHE:
            _cards.popitem(last=False)
    return data


def validate_yaml(request: Request) -> Response:
    """The card's front matter checked as the Hub checks it (``cardcheck.py``), before the commit."""
    body = request.json()
    repo_type = str(body.get("repoType") or "model")
    messages = [{"message": m} for m in cardcheck.metadata_errors(str(body.get("content", "")), repo_type)]
    if not request.hub.refuse_invalid_cards:  # the preview shows a card the Hub would refuse
        return json_response({"errors": [], "warnings": messages})
    return json_response({"errors": messages, "warnings": []}, 400 if messages else 200)


def _sibling(path: str, entry: dict[str, Any], blobs: bool) -> dict[str, Any]:
    if not blobs:
        return {"rfilename": path}
    sibling: dict[str, Any] = {"rfilename": path, "size": entry["size"], "blobId": entry["oid"]}
    if entry["lfs"]:
        pointer = len(lfs_pointer(entry["lfs"], entry["size"]))
        sibling["lfs"] = {"sha256": entry["lfs"], "size": entry["size"], "pointerSize": pointer}
    return sibling


def repo_info(request: Request) -> Response:
    key = request.require_repo()
    commit_id, tree = request.hub.store.tree(key, request.arg("rev", "main"))
    commit = request.hub.store.commit_data(key, commit_id)
    blobs = request.flag("blobs")
    listed = sorted(tree)[: request.hub.faults.siblings_limit]
    refs = request.hub.store.refs(key)
    response = json_response(
        {
            "_id": _object_id(key),
            "id": key.repo_id,
            "author": key.repo_id.split("/")[0],
            "sha": commit_id,
            "createdAt": refs.get("created") or request.hub.store.history(key, commit_id)[-1]["date"],
            "xetEnabled": True,  # hf_xet uploads are taken (``xet.py``); ModelInfo.xet_enabled
            "private": bool(refs["private"]),
            "disabled": False,
            "gated": refs.get("gated", False),
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "lastModified": commit["date"],
            "siblings": [_sibling(path, tree[path], blobs) for path in listed],
        }
    )
    card = _card_data(request.hub.store, tree)  # ModelInfo.card_data, spliced in as parsed once
    if card is not None:
        response.body = b'{"cardData": ' + card + b", " + response.body[1:]
    return response


def list_refs(request: Request) -> Response:
    key = request.require_repo()
    refs = request.hub.store.refs(key)
    payload: dict[str, Any] = {
        "branches": [
            {"name": n, "ref": f"refs/heads/{n}", "targetCommit": c} for n, c in refs["branches"].items()
        ],
        "converts": [],
        "tags": [
            {"name": n, "ref": f"refs/tags/{n}", "targetCommit": t["commit"]} for n, t in refs["tags"].items()
        ],
    }
    if request.flag("include_prs"):
        payload["pullRequests"] = [
            {"name": f"refs/pr/{n}", "ref": f"refs/pr/{n}", "targetCommit": pr["commit"]}
            for n, pr in refs["prs"].items()
            if "commit" in pr
        ]
    return json_response(payload)


def list_commits(request: Request) -> Response:
    """First-parent history, newest first, in one page (the Hub paginates; the client accepts one page).

    ``expand[]=formatted`` adds the title and message as HTML (``hf_api.py`` list_repo_commits,
    ``formatted=True``); the Hub renders Markdown there, here they are only escaped.
    """
    key = request.require_repo()
    history = request.hub.store.history(key, request.arg("rev"))
    formatted = "formatted" in request.query.get("expand[]", [])
    items = []
    for c in history:
        item = {
            "id": c["id"],
            "title": c["title"],
            "message": c["message"],
            "date": c["date"],
            "authors": [{"user": "local"}],
        }
        if formatted:
            item["formatted"] = {"title": html.escape(c["title"]), "message": html.escape(c["message"])}
        items.append(item)
    return json_response(items)


def preupload(request: Request) -> Response:
    key = request.require_repo()
    store = request.hub.store
    _, tree = store.tree(key, request.arg("rev"))
    body = request.json()
    attributes = GitAttributes(store.text(tree, ".gitattributes"))
    # The client sends the .gitignore it commits or was given; else the Hub applies the repo's own
    # (hf_api.py preupload_lfs_files, gitignore_content).
    hosted = store.text(tree, ".gitignore")
    ignore = GitIgnore(body["gitIgnore"] if isinstance(body.get("gitIgnore"), str) else hosted)
    files = []
    for item in request.typed(body, "files", list, []):
        try:
            path, sample = str(item["path"]), base64.b64decode(item.get("sample", ""))
        except (KeyError, TypeError, AttributeError, ValueError):
            raise StoreError(400, f"malformed preupload entry: {item!r}") from None
        mode = (
            "lfs"
            if wants_lfs(path, request.number(item.get("size"), "size"), sample, attributes)
            else "regular"
        )
        entry = tree.get(path)
        remote = None if entry is None else (entry["lfs"] or entry["oid"])
        files.append({"path": path, "uploadMode": mode, "shouldIgnore": ignore.ignores(path), "oid": remote})
    return json_response({"files": files})


COMMIT_LINE_BYTES = 15 * 1024 * 1024
"""Longest line of an ndjson commit: a regular file under ``LFS_MIN_SIZE`` (10 MiB), base64-encoded,
with its path. preupload sends anything larger to LFS, so huggingface_hub never commits one."""


def _commit_lines(spool: IO[bytes]) -> Iterator[dict[str, Any]]:
    """The commit's lines as objects, one in memory at a time, each through the input screen."""
    while line := spool.readline(COMMIT_LINE_BYTES + 1):
        if len(line) > COMMIT_LINE_BYTES:
            raise StoreError(
                413,
                f"a commit line is longer than {COMMIT_LINE_BYTES} bytes: files of 10 MiB or more go to LFS",
            )
        if not line.strip():
            continue
        try:
            item = parse_json(line)
        except ScreenError as exc:
            raise StoreError(400, f"malformed commit payload: {exc.problem}") from None
        if not isinstance(item, dict) or not isinstance(item.get("value", {}), dict):
            raise StoreError(400, "malformed commit payload: a line must be {key, value: {...}}")
        yield item


def _text(value: dict[str, Any], name: str) -> str:
    if not isinstance(value.get(name), str):
        raise StoreError(400, f"malformed commit payload: {name!r} must be a string")
    return str(value[name])


def _parse_commit(store: HubStore, spool: IO[bytes]) -> tuple[dict[str, Any], list[FileOp]]:
    """Header and operations of an ndjson commit; a regular file's bytes go to the git store as its
    line is read, so the commit never holds them."""
    header: dict[str, Any] | None = None
    ops: list[FileOp] = []
    for line in _commit_lines(spool):
        key, value = line.get("key"), line.get("value", {})
        if key == "header":
            header = value
        elif key == "file":
            path = _text(value, "path")
            try:
                content = base64.b64decode(_text(value, "content"), validate=True)
            except binascii.Error as exc:
                raise StoreError(400, f"malformed commit payload: {path!r}: {exc}") from None
            ops.append(FileOp("file", path, blob=store.put_git_blob(content), size=len(content)))
        elif key == "lfsFile":  # a copy has no size (_commit_api.py _prepare_commit_payload, case 2.d)
            size = value.get("size")
            if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
                raise StoreError(400, f"malformed commit payload: invalid size {size!r}")
            ops.append(FileOp("lfsFile", _text(value, "path"), sha256=_text(value, "oid"), size=size))
        elif key in ("deletedFile", "deletedFolder"):
            ops.append(FileOp(str(key), _text(value, "path")))
        else:
            raise StoreError(400, f"unsupported commit line {key!r}")
    if header is None:
        raise StoreError(400, "commit payload has no header line")
    return header, ops


def commit(request: Request) -> Response:
    key = request.require_repo()
    # Streamed to a spool file, then parsed a line at a time: a commit may carry up to 1 GB of
    # regular files (create_commit's documented limit), which must not sit in memory as one body.
    store = request.hub.store
    with tempfile.SpooledTemporaryFile(SPOOL_BYTES, mode="w+b", dir=str(store.tmp_dir())) as spool:
        for chunk in request.chunks:
            spool.write(chunk)
        spool.seek(0)
        header, ops = _parse_commit(store, cast(IO[bytes], spool))
    commit_id, pr_num = store.commit(
        key,
        request.arg("rev"),
        ops,
        header,
        request.flag("create_pr"),
        covers=lambda held: covers(request.grant, held),
    )
    url = _repo_url(request, key)
    return json_response(
        {
            "commitUrl": f"{url}/commit/{commit_id}",
            "commitOid": commit_id,
            "pullRequestUrl": f"{url}/discussions/{pr_num}" if pr_num else None,
        }
    )


def _folder_oid(tree: dict[str, Any], folder: str) -> str:
    inside = sorted((p, e["oid"]) for p, e in tree.items() if p.startswith(folder + "/"))
    return hashlib.sha1(json.dumps(inside).encode(), usedforsecurity=False).hexdigest()


def _entry_json(
    request: Request, key: RepoKey, tree: dict[str, Any], path: str, expand: bool, *, hash_lfs: bool
) -> dict[str, Any]:
    """One paths-info or tree entry. ``hash_lfs`` computes a plain LFS file's ``xetHash`` if not
    known yet: paths-info does (the copy reads it there, ``_commit_api.py`` ``_fetch_files_to_copy``,
    for the few paths it names), a tree listing shows only known ones (a listing after a push would
    otherwise hash the whole release)."""
    entry = tree.get(path)
    if entry is None:
        folder: dict[str, Any] = {
            "type": "directory",
            "oid": _folder_oid(tree, path),
            "size": 0,
            "path": path,
        }
        if expand:
            folder["lastCommit"] = _last_commit_json(
                request.hub.store.commit_data(key, _folder_last(request, key, tree, path))
            )
        return folder
    data: dict[str, Any] = {"type": "file", "oid": entry["oid"], "size": entry["size"], "path": path}
    if entry["lfs"]:
        pointer = len(lfs_pointer(entry["lfs"], entry["size"]))
        data["lfs"] = {"oid": entry["lfs"], "size": entry["size"], "pointerSize": pointer}
        xet_hash = request.hub.xet.object_xet_hash(entry["lfs"], hash_lfs)
        if xet_hash is not None:
            data["xetHash"] = xet_hash
    if expand:
        data["lastCommit"] = _last_commit_json(request.hub.store.commit_data(key, entry["last"]))
        # No scanner runs here: the Hub's shape for a file its scanners did not flag (RepoFile.security).
        data["securityFileStatus"] = {
            "status": "safe",
            "avScan": {"virusFound": False},
            "pickleImportScan": None,
        }
    return data


def _last_commit_json(commit: dict[str, Any]) -> dict[str, Any]:
    return {"id": commit["id"], "title": commit["title"], "date": commit["date"]}


def _folder_last(request: Request, key: RepoKey, tree: dict[str, Any], folder: str) -> str:
    """The newest commit that changed a file below ``folder``: the first of the files' last commits
    met walking the history back from the revision (the newest by date if a merge brought it)."""
    store = request.hub.store
    lasts = {str(e["last"]) for p, e in tree.items() if p.startswith(f"{folder}/")}
    commit_id: str | None = store.resolve(key, request.arg("rev"))
    while commit_id:
        if commit_id in lasts:
            return commit_id
        parents = store.commit_data(key, commit_id)["parents"]
        commit_id = parents[0] if parents else None
    return max(lasts, key=lambda c: str(store.commit_data(key, c)["date"]))


def _folders(tree: dict[str, Any]) -> set[str]:
    return {path.rsplit("/", i)[0] for path in tree for i in range(1, path.count("/") + 1)}


def paths_info(request: Request) -> Response:
    key = request.require_repo()
    _, tree = request.hub.store.tree(key, request.arg("rev"))
    form = request.form()
    expand = form.get("expand", [""])[0].lower() in ("1", "true")
    folders = _folders(tree)
    found = [p.strip("/") for p in form.get("paths", []) if p.strip("/") in tree or p.strip("/") in folders]
    return json_response([_entry_json(request, key, tree, path, expand, hash_lfs=True) for path in found])


def list_tree(request: Request) -> Response:
    """Tree listing, paginated with a GitHub-style ``Link: <...>; rel="next"`` header."""
    key = request.require_repo()
    _, tree = request.hub.store.tree(key, request.arg("rev"))
    base = request.arg("path").strip("/")
    folders = _folders(tree)
    if base and base not in folders:
        raise StoreError(404, f"Entry not found: {base}", "EntryNotFound")
    prefix = f"{base}/" if base else ""
    candidates = sorted(p for p in [*tree, *folders] if p.startswith(prefix))
    if not request.flag("recursive"):
        candidates = [p for p in candidates if "/" not in p[len(prefix) :]]
    expand = request.flag("expand")
    page_size = request.hub.page_size_expand if expand else request.hub.page_size
    start = request.number(request.query.get("cursor", ["0"])[0] or 0, "cursor")
    page = candidates[start : start + page_size]
    headers = {}
    if start + page_size < len(candidates):
        query = {k: v[0] for k, v in request.query.items()}
        query["cursor"] = str(start + page_size)
        url = (
            f"{request.hub.url}/api/{key.repo_type}s/{key.repo_id}/tree/{quote(request.arg('rev'), safe='')}"
        )
        if base:
            url += f"/{quote(base)}"
        headers["Link"] = f'<{url}?{urlencode(query)}>; rel="next"'
    return json_response(
        [_entry_json(request, key, tree, p, expand, hash_lfs=False) for p in page], headers=headers
    )


def resolve(request: Request) -> Response:
    """A file's metadata headers (``get_hf_file_metadata``) and, for a regular file, its bytes.

    An LFS or Xet file answers 302 to a signed URL on the storage origin (``cdn_object``), as the
    Hub redirects to its CDN. The client reads the file's metadata off this first answer:
    ``X-Repo-Commit``, ``X-Linked-Etag`` before ``ETag``, ``X-Linked-Size`` (a redirect's
    ``Content-Length`` is not the file's) and ``Location`` (file_download.py 1676-1688 in
    huggingface_hub 2.4.0). HEAD does not follow a redirect to another origin (utils/_http.py
    763-780, ``_is_same_or_hub_host``), and the download then GETs ``Location`` without the
    ``Authorization`` header (file_download.py 1812-1822): the signature is the URL's only credential.
    """
    key = request.require_repo()
    gating.require_access(request, key)
    commit_id, tree = request.hub.store.tree(key, request.arg("rev"))
    path = request.arg("path")
    entry = tree.get(path)
    if entry is None:
        # With X-Repo-Commit the client caches the miss (.no_exist/<commit>/<path>,
        # file_download.py _get_metadata_or_catch_error) instead of asking again.
        missing = error_response(StoreError(404, f"Entry not found: {path}", "EntryNotFound"))
        missing.headers["X-Repo-Commit"] = commit_id
        return missing
    size = int(entry["size"])
    etag = f'"{entry["lfs"] or entry["oid"]}"'
    headers = {"X-Repo-Commit": commit_id, "ETag": etag}
    if not entry["lfs"]:
        return _object(request, request.hub.store.git_path(entry["oid"]), None, size, headers, name=path)
    sha256 = entry["lfs"]
    headers.update({"X-Linked-Etag": etag, "X-Linked-Size": str(size)})
    xet_hash = request.hub.xet.xet_hash_for(sha256)
    if xet_hash is not None:
        # What makes hf_hub_download use hf_xet (utils/_xet.py parse_xet_file_data_from_response).
        refresh = f"{request.hub.url}/api/{key.repo_type}s/{key.repo_id}/xet-read-token/{commit_id}"
        headers.update({"X-Xet-Hash": xet_hash, "Link": f'<{refresh}>; rel="xet-auth"'})
    headers["Location"] = request.hub.cdn_location(sha256, size, path.rsplit("/", 1)[-1])
    return Response(302, headers)


def cdn_object(request: Request) -> Response:
    """The storage origin's answer to a URL ``resolve`` signed: the object's bytes, ``Range`` honoured.

    No token reaches it (the client drops ``Authorization`` off the Hub's origin); the signature
    binds object, size and expiry, and ``resolve`` gave it out only to a caller who could read the
    repo, so it reveals nothing of other tenants. A bad or expired signature is 403, as S3 answers.
    """
    sha256, size = request.arg("oid"), request.query.get("size", [""])[0]
    expires, name = request.query.get("expires", [""])[0], request.arg("name")
    request.hub.access.check_signature(
        f"cdn|{sha256}|{size}|{expires}|{name}", request.query.get("sig", [""])[0]
    )
    if int(expires) < time.time():
        raise StoreError(403, "Request has expired", "AccessDenied")
    blob = request.hub.store.lfs_path(sha256)
    headers = {"ETag": f'"{sha256}"', "Content-Disposition": f"inline; filename*=UTF-8''{quote(name)}"}
    return _object(request, blob, None if blob.is_file() else sha256, int(size), headers, name=name)


# Types a browser may show inline (a card's images and charts, text); anything else downloads.
_INLINE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".json": "application/json",
}
# A file opened on its own (an SVG or a text file a page links to) is a sandboxed document that may
# run nothing and load nothing: a repo's file never acts in the Hub's origin.
FILE_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"


def _object(
    request: Request, blob: Path, xet_sha256: str | None, size: int, headers: dict[str, str], *, name: str
) -> Response:
    """The bytes of a stored file, whole or the ``Range`` asked; a Xet file decoded from its xorbs."""
    kind = _INLINE_TYPES.get(Path(name).suffix.lower(), "application/octet-stream")
    headers = {
        **headers,
        "Accept-Ranges": "bytes",
        "Content-Type": kind,
        "Content-Security-Policy": FILE_CSP,
        "X-Content-Type-Options": "nosniff",
    }
    try:
        span = parse_range(request.headers.get("range", ""), size) if size else None
    except StoreError:
        return Response(416, {**headers, "Content-Range": f"bytes */{size}"})
    start, end = span or (0, size - 1)
    if span is not None:
        headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    status, length = 200 if span is None else 206, max(end - start + 1, 0)
    if xet_sha256 is not None:  # arrived through Xet: its xorbs are its only copy
        return Response(
            status, headers, length=length, stream=request.hub.xet.read(xet_sha256, start, length)
        )
    return Response(status, headers, file=blob, offset=start, length=length)


def branch(request: Request) -> Response:
    key = request.require_repo()
    name = request.arg("rev")
    store = request.hub.store
    if request.method == "DELETE":
        if name == DEFAULT_BRANCH:  # the Hub keeps a repo's default branch: a repo without one is unusable
            raise StoreError(403, f"Cannot delete the default branch {name!r}")

        def drop(refs: dict[str, Any]) -> None:
            if refs["branches"].pop(name, None) is None:
                raise StoreError(404, f"Invalid rev id: {name}", "RevisionNotFound")

        store.update_refs(key, drop)
        return json_response({})
    start = str(request.json().get("startingPoint") or "main")
    target = store.resolve(key, start)

    def add(refs: dict[str, Any]) -> None:
        if name in refs["branches"]:
            raise StoreError(409, f"Reference already exists: refs/heads/{name}")
        refs["branches"][name] = target

    store.update_refs(key, add)
    return json_response({})


def tag(request: Request) -> Response:
    key = request.require_repo()
    store = request.hub.store
    if request.method == "DELETE":
        name = request.arg("rev")

        def drop(refs: dict[str, Any]) -> None:
            if refs["tags"].pop(name, None) is None:
                raise StoreError(404, f"Invalid rev id: {name}", "RevisionNotFound")

        store.update_refs(key, drop)
        return json_response({})
    body = request.json()
    name = str(body.get("tag") or "")
    target = store.resolve(key, request.arg("rev"))

    def add(refs: dict[str, Any]) -> None:
        if not name or name in refs["tags"]:
            raise StoreError(409, f"Tag {name!r} already exists" if name else "tag name is required")
        refs["tags"][name] = {"commit": target, "message": body.get("message")}

    store.update_refs(key, add)
    return json_response({})


def create_discussion(request: Request) -> Response:
    """A discussion, or a pull request (``pullRequest``): a new ``refs/pr/N`` at ``main``'s head."""
    key = request.require_repo()
    body = request.json()
    store = request.hub.store
    pull_request = bool(body.get("pullRequest"))
    record = new_discussion(str(body.get("title") or ""), str(body.get("description") or ""), pull_request)
    if pull_request:
        head = store.resolve(key, "main")
        record.update(commit=head, base="main", start=head)
    holder: dict[str, int] = {}

    def add(refs: dict[str, Any]) -> None:
        holder["num"] = len(refs["prs"]) + 1
        refs["prs"][str(holder["num"])] = record

    store.update_refs(key, add)
    return json_response({"num": holder["num"], "pullRequest": pull_request})


def _discussion_json(key: RepoKey, num: str, record: dict[str, Any]) -> dict[str, Any]:
    pull_request = record.get("pr", True)
    return {
        "num": int(num),
        "title": record["title"],
        "author": {"name": "local"},
        "createdAt": record["created"],
        "status": record.get("status", "open"),
        "repo": {"name": key.repo_id, "type": key.repo_type},
        "isPullRequest": pull_request,
    }


def list_discussions(request: Request) -> Response:
    """``GET .../discussions?p=&type=&status=``: 50 a page, as ``get_repo_discussions`` pages them."""
    key = request.require_repo()
    kind = request.query.get("type", ["all"])[0]
    status = request.query.get("status", ["all"])[0]
    found = []
    for num, record in sorted(request.hub.store.refs(key)["prs"].items(), key=lambda item: -int(item[0])):
        item = _discussion_json(key, num, record)
        if kind in ("discussion", "pull_request") and item["isPullRequest"] != (kind == "pull_request"):
            continue
        if status == "open" and item["status"] not in ("open", "draft"):
            continue
        if status == "closed" and item["status"] not in ("closed", "merged"):
            continue
        found.append(item)
    start = 50 * request.number(request.query.get("p", ["0"])[0] or 0, "p")
    closed = sum(1 for item in found if item["status"] in ("closed", "merged"))
    page = found[start : start + 50]
    return json_response(
        {"discussions": page, "count": len(found), "start": start, "numClosedDiscussions": closed}
    )


def discussion(request: Request) -> Response:
    key = request.require_repo()
    record = request.hub.store.refs(key)["prs"].get(request.arg("num"))
    if record is None:
        raise StoreError(404, "Discussion not found")
    data = _discussion_json(key, request.arg("num"), record)
    data["events"] = record.get("events", [])
    if data["isPullRequest"]:
        if request.flag("diff") and "commit" in record:
            data["diff"] = _pr_diff(request, key, record)
        data["changes"] = {"base": f"refs/heads/{record['base']}"}
        if record.get("merge_commit"):
            data["changes"]["mergeCommitId"] = record["merge_commit"]
        data["filesWithConflicts"] = []
    return json_response(data)


def _blob_text(request: Request, entry: dict[str, Any] | None) -> list[str]:
    """What a diff shows of a file: its text, or its LFS pointer (as git shows an LFS file)."""
    if entry is None:
        return []
    if entry["lfs"]:
        return lfs_pointer(entry["lfs"], entry["size"]).decode().splitlines(keepends=True)
    data = request.hub.store.git_path(entry["oid"]).read_bytes()
    if b"\0" in data[:8000]:
        return []
    return data.decode("utf-8", "replace").splitlines(keepends=True)


def _pr_diff(request: Request, key: RepoKey, record: dict[str, Any]) -> str:
    """The pull request's changes since it was opened as a git diff (``get_discussion_details``
    asks ``?diff=1``); binary files as git prints them."""
    store = request.hub.store
    before = store.commit_data(key, record.get("start") or record["commit"])["tree"]
    after = store.commit_data(key, record["commit"])["tree"]
    out: list[str] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new or (old and new and old["oid"] == new["oid"]):
            continue
        out.append(f"diff --git a/{path} b/{path}\n")
        if old is None:
            out.append("new file mode 100644\n")
        elif new is None:
            out.append("deleted file mode 100644\n")
        a, b = _blob_text(request, old), _blob_text(request, new)
        if (old and not a and old["size"]) or (new and not b and new["size"]):
            out.append(f"Binary files a/{path} and b/{path} differ\n")
            continue
        lines = difflib.unified_diff(
            a, b, f"a/{path}" if old else "/dev/null", f"b/{path}" if new else "/dev/null"
        )
        out.extend(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
        )
    return "".join(out)


def _discussion_event(request: Request, change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    key = request.require_repo()
    num = request.arg("num")
    holder: dict[str, dict[str, Any]] = {}

    def apply(refs: dict[str, Any]) -> None:
        record = refs["prs"].get(num)
        if record is None:
            raise StoreError(404, "Discussion not found")
        holder["event"] = change(record)
        record.setdefault("events", []).append(holder["event"])

    request.hub.store.update_refs(key, apply)
    return holder["event"]


def rename(request: Request) -> Response:
    """``POST .../discussions/N/title`` with ``{title}``: a ``title-change`` event ``{from, to}``
    (``hf_api.py`` rename_discussion, ``community.py`` DiscussionTitleChange)."""
    title = str(request.json().get("title") or "").strip()
    if not title:
        raise StoreError(400, "title is required")

    def change(record: dict[str, Any]) -> dict[str, Any]:
        renamed = event("title-change", {"from": record["title"], "to": title})
        record["title"] = title
        return renamed

    return json_response({"newTitle": _discussion_event(request, change)})


def comment(request: Request) -> Response:
    text = str(request.json().get("comment") or "")
    if not text.strip():
        raise StoreError(400, "comment is required")
    return json_response({"newMessage": _discussion_event(request, lambda record: comment_event(text))})


def change_status(request: Request) -> Response:
    """``open``/``closed`` (merging is ``merge``), with an optional comment."""
    body = request.json()
    status = body.get("status")
    if status not in ("open", "closed"):
        raise StoreError(400, "status must be 'open' or 'closed'")

    def change(record: dict[str, Any]) -> dict[str, Any]:
        if record.get("status") == "merged":
            raise StoreError(400, "a merged pull request cannot change status")
        record["status"] = status
        if body.get("comment"):
            record.setdefault("events", []).append(comment_event(str(body["comment"])))
        return event("status-change", {"status": status})

    return json_response({"newStatus": _discussion_event(request, change)})


def merge(request: Request) -> Response:
    key = request.require_repo()
    commit_id = request.hub.store.merge(key, request.arg("num"))
    return json_response({"commitId": commit_id})


def super_squash(request: Request) -> Response:
    key = request.require_repo()
    message = str(request.json().get("message") or "Super-squash")
    return json_response({"commitId": request.hub.store.super_squash(key, request.arg("rev"), message)})


def duplicate_lfs_files(request: Request) -> Response:
    """``POST {source}/lfs-files/duplicate`` with ``{target: {type, name}, files: [{sha256, xetHash}]}``:
    the files become reachable through the target, which a copy's commit then references
    (``hf_api.py`` ``_duplicate_lfs_files``). The caller must read the source and write the target."""
    source = request.require_repo()
    body = request.json()
    target_info = body.get("target")
    if not isinstance(target_info, dict) or not isinstance(body.get("files"), list):
        raise StoreError(400, "expected {target: {type, name}, files: [...]}")
    target = request.require_repo(
        RepoKey(str(target_info.get("type") or "model"), str(target_info.get("name")))
    )
    if not request.can_write(target):
        raise StoreError(403, "You don't have the rights to write to this repository.")
    store = request.hub.store
    source_tenant, target_tenant = store.tenant(source), store.tenant(target)
    failed = []
    for item in body["files"]:
        sha256 = str(item.get("sha256") if isinstance(item, dict) else "")
        if not re.fullmatch(r"[0-9a-f]{64}", sha256) or not store.tenancy.has("lfs", sha256, source_tenant):
            failed.append({"sha256": sha256, "error": "file not found in the source repository"})
            continue
        store.tenancy.add("lfs", sha256, target_tenant)
        request.hub.xet.share_xorbs(sha256, target_tenant)
    return json_response({"failed": failed})
