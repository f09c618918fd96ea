"""Trusted publishing on the loopback Hub: a stand-in for GitHub's OIDC issuer and the Hub's exchange.

A CI job's ``hubrelease push`` with ``HF_OIDC_RESOURCE`` set runs huggingface_hub's exchange
(``_oidc.py``): ``GET $ACTIONS_ID_TOKEN_REQUEST_URL?audience=<endpoint>`` with
``Authorization: Bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN`` -> ``{"value": id_token}``, then
``POST {endpoint}/oauth/token`` (RFC 8693: ``grant_type``, ``subject_token_type``,
``subject_token``, ``resource``) -> ``{"access_token", "token_type", "expires_in",
"issued_token_type"}``, or 400 ``{"error": "invalid_grant"}``. The Hub's rules, from its
trusted-publishers page (hub-docs ``docs/hub/trusted-publishers.md``): the id token's audience must
be the Hub; a repo publisher names claims that must all match exactly, for GitHub Actions
``repository``, ``branch`` and ``workflow`` (the workflow file's name); the token it gives writes
to that one repo. How a run's token carries them (GitHub's OIDC reference): ``repository``,
``ref`` (``refs/heads/B`` on a branch, ``refs/tags/T`` on a tag: no branch), ``workflow_ref``
(``OWNER/REPO/.github/workflows/FILE@REF``).

Here the id token is an opaque random string standing for the signed JWT: ``ci_job(claims)`` is
what GitHub does when a job with ``id-token: write`` starts (it returns the two environment
values), the exchange checks the claims the job was started with.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass

from hubrelease.loopback.auth import Grant
from hubrelease.loopback.store import StoreError
from hubrelease.loopback.wire import Request, Response, json_response

EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_TTL = 3600


@dataclass(frozen=True)
class Publisher:
    """A repo's trusted publisher: the claims that must match (None: not pinned)."""

    repository: str
    branch: str | None = None
    workflow: str | None = None

    def matches(self, claims: dict[str, str]) -> bool:
        ref = claims.get("ref", "")
        branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
        workflow = claims.get("workflow_ref", "").split("@", 1)[0].rpartition("/")[2]
        return (
            claims.get("repository") == self.repository
            and (self.branch is None or branch == self.branch)
            and (self.workflow is None or workflow == self.workflow)
        )


class TrustedPublishing:
    """Publishers per Hub resource, running CI jobs and the id tokens they minted; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.publishers: dict[str, list[Publisher]] = {}
        self._jobs: dict[str, dict[str, str]] = {}
        self._id_tokens: dict[str, tuple[dict[str, str], str]] = {}

    def trust(self, resource: str, publisher: Publisher) -> None:
        """Add ``publisher`` to ``resource`` (``ns/name``, ``datasets/ns/name``), as repo settings do."""
        with self._lock:
            self.publishers.setdefault(resource, []).append(publisher)

    def ci_job(self, claims: dict[str, str], url: str) -> dict[str, str]:
        """The environment GitHub gives a job with ``id-token: write`` whose token carries ``claims``."""
        request_token = secrets.token_hex(16)
        with self._lock:
            self._jobs[request_token] = dict(claims)
        return {
            "ACTIONS_ID_TOKEN_REQUEST_URL": f"{url}/__oidc/github",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": request_token,
        }

    def mint_id_token(self, request_token: str, audience: str) -> str | None:
        with self._lock:
            claims = self._jobs.get(request_token)
            if claims is None:
                return None
            id_token = f"oidc_{secrets.token_hex(20)}"
            self._id_tokens[id_token] = (claims, audience)
            return id_token

    def claims(self, id_token: str) -> tuple[dict[str, str], str] | None:
        with self._lock:
            return self._id_tokens.get(id_token)


def id_token(request: Request) -> Response:
    """GitHub's side: an id token for the job whose request token is presented."""
    presented = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    audience = request.query.get("audience", [""])[0]
    minted = request.hub.oidc.mint_id_token(presented, audience)
    if minted is None:
        raise StoreError(401, "unknown ACTIONS_ID_TOKEN_REQUEST_TOKEN")
    return json_response({"value": minted, "count": 1})


def _invalid(error: str, description: str) -> Response:
    return json_response({"error": error, "error_description": description}, 400)


def exchange(request: Request) -> Response:
    """The Hub's ``/oauth/token``: an id token whose claims match a publisher -> a repo write token."""
    body = request.json()
    resource = body.get("resource")
    if body.get("grant_type") != EXCHANGE_GRANT or body.get("subject_token_type") != ID_TOKEN_TYPE:
        return _invalid("invalid_request", "grant_type / subject_token_type")
    if not isinstance(resource, str) or resource.count("/") not in (1, 2):
        return _invalid("invalid_request", "resource must be a repo: ns/name or TYPE/ns/name")
    found = request.hub.oidc.claims(str(body.get("subject_token", "")))
    if found is None or found[1] != request.hub.url:
        return _invalid("invalid_grant", "signature or audience check failed")
    publishers = request.hub.oidc.publishers.get(resource, [])
    if not any(p.matches(found[0]) for p in publishers):
        return _invalid("invalid_grant", "no publisher matches these claims")
    repo_id = resource.split("/", 1)[1] if resource.count("/") == 2 else resource
    token = request.hub.access.mint(Grant("write", (repo_id,)))
    return json_response(
        {
            "access_token": token,
            "token_type": "bearer",
            "expires_in": TOKEN_TTL,
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        }
    )
