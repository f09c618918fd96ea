"""Xet routes of the loopback Hub: access tokens on the Hub side, the CAS API on ``/__xet``.

What hf_xet (huggingface_hub >= 1.20 picks it whenever it is installed) calls, from huggingface_hub's
``utils/_xet.py`` and xet-core's ``xet_client/src/cas_client/remote_client.rs`` and
``openapi/cas.openapi.yaml``:

- ``GET /api/{t}s/{id}/xet-write-token/{rev}`` and ``xet-read-token``: the token in ``X-Xet-Cas-Url``,
  ``X-Xet-Access-Token``, ``X-Xet-Token-Expiration`` and as JSON ``{accessToken, exp, casUrl}``; the
  CAS URL is ``/__xet/{store id}`` (``cas_url``), and ``{cas}`` below is it;
- a xorb through an upload grant (hf_xet >= 1.8, xet-core ``xet_client`` README "Xorb uploads"):
  ``POST {cas}/v1/xorb-grants/default/{hash}`` with ``{length, checksum}`` -> 201 ``{id, method,
  url, headers}`` (200: already stored), the xorb sent to that URL with no CAS token, then
  ``POST {cas}/v1/xorb-commits/default/{hash}/grant/{id}``; or directly, ``POST {cas}/v1/xorbs/default/{hash}``;
- ``POST {cas}/v2/shards`` (the files; an NDJSON stream of ``validating``/``committing`` frames
  ending in ``result`` or ``error``, xet-core ``cas_types`` ``ShardUploadEvent``), or ``/v1/shards``;
  ``/v2/reconstructions`` is answered 404, on which the client falls back to v1;
- ``GET {cas}/v1/chunks/default/{hash}``: the global dedup probe (a shard of xorb records, 404 = not
  known) for a file's first chunk and chunks whose hash is 0 mod 1024;
- ``GET {cas}/v1/reconstructions/{file}`` (``Range`` optional): terms and byte ranges of xorbs, which
  the client then fetches from the ``/__xet/fetch/{xorb}`` URLs, each signed for one byte range,
  with a ``Range`` header.
"""

from __future__ import annotations

import json
import secrets

from hubrelease_loopback import gating
from hubrelease_loopback.auth import EVERYTHING
from hubrelease_loopback.store import StoreError
from hubrelease_loopback.wire import Request, Response, json_response, parse_range
from hubrelease_loopback.xetstore import MAX_SHARD_BYTES, MAX_XORB_BYTES, Caller


def cas_url(request: Request) -> str:
    """The CAS endpoint, named by the root's store id: hf_xet keys its local shard cache by this URL
    (xet-core ``xet_data/src/processing/configurations.rs`` ``compute_cache_path``, lines 196-208), so a
    server restarted on the same port with a fresh root is a new CAS to the client, whose cache then
    claims no xorb only the old root held."""
    return f"{request.hub.url}/__xet/{request.hub.xet.store_id}"


def _token(request: Request, write: bool) -> Response:
    key = request.require_repo()
    if not write:
        gating.require_access(request, key)  # the read token fetches files: a gated repo's need access
    revision = request.arg("rev")
    if revision != "None" and not request.flag("create_pr"):
        request.hub.store.resolve(key, revision)  # 404 RevisionNotFound as the Hub answers
    # On an open test Hub any token reads and writes everything (``auth.py``): a client that sent none
    # gets that reach too, else its hf_xet shard cache, naming xorbs it uploaded to another repo, would
    # make its next push of the same bytes fail.
    grant = request.grant or (EVERYTHING if request.hub.access.open else None)
    token, expires = request.hub.xet.mint(key, write, request.hub.faults.xet_token_epoch, grant)
    url = cas_url(request)
    headers = {"X-Xet-Cas-Url": url, "X-Xet-Access-Token": token, "X-Xet-Token-Expiration": str(expires)}
    return json_response({"accessToken": token, "exp": expires, "casUrl": url}, headers=headers)


