"""Statements of key signatures already verified on this machine, so an unchanged ``model.sig`` is
not verified again: ``sign`` finding it current and ``verify --signature`` then never import
model-signing (0.4-0.9 s) for a few milliseconds of ECDSA.

Stored as ``<release>/.hubrelease/signatures.json``, beside the stat cache and the verify plans. An
entry says: the bundle whose bytes have this sha256 verified under the EC public key with this
fingerprint (``identity.pem_fingerprint``), and its statement is this. Why reusing it is safe:

- ECDSA verification is a pure function of the bundle's bytes and the public key. The bytes are
  read and hashed on every use, and the fingerprint is taken from the key given now (the one any
  pinned identity was just held to), so a hit is the verdict model-signing gave for these very
  bytes and this very key: "this key signed these digests" still holds.
- An entry is written only after model-signing verified the bundle (or ``sign`` wrote it with the
  private key of that fingerprint), and only if the file had the same bytes and stat before and
  after: a signature replaced meanwhile is not recorded.
- An entry also holds ``model.sig``'s device, inode and ctime, which the kernel sets when the file is
  written here: a ``.hubrelease/`` that came with a download or a copy (the folder cannot vouch for
  itself) never matches, so nobody but this machine's own runs can put a verdict here.
- Only key signatures: a certificate chain's verdict also depends on the verifier's trust store and
  the time, a keyless one on Rekor and the trust root.

A cache that cannot be read is ignored, one that cannot be written just means no cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from hubrelease import __version__
from hubrelease.fsutil import STATE_DIR, atomic_write_text
from hubrelease.safe_parse import ScreenError, parse_json
from hubrelease.signing.statement import SignedFiles

CACHE_NAME = "signatures.json"
_FORMAT = f"hubrelease-signatures-1/{__version__}"
_KEEP = 8  # entries kept (a few keys, or signatures of a few manifests)
_MAX_BUNDLE = 1 << 20  # a bundle is a few kB (a chain of certificates included); larger ones are not cached


class Seen(NamedTuple):
    """What identifies a signature file's bytes here: their sha256 and the file's stat."""

    sha256: str
    stat: tuple[int, int, int, int, int]


def seen(path: Path) -> Seen | None:
    """The bytes' digest and the stat of the same open file (None: unreadable or too large)."""
    try:
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            data = handle.read(_MAX_BUNDLE + 1)
    except OSError:
        return None
    if len(data) > _MAX_BUNDLE:
        return None
    stat = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return Seen(hashlib.sha256(data).hexdigest(), stat)


def _key(seen: Seen, tag: str) -> str:
    """An entry's key: what it is about (a key's fingerprint, a view) and the signature file it is bound to."""
    return json.dumps([tag, seen.sha256, *seen.stat])


def _cache_file(signature: Path) -> Path:
    return signature.parent / STATE_DIR / CACHE_NAME


def _entries(path: Path) -> dict[str, Any]:
    try:
        stored = parse_json(path.read_bytes())
    except (OSError, ScreenError):
        return {}
    if not isinstance(stored, dict) or stored.get("format") != _FORMAT:
        return {}
    entries = stored.get("entries")
    return entries if isinstance(entries, dict) else {}


def _lookup(signature: Path, seen: Seen | None, fingerprint: str) -> SignedFiles | None:
    if seen is None:
        return None
    entry = _entries(_cache_file(signature)).get(_key(seen, fingerprint))
    try:
        digests, ignore_paths, method, hash_type, name, root_digest = entry  # type: ignore[misc]
        if not isinstance(digests, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in digests.items()
        ):
            return None
        return SignedFiles(
            dict(digests),
            tuple(map(str, ignore_paths)),
            str(method),
            str(hash_type),
            str(name),
            str(root_digest),
        )
    except (TypeError, ValueError):  # no entry (None), or one of another shape
        return None


def _store(signature: Path, seen: Seen, fingerprint: str, signed: SignedFiles) -> None:
    _put(
        _cache_file(signature),
        _key(seen, fingerprint),
        [signed.digests, list(signed.ignore_paths), *signed[2:]],
    )


def _put(path: Path, key: str, value: object) -> None:
    entries = {k: v for k, v in _entries(path).items() if k != key}
    entries = dict(list(entries.items())[-(_KEEP - 1) :])
    entries[key] = value
    with contextlib.suppress(OSError):
        path.parent.mkdir(exist_ok=True)
        atomic_write_text(path, json.dumps({"format": _FORMAT, "entries": entries}, separators=(",", ":")))


def recall(signature: Path, fingerprint: str) -> SignedFiles | None:
    """The statement of ``signature`` if these bytes verified here under the key ``fingerprint``."""
    return _lookup(signature, seen(signature), fingerprint)


def verified(signature: Path, fingerprint: str, verify: Callable[[], SignedFiles]) -> SignedFiles:
    """``recall``, else ``verify()`` (model-signing under that key), remembered when the file held still."""
    before = seen(signature)
    hit = _lookup(signature, before, fingerprint)
    if hit is not None:
        return hit
    signed = verify()
    if before is not None and seen(signature) == before:
        _store(signature, before, fingerprint, signed)
    return signed


def recall_value(signature: Path, seen: Seen | None, tag: str) -> object:
    """What ``store_value`` stored for ``tag`` beside these very signature bytes and file (None: nothing)."""
    return None if seen is None else _entries(_cache_file(signature)).get(_key(seen, tag))


def store_value(signature: Path, seen: Seen, tag: str, value: object) -> None:
    """Keep ``value`` (JSON) for ``tag``, bound to the signature's bytes and file as every entry here."""
    _put(_cache_file(signature), _key(seen, tag), value)


def remember(signature: Path, fingerprint: str, signed: SignedFiles, written: bytes) -> None:
    """Record a signature ``sign`` just wrote with the private key of ``fingerprint`` (if still those bytes)."""
    now = seen(signature)
    if now is not None and now.sha256 == hashlib.sha256(written).hexdigest():
        _store(signature, now, fingerprint, signed)
