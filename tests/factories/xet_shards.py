"""A tenant attacking another on the loopback Hub: Xet bodies as the real client sent them, kept to
replay tampered (recorded shards and xorbs, a shard's sha256 claim rewritten), a CAS token and a
commit line naming any LFS oid, sent over raw HTTP."""

from __future__ import annotations

import io
import json

import pytest

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.upload_sink import Readable, sink
from hubrelease_loopback.xetstore import MAX_XORB_BYTES, Caller, XetStore
from tests.factories.hub import raw_request


class ShardRecorder:
    """Keeps the bodies the real client uploads to ``xet`` (an in-process Hub's store), to replay them."""

    def __init__(self, xet: XetStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.xorbs: dict[str, bytes] = {}
        self.shards: list[bytes] = []
        put_xorb, put_shard = xet.put_xorb, xet.put_shard

        def xorb(name: str, source: Readable, tenant: str) -> bool:
            body = io.BytesIO()
            sink(source, [body.write], MAX_XORB_BYTES)
            self.xorbs[name] = body.getvalue()
            return put_xorb(name, io.BytesIO(self.xorbs[name]), tenant)

        def shard(data: bytes, caller: Caller) -> int:
            self.shards.append(data)
            return put_shard(data, caller)

        monkeypatch.setattr(xet, "put_xorb", xorb)
        monkeypatch.setattr(xet, "put_shard", shard)


def merkle_bytes(digest: str) -> bytes:
    """The 32 bytes a shard stores for a hash written as Xet hex (``xetformat.hash_hex`` inverted)."""
    return b"".join(bytes.fromhex(digest[i : i + 16])[::-1] for i in range(0, 64, 16))


def claim(shard: bytes, sha256: str, instead: str) -> bytes:
    """``shard`` with its file's sha256 metadata record claiming ``instead`` (the rest untouched)."""
    record = merkle_bytes(sha256)
    assert shard.count(record) == 1, "the shard holds that sha256 once"
    return shard.replace(record, merkle_bytes(instead))


def cas_auth(hub: LoopbackHub, repo: str, token: str | None, write: bool = False) -> dict[str, str]:
    """The ``Authorization`` header of a Xet CAS token for ``repo``, minted with the Hub ``token``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    route = "xet-write-token" if write else "xet-read-token"
    status, _, text = raw_request(f"{hub.url}/api/models/{repo}/{route}/main", headers=headers)
    assert status == 200, text
    return {"Authorization": f"Bearer {json.loads(text)['accessToken']}"}


def commit_line(
    hub: LoopbackHub, repo: str, sha: str, size: int | None, token: str | None = None
) -> tuple[int, bytes]:
    """Commit one ``lfsFile`` line naming ``sha`` as ``stolen.safetensors`` (no size: as a copy)."""
    value: dict[str, object] = {"path": "stolen.safetensors", "algo": "sha256", "oid": sha}
    if size is not None:
        value["size"] = size
    lines = [{"key": "header", "value": {"summary": "steal"}}, {"key": "lfsFile", "value": value}]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    headers = {"Content-Type": "application/x-ndjson"} | (
        {"Authorization": f"Bearer {token}"} if token else {}
    )
    status, _, text = raw_request(f"{hub.url}/api/models/{repo}/commit/main", "POST", body, headers)
    return status, text