def write_token(request: Request) -> Response:
    return _token(request, write=True)


def read_token(request: Request) -> Response:
    return _token(request, write=False)


def _authorize(request: Request, write: bool) -> Caller:
    """Who sent the request's Xet token (``XetStore.check``); a URL naming another root's store id
    is answered as a stale token."""
    if request.params.get("store", request.hub.xet.store_id) != request.hub.xet.store_id:
        raise StoreError(401, "Xet access token missing, invalid or expired")
    return request.hub.xet.check(
        request.headers.get("authorization", ""), write, request.hub.faults.xet_token_epoch
    )


def _prefix(request: Request) -> None:
    if request.arg("prefix") != "default":
        raise StoreError(400, "the xorb prefix must be 'default'")


def upload_xorb(request: Request) -> Response:
    caller = _authorize(request, write=True)
    _prefix(request)
    inserted = request.hub.xet.put_xorb(request.arg("hash"), request.chunks, caller.tenant)
    return json_response({"was_inserted": inserted})


def xorb_grant(request: Request) -> Response:
    """201 and where to send the xorb; 200 if the token's repo already reaches it (others' copies
    are not revealed: their owner uploads once more, proving it has the bytes)."""
    caller = _authorize(request, write=True)
    _prefix(request)
    xorb = request.arg("hash")
    length = request.number(request.json().get("length"), "length")
    if length > MAX_XORB_BYTES:
        raise StoreError(413, f"xorb larger than {MAX_XORB_BYTES} bytes")
    xet = request.hub.xet
    if xet.reaches("xorb", xorb, caller) and xet.has_xorb(xorb):  # reach first: one lookup for all
        xet.store.tenancy.add("xorb", xorb, caller.tenant)
        return json_response({"was_inserted": False})
    grant_id = secrets.token_hex(16)
    xet.grants.put(grant_id, (caller.tenant, xorb, length, False))
    url = f"{request.hub.url}/__xet/grant-uploads/{grant_id}?sig={request.hub.access.sign(grant_id)}"
    return json_response({"id": grant_id, "method": "PUT", "url": url, "headers": {}}, 201)


def xorb_grant_upload(request: Request) -> Response:
    """The grant URL: no CAS token (the client sends none), a signature instead; one xorb of the
    declared length, checked as a direct upload is."""
    grant_id = request.arg("grant")
    request.hub.access.check_signature(grant_id, request.query.get("sig", [""])[0])
    found = request.hub.xet.grants.get(grant_id)
    if found is None:
        raise StoreError(403, "upload grant unknown or expired")
    tenant, xorb, length, done = found
    if done:
        return Response(412)  # already uploaded for this grant: the client counts it as done
    declared = request.headers.get("content-length")
    if declared is not None and declared != str(length):
        raise StoreError(400, f"the grant is for {length} bytes, not {declared}")
    request.hub.xet.put_xorb(xorb, request.chunks, tenant)
    request.hub.xet.grants.put(grant_id, (tenant, xorb, length, True))
    return Response(200)


def xorb_commit(request: Request) -> Response:
    caller = _authorize(request, write=True)
    _prefix(request)
    found = request.hub.xet.grants.get(request.arg("grant"))
    if found is None or found[:2] != (caller.tenant, request.arg("hash")) or not found[3]:
        raise StoreError(404, "no data was uploaded for this grant")
    request.hub.xet.grants.pop(request.arg("grant"))
    return json_response({"was_inserted": True})


def _shard(request: Request) -> int:
    caller = _authorize(request, write=True)
    if len(request.body) > MAX_SHARD_BYTES:
        raise StoreError(413, f"shard larger than {MAX_SHARD_BYTES} bytes")
    return request.hub.xet.put_shard(request.body, caller)


def upload_shard(request: Request) -> Response:
    return json_response({"result": 1 if _shard(request) else 0})


