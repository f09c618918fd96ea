"""Gated repos on the loopback Hub: who may download a gated repo's files, and access requests.

A repo is gated with ``update_repo_settings(gated="auto"|"manual")``. Its card, tree and metadata
stay readable; its files (``resolve``, the Xet read token) need an accepted access request unless
the caller writes the repo. As on the Hub, a refusal carries ``X-Error-Code: GatedRepo``, which
huggingface_hub raises as ``GatedRepoError`` (``utils/_http.py`` 888-892 in huggingface_hub 2.4.0):
401 for a client without a token, 403 for a user without access. A request (``POST {repo}/ask-access``,
the Hub's form) is accepted at once on an ``auto`` repo and waits for the owner on a ``manual`` one;
owners list and handle requests through ``/api/{t}s/{id}/user-access-request/*`` (``hf_api.py``
``_list_access_requests``, ``_handle_access_request``, ``grant_access``).

The loopback Hub has no user accounts: a token's user is the name ``whoami`` gives it.
"""

from __future__ import annotations

import uuid
from typing import Any

from hubrelease_loopback.auth import Grant
from hubrelease_loopback.store import RepoKey, StoreError, now
from hubrelease_loopback.wire import Request, Response, json_response

GATED = (False, "auto", "manual")
STATUSES = ("pending", "accepted", "rejected")


def user_name(grant: Grant) -> str:
    """The user a token stands for: the first namespace its scope names, else ``local``."""
    if grant.scopes is None:
        return "local"
    return sorted({scope.split("/")[0] for scope in grant.scopes})[0]


def require_access(request: Request, key: RepoKey) -> None:
    """Refuse a download of a gated repo's files to a caller without access (GatedRepo 401/403)."""
    refs = request.hub.store.refs(key)
    if not refs.get("gated") or request.can_write(key):
        return
    grant = request.grant
    if grant is None:
        raise StoreError(
            401,
            f"Access to {key.repo_type} {key.repo_id} is restricted. You must have access to it and be "
            "authenticated to access it. Please log in.",
            "GatedRepo",
        )
    found = refs.get("access", {}).get(user_name(grant))
    if found is None or found["status"] != "accepted":
        raise StoreError(
            403,
            f"Access to {key.repo_type} {key.repo_id} is restricted and you are not in the authorized list. "
            f"Visit {request.hub.url}/{key.url_prefix}{key.repo_id} to ask for access.",
            "GatedRepo",
        )


def _record(user: str, status: str) -> dict[str, Any]:
    return {"user": user, "status": status, "requestId": uuid.uuid4().hex[:24], "timestamp": now()}


def ask_access(request: Request) -> Response:
    """A user asks for access to a gated repo: accepted at once when it is ``auto``."""
    key = request.require_repo()
    if request.grant is None:
        raise StoreError(401, "You must be logged in to ask for access")
    user = user_name(request.grant)

    def ask(refs: dict[str, Any]) -> None:
        if not refs.get("gated"):
            raise StoreError(400, f"{key.repo_id} is not a gated repo")
        table = refs.setdefault("access", {})
        if user not in table:
            table[user] = _record(user, "accepted" if refs["gated"] == "auto" else "pending")

    request.hub.store.update_refs(key, ask)
    return json_response({})


def _require_owner(request: Request) -> RepoKey:
    key = request.require_repo()
    if not request.can_write(key):
        raise StoreError(403, "You don't have the rights to manage access requests of this repository.")
    return key


def list_requests(request: Request) -> Response:
    """``GET .../user-access-request/{pending,accepted,rejected}``: for those who write the repo."""
    key = _require_owner(request)
    status = request.arg("status")
    if status not in STATUSES:
        raise StoreError(404, f"unknown access request status {status!r}")
    table = request.hub.store.refs(key).get("access", {})
    items = [
        {
            "user": {"user": r["user"], "fullname": r["user"]},
            "requestId": r["requestId"],
            "status": r["status"],
            "timestamp": r["timestamp"],
        }
        for r in table.values()
        if r["status"] == status
    ]
    return json_response(items)


def handle_request(request: Request) -> Response:
    """``POST .../user-access-request/handle`` with ``{user | requestId, status}``."""
    key = _require_owner(request)
    body = request.json()
    status = body.get("status")
    if status not in STATUSES:
        raise StoreError(400, f"invalid status {status!r}")

    def handle(refs: dict[str, Any]) -> None:
        table = refs.setdefault("access", {})
        found = [
            r
            for r in table.values()
            if r["user"] == body.get("user") or r["requestId"] == body.get("requestId")
        ]
        if not found:
            raise StoreError(404, "access request not found")
        found[0]["status"] = status

    request.hub.store.update_refs(key, handle)
    return json_response({})


def grant_access(request: Request) -> Response:
    """``POST .../user-access-request/grant`` with ``{user}``: accepted without a request."""
    key = _require_owner(request)
    user = str(request.json().get("user") or "")
    if not user:
        raise StoreError(400, "user is required")

    def grant(refs: dict[str, Any]) -> None:
        table = refs.setdefault("access", {})
        if table.get(user, {}).get("status") == "accepted":
            raise StoreError(409, f"{user} already has access")
        table[user] = _record(user, "accepted")

    request.hub.store.update_refs(key, grant)
    return json_response({})
