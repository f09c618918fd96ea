"""Xet routes of the loopback Hub: access tokens on the Hub side, the CAS API on ``/__xet``.

What hf_xet (huggingface_hub >= 1.20 picks it whenever it is installed) calls, from huggingface_hub's
``utils/_xet.py`` and xet-core's ``xet_client/src/cas_client/remote_client.rs`` and
``openapi/cas.openapi.yaml``:

- ``GET /api/{t}s/{id}/xet-write-token/{rev}`` and ``xet-read-token``: the token in ``X-Xet-Cas-Url``,
  ``X-Xet-Access-Token``, ``X-Xet-Token-Expiration`` and as JSON ``{accessToken, exp, casUrl}``;
- ``POST {cas}/v1/xorbs/default/{hash}`` (a xorb) and ``POST {cas}/v1/shards`` (the files); the client
  tries ``/v2/shards`` and ``/v2/reconstructions`` first and falls back to v1 on 404;
- ``GET {cas}/v1/chunks/default/{hash}``: the global dedup probe (a shard of xorb records, 404 = not
  known) for a file's first chunk and chunks whose hash is 0 mod 1024;
- ``GET {cas}/v1/reconstructions/{file}`` (``Range`` optional): terms and byte ranges of xorbs, which
  the client then fetches from the signed ``/__xet/fetch/{xorb}`` URLs with a ``Range`` header.
"""

from __future__ import annotations

import re

from hubrelease.loopback.store import StoreError
from hubrelease.loopback.wire import Request, Response, json_response
from hubrelease.loopback.xetstore import MAX_SHARD_BYTES

_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


def cas_url(request: Request) -> str:
    return f"{request.hub.url}/__xet"


def _token(request: Request, write: bool) -> Response:
    key = request.require_repo()
    revision = request.arg("rev")
    if revision != "None" and not request.flag("create_pr"):
        request.hub.store.resolve(key, revision)  # 404 RevisionNotFound as the Hub answers
    token, expires = request.hub.xet.mint(key, write, request.hub.faults.xet_token_epoch)
    url = cas_url(request)
    headers = {"X-Xet-Cas-Url": url, "X-Xet-Access-Token": token, "X-Xet-Token-Expiration": str(expires)}
    return json_response({"accessToken": token, "exp": expires, "casUrl": url}, headers=headers)


def write_token(request: Request) -> Response:
    return _token(request, write=True)


def read_token(request: Request) -> Response:
    return _token(request, write=False)


def _authorize(request: Request, write: bool) -> None:
    request.hub.xet.check(request.headers.get("authorization", ""), write, request.hub.faults.xet_token_epoch)


def upload_xorb(request: Request) -> Response:
    _authorize(request, write=True)
    if request.arg("prefix") != "default":
        raise StoreError(400, "the xorb prefix must be 'default'")
    inserted = request.hub.xet.put_xorb(request.arg("hash"), request.chunks)
    return json_response({"was_inserted": inserted})


def upload_shard(request: Request) -> Response:
    _authorize(request, write=True)
    if len(request.body) > MAX_SHARD_BYTES:
        raise StoreError(413, f"shard larger than {MAX_SHARD_BYTES} bytes")
    new = request.hub.xet.put_shard(request.body)
    return json_response({"result": 1 if new else 0})


def dedup_probe(request: Request) -> Response:
    """Global dedup: a shard naming the stored xorb that holds this chunk, so the client skips it."""
    _authorize(request, write=False)
    shard = request.hub.xet.dedup_shard(request.arg("hash"))
    if shard is None:
        raise StoreError(404, "chunk not tracked by global deduplication")
    return Response(200, {"Content-Type": "application/octet-stream"}, shard)


def reconstruction(request: Request) -> Response:
    _authorize(request, write=False)
    first, last = 0, None
    spec = request.headers.get("range", "")
    if spec:
        found = _RANGE.match(spec)
        if found is None:
            raise StoreError(400, f"invalid Range {spec!r}")
        first, last = int(found[1]), int(found[2]) if found[2] else None
    base = f"{request.hub.url}/__xet/fetch"
    payload = request.hub.xet.reconstruction(request.arg("file"), first, last, base)
    for xorb, entries in payload["fetch_info"].items():
        for entry in entries:
            entry["url"] += f"?sig={request.hub.access.sign(xorb)}"
    return json_response(payload)


def fetch_xorb(request: Request) -> Response:
    """Bytes of a stored xorb, for a URL a reconstruction signed (the client sends no token here)."""
    xorb = request.arg("hash")
    request.hub.access.check_signature(xorb, request.query.get("sig", [""])[0])
    path = request.hub.xet.xorb_path(xorb)
    if not path.is_file():
        raise StoreError(404, f"xorb {xorb} not found")
    size = path.stat().st_size
    found = _RANGE.match(request.headers.get("range", ""))
    if found is None:
        return Response(200, {"Content-Type": "application/octet-stream"}, file=path, length=size)
    start = int(found[1])
    end = min(int(found[2]), size - 1) if found[2] else size - 1
    if start > end:
        return Response(416, {"Content-Range": f"bytes */{size}"})
    headers = {"Content-Type": "application/octet-stream", "Content-Range": f"bytes {start}-{end}/{size}"}
    return Response(206, headers, file=path, offset=start, length=end - start + 1)


def telemetry(request: Request) -> Response:
    """hf_xet posts transfer statistics; accepted and dropped, as a CAS with telemetry off does."""
    return Response(200)