def upload_shard_v2(request: Request) -> Response:
    """The NDJSON progress stream of ``/v2/shards``: a refused shard is a 200 ending in an
    ``error`` frame, as the CAS answers once the stream has started."""
    frames: list[dict[str, object]] = [{"type": "validating", "verified": 0, "total": 1}]
    try:
        _shard(request)
    except StoreError as exc:
        if exc.status in (401, 403):
            raise
        frames.append({"type": "error", "message": exc.message, "retryable": exc.status >= 500})
    else:
        frames += [
            {"type": "validating", "verified": 1, "total": 1},
            {"type": "committing", "stage": "uploading"},
            {"type": "committing", "stage": "syncing"},
            {"type": "result"},
        ]
    body = b"".join(json.dumps(frame).encode() + b"\n" for frame in frames)
    return Response(200, {"Content-Type": "application/x-ndjson"}, body)


def dedup_probe(request: Request) -> Response:
    """Dedup: a shard naming a xorb the token's repo reaches that holds this chunk, so the client skips it."""
    caller = _authorize(request, write=False)
    shard = request.hub.xet.dedup_shard(request.arg("hash"), caller)
    if shard is None:
        raise StoreError(404, "chunk not tracked by global deduplication")
    return Response(200, {"Content-Type": "application/octet-stream"}, shard)


def reconstruction(request: Request) -> Response:
    caller = _authorize(request, write=False)
    first, last = 0, None
    spec = request.headers.get("range", "")
    if spec:
        if not spec.startswith("bytes=") or spec.startswith("bytes=-") or "," in spec:
            raise StoreError(400, f"invalid Range {spec!r}")
        size = request.hub.xet.reconstructed_size(request.arg("file"), caller)
        span = parse_range(spec, size)
        if span is None:
            raise StoreError(400, f"invalid Range {spec!r}")
        first, last = span
    base = f"{request.hub.url}/__xet/fetch"
    payload = request.hub.xet.reconstruction(request.arg("file"), first, last, base, caller)
    for xorb, entries in payload["fetch_info"].items():
        for entry in entries:
            signed = f"{entry['url_range']['start']}-{entry['url_range']['end']}"
            entry["url"] += f"?range={signed}&sig={request.hub.access.sign(f'{xorb}|{signed}')}"
    return json_response(payload)


def fetch_xorb(request: Request) -> Response:
    """Bytes of a stored xorb, for a URL a reconstruction signed (the client sends no token here).

    The signature binds the byte range the reconstruction named, not the whole xorb: a xorb may also
    hold chunks of files the reader cannot reach (its uploader's dedup mixed them), which a URL for
    one file must not serve. hf_xet asks exactly that range (``remote_client.rs``, ``range_header``).
    """
    xorb, signed = request.arg("hash"), request.query.get("range", [""])[0]
    request.hub.access.check_signature(f"{xorb}|{signed}", request.query.get("sig", [""])[0])
    low, high = (int(n) for n in signed.split("-", 1))  # signed above: "START-END" as we wrote it
    path = request.hub.xet.xorb_path(xorb)
    if not path.is_file():
        raise StoreError(404, f"xorb {xorb} not found")
    size = path.stat().st_size
    try:
        span = parse_range(request.headers.get("range", ""), size)
    except StoreError:
        return Response(416, {"Content-Range": f"bytes */{size}"})
    start, end = span if span is not None else (low, min(high, size - 1))
    if not low <= start <= end <= high:
        raise StoreError(403, f"this URL is signed for bytes {signed} of xorb {xorb}")
    headers = {"Content-Type": "application/octet-stream", "Content-Range": f"bytes {start}-{end}/{size}"}
    return Response(206, headers, file=path, offset=start, length=end - start + 1)


def telemetry(request: Request) -> Response:
    """hf_xet posts transfer statistics; accepted and dropped, as a CAS with telemetry off does."""
    return Response(200)
