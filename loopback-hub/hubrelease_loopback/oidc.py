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
to that one repo for ``expires_in`` seconds. How a run's token carries them (GitHub's OIDC
reference): ``repository``, ``ref`` (``refs/heads/B`` on a branch, ``refs/tags/T`` on a tag: no
branch), ``workflow_ref`` (``OWNER/REPO/.github/workflows/FILE@REF``), ``environment`` (the job's
deployment environment, absent without one). A publisher here may also pin ``environment`` (as
PyPI's GitHub publishers do) and ``ref`` (a glob such as ``refs/tags/v*``, for tag publishes).

Here the id token is an opaque random string standing for the signed JWT: ``ci_job(claims)`` is
what GitHub does when a job with ``id-token: write`` starts (it returns the two environment
values), the exchange checks the claims the job was started with. An id token is exchanged at
most once (the exchange redeems it, matching or not), and the token it gives expires after
``expires_in`` (``Access.mint``'s ttl), as a real one does.

The two routes (GitHub's id-token endpoint, the Hub's exchange) are ``oidc_routes``.

``hub serve --trusted-publishers FILE`` reads both sides from a file (``read_trust_file``): a
``publisher RESOURCE KEY=VALUE...`` line per publisher (keys: repository, workflow, branch, ref,
environment), a ``job REQUEST_TOKEN KEY=VALUE...`` line per CI job a rehearsal starts (the claims
its id tokens carry), ``#`` comments.
"""

from __future__ import annotations

import fnmatch
import secrets
import threading
from dataclasses import dataclass, fields
from pathlib import Path

EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_TTL = 3600


@dataclass(frozen=True)
class Publisher:
    """A repo's trusted publisher: the claims that must match (None: not pinned)."""

    repository: str
    branch: str | None = None
    workflow: str | None = None
    environment: str | None = None
    ref: str | None = None
    """A glob over the full ref (``refs/tags/v*``); ``branch`` is the Hub's exact branch name."""

    def matches(self, claims: dict[str, str]) -> bool:
        ref = claims.get("ref", "")
        branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
        workflow = claims.get("workflow_ref", "").split("@", 1)[0].rpartition("/")[2]
        return (
            claims.get("repository") == self.repository
            and (self.branch is None or branch == self.branch)
            and (self.workflow is None or workflow == self.workflow)
            and (self.environment is None or claims.get("environment") == self.environment)
            and (self.ref is None or fnmatch.fnmatchcase(ref, self.ref))
        )


class TrustFileError(ValueError):
    """A trust file line that is neither a ``publisher`` nor a ``job`` line."""


PUBLISHER_KEYS = frozenset(f.name for f in fields(Publisher))
CLAIM_KEYS = frozenset({"repository", "ref", "workflow_ref", "environment"})


class TrustedPublishing:
    """Publishers per Hub resource, running CI jobs and the id tokens they minted; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.publishers: dict[str, list[Publisher]] = {}
        self._jobs: dict[str, dict[str, str]] = {}
        self._id_tokens: dict[str, tuple[dict[str, str], str]] = {}
        self.token_ttl = TOKEN_TTL
        """Seconds an exchanged token writes (the answer's ``expires_in``)."""

    def trust(self, resource: str, publisher: Publisher) -> None:
        """Add ``publisher`` to ``resource`` (``ns/name``, ``datasets/ns/name``), as repo settings do."""
        with self._lock:
            self.publishers.setdefault(resource, []).append(publisher)

    def start_job(self, request_token: str, claims: dict[str, str]) -> None:
        """A CI job whose ``ACTIONS_ID_TOKEN_REQUEST_TOKEN`` is ``request_token`` mints id tokens with ``claims``."""
        with self._lock:
            self._jobs[request_token] = dict(claims)

    def ci_job(self, claims: dict[str, str], url: str) -> dict[str, str]:
        """The environment GitHub gives a job with ``id-token: write`` whose token carries ``claims``."""
        request_token = secrets.token_hex(16)
        self.start_job(request_token, claims)
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

    def redeem(self, id_token: str) -> tuple[dict[str, str], str] | None:
        """The claims and audience of ``id_token``, once: a replayed id token is unknown."""
        with self._lock:
            return self._id_tokens.pop(id_token, None)


def read_trust_file(path: Path) -> TrustedPublishing:
    """Publishers and CI jobs from a trust file (module docstring); TrustFileError names the bad line."""
    trusted = TrustedPublishing()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        pairs = dict(word.partition("=")[::2] for word in words[2:])
        allowed = {"publisher": PUBLISHER_KEYS, "job": CLAIM_KEYS}.get(words[0], frozenset())
        well_formed = all(key and value for key, value in pairs.items()) and len(pairs) == len(words) - 2
        if not (len(words) > 2 and well_formed and "repository" in pairs and pairs.keys() <= allowed):
            raise TrustFileError(
                f"{path}:{number}: expected 'publisher RESOURCE repository=OWNER/REPO [KEY=VALUE ...]' "
                f"(keys: {', '.join(sorted(PUBLISHER_KEYS))}) or 'job REQUEST_TOKEN repository=OWNER/REPO "
                f"[KEY=VALUE ...]' (keys: {', '.join(sorted(CLAIM_KEYS))})"
            )
        if words[0] == "publisher":
            trusted.trust(words[1], Publisher(**pairs))
        else:
            trusted.start_job(words[1], pairs)
    return trusted
