"""Git LFS routes of the loopback Hub: batch, basic and multipart upload, verify.

Upload hrefs point back at this server (``/__lfs/...``) instead of a bucket. Every object is
hashed while it streams in and stored only when its sha256 and size match the batch request,
so a corrupted upload is rejected before any commit can reference it. Hrefs are signed for the
repo whose batch handed them out, and an upload makes the object reachable through that repo
only (``tenancy.py``); the batch answers "already stored" only for objects the repo holds, so it
never tells whether another repo has one.
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from hubrelease_loopback.store import MultipartUpload, RepoKey, StoreError
from hubrelease_loopback.wire import Request, Response, json_response

if TYPE_CHECKING:
    from hubrelease_loopback.served import ServedHub

_OID = re.compile(r"^[0-9a-f]{64}$")
LFS_CONTENT_TYPE = "application/vnd.git-lfs+json"
MAX_PARTS = 10_000
"""Most parts of a multipart upload (S3's limit, which the Hub's LFS storage has): a larger object
gets larger parts, so a batch answer stays small whatever size it names."""


def _size(request: Request) -> int:
    try:
        return int(request.query["size"][0])
    except (KeyError, ValueError):
        raise StoreError(400, "missing or invalid size") from None


def batch(request: Request) -> Response:
    key = request.require_repo()
    tenant = request.hub.store.tenant(key)
    repo = f"repo={quote(key.holder, safe='')}"
    body = request.json()
    if body.get("operation") != "upload":
        raise StoreError(400, "the loopback Hub's batch endpoint handles uploads only")
    hub = request.hub
    objects: list[dict[str, Any]] = []
    for item in request.typed(body, "objects", list, []):
        oid, size = (item.get("oid"), item.get("size")) if isinstance(item, dict) else (None, None)
        # A size past max_upload could never be sent, and its multipart URLs would not fit in memory.
        if (
            not isinstance(oid, str)
            or not _OID.match(oid)
            or not isinstance(size, int)
            or not 0 <= size <= hub.max_upload
        ):
            error = {"code": 422, "message": "bad oid or size"}
            objects.append({"oid": str(oid), "size": size if isinstance(size, int) else 0, "error": error})
            continue
        if hub.store.tenancy.has("lfs", oid, tenant) and hub.store.has_lfs(
            oid, size
        ):  # tenancy first (tenancy.py)
            objects.append({"oid": oid, "size": size})
            continue
        verify = {"href": f"{hub.url}/__lfs/verify?{repo}&sig={hub.access.sign(tenant)}"}
        if size > hub.multipart_threshold:
            upload_id = uuid.uuid4().hex
            plan = MultipartUpload(oid, size, upload_id, part_size(hub, size))
            header: dict[str, str] = {"chunk_size": str(plan.part_size)}
            part_sig = hub.access.sign(f"{oid}:{upload_id}:{size}")
            header.update(
                {
                    str(n): f"{hub.url}/__lfs/{oid}/{upload_id}/{n}?size={size}&sig={part_sig}"
                    for n in range(1, plan.parts + 1)
                }
            )
            done_sig = hub.access.sign(f"{tenant}|{oid}:{upload_id}:{size}")
            upload = {
                "href": f"{hub.url}/__lfs/{oid}/{upload_id}?size={size}&{repo}&sig={done_sig}",
                "header": header,
            }
        else:
            upload = {"href": upload_href(request.hub, key, oid, size)}
        objects.append(
            {"oid": oid, "size": size, "authenticated": True, "actions": {"upload": upload, "verify": verify}}
        )
    return json_response(
        {"transfer": "basic", "objects": objects}, headers={"Content-Type": LFS_CONTENT_TYPE}
    )


def upload_href(hub: ServedHub, key: RepoKey, oid: str, size: int) -> str:
    """The signed basic-transfer URL for ``oid`` through ``key`` (as the batch hands it out)."""
    sig = hub.access.sign(f"{hub.store.tenant(key)}|{oid}:{size}")
    return f"{hub.url}/__lfs/{oid}?size={size}&repo={quote(key.holder, safe='')}&sig={sig}"


def _signed(request: Request, value: str) -> None:
    """Upload hrefs carry no token (huggingface_hub sends none there): the batch signed them."""
    request.hub.access.check_signature(value, request.query.get("sig", [""])[0])


def _signed_tenant(request: Request, value: str) -> str:
    """The tenant (``HubStore.tenant``) an href was signed for, checked with ``value`` appended."""
    try:
        tenant = request.hub.store.tenant(RepoKey.from_holder(request.query["repo"][0]))
    except (KeyError, StoreError):
        raise StoreError(403, "bad or missing signature") from None
    _signed(request, f"{tenant}{value}")
    return tenant


def put_object(request: Request) -> Response:
    """Basic transfer: the whole object in one streamed PUT."""
    oid = request.arg("oid")
    tenant = _signed_tenant(request, f"|{oid}:{_size(request)}")
    request.hub.store.put_lfs(oid, _size(request), request.chunks)
    request.hub.store.tenancy.add("lfs", oid, tenant)
    return Response(200)


def part_size(hub: ServedHub, size: int) -> int:
    """The part size of a multipart upload of ``size`` bytes (the batch's ``chunk_size``)."""
    return max(hub.multipart_chunk, -(-size // MAX_PARTS))


def _upload(request: Request) -> MultipartUpload:
    oid, size = request.arg("oid"), _size(request)
    return MultipartUpload(oid, size, request.arg("upload"), part_size(request.hub, size))


def put_part(request: Request) -> Response:
    _signed(request, f"{request.arg('oid')}:{request.arg('upload')}:{_size(request)}")
    etag = request.hub.store.put_part(_upload(request), int(request.arg("part")), request.chunks)
    return Response(200, {"ETag": f'"{etag}"'})


def complete(request: Request) -> Response:
    oid = request.arg("oid")
    tenant = _signed_tenant(request, f"|{oid}:{request.arg('upload')}:{_size(request)}")
    body = request.json()
    if body.get("oid") != oid:
        raise StoreError(400, "completion oid does not match the upload")
    parts = body.get("parts")
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise StoreError(400, "parts must be a list of {partNumber, etag}")
    for part in parts:
        part["partNumber"] = request.number(part.get("partNumber"), "partNumber")
    request.hub.store.complete_multipart(_upload(request), parts)
    request.hub.store.tenancy.add("lfs", oid, tenant)
    return json_response({})


def verify(request: Request) -> Response:
    tenant = _signed_tenant(request, "")
    body = request.json()
    oid, size = str(body.get("oid")), body.get("size")
    store = request.hub.store
    if not (isinstance(size, int) and _OID.match(oid) and store.tenancy.has("lfs", oid, tenant)) or not (
        store.has_lfs(oid, size)  # asked only once the tenancy index said yes: one lookup for all outsiders
    ):
        raise StoreError(404, f"LFS object {oid} not found")
    return json_response({})
