"""The trusted-publishing routes: GitHub's id-token endpoint and the Hub's ``/oauth/token`` exchange.

The issuer's state and rules are ``oidc``; these answer requests with it, so they read the served
hub (``wire``) and ``oidc`` does not.
"""

from __future__ import annotations

from hubrelease_loopback.auth import Grant
from hubrelease_loopback.oidc import EXCHANGE_GRANT, ID_TOKEN_TYPE
from hubrelease_loopback.store import StoreError
from hubrelease_loopback.wire import Request, Response, json_response


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
    found = request.hub.oidc.redeem(str(body.get("subject_token", "")))
    if found is None or found[1] != request.hub.url:
        return _invalid("invalid_grant", "signature or audience check failed")
    publishers = request.hub.oidc.publishers.get(resource, [])
    if not any(p.matches(found[0]) for p in publishers):
        return _invalid("invalid_grant", "no publisher matches these claims")
    ttl = request.hub.oidc.token_ttl
    # The resource is a scope as the token file writes it ([TYPE/]ns/name): a dataset's token
    # writes that dataset, never the model of the same name.
    token = request.hub.access.mint(Grant("write", (resource,)), ttl=ttl)
    return json_response(
        {
            "access_token": token,
            "token_type": "bearer",
            "expires_in": ttl,
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        }
    )
