"""The OMS statement of a release: built from (repo path, sha256) pairs, read back from a bundle.

model-signing's own classes build it (``manifest.Manifest``, ``SerializationType``, ``signing.Payload``),
so resource names, their order (model-signing sorts ``PurePosixPath`` keys, not strings), the
root digest and the serialization block are exactly what ``model_signing sign`` would write for a
folder holding those files. What model-signing lacks is a way to build it from digests already
known: its ``hashing.Config.hash`` reads every byte again.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from hubrelease.errors import CheckFailed, InputError
from hubrelease.fsutil import STATE_DIR
from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.safe_parse import ScreenError, parse_json
from hubrelease.signing.extra import required

if TYPE_CHECKING:
    from model_signing import manifest as oms_manifest
    from model_signing._signing import signing as oms_signing

# model_signing.hashing.Config.hash skips these unless --no-ignore-git-paths (model-signing 1.1.1
# hashing.py, ``_ignore_git_paths``); `model_signing sign` records them, and its --signature file, in
# serialization.ignore_paths (_serialization/file.py, "Recreate serialization_description").
GIT_PATHS = (".git", ".gitattributes", ".github", ".gitignore")
# `hf download --local-dir` keeps its metadata here (huggingface_hub _local_folder.py); verify re-applies
# recorded ignore paths (verifying.py, ``add_ignored_paths``), so a download verifies as it came.
HF_LOCAL_DIR_CACHE = ".cache/huggingface"
# hubrelease's own state (stat cache, verify plans): `hubrelease verify` of a download writes it there,
# and a `model_signing verify` after it must not take it for model files. Never published (fsutil).
IGNORE_PATHS = (*GIT_PATHS, HF_LOCAL_DIR_CACHE, STATE_DIR, SIGNATURE_NAME)
HASH_TYPE = "sha256"


class SignedFiles(NamedTuple):
    """What a signature's statement says: each resource's digest and how they were taken."""

    digests: dict[str, str]
    """Resource name (repo path) -> hex digest."""
    ignore_paths: tuple[str, ...]
    method: str
    hash_type: str
    name: str
    """The subject's name: informational (model-signing compares resources only)."""
    root_digest: str
    """The subject's sha256: over the resources' raw digests in order (spec §6.5.1)."""


def ignored(path: str) -> str | None:
    """The ignore path that hides ``path`` from ``model_signing verify``, if any."""
    return next((p for p in IGNORE_PATHS if path == p or path.startswith(p + "/")), None)


def payload(name: str, digests: Mapping[str, str]) -> oms_signing.Payload:
    """The statement for files at repo paths with these sha256 digests, as model-signing builds it."""
    with required():
        from model_signing import manifest as oms_manifest
        from model_signing._hashing.hashing import Digest
        from model_signing._signing import signing as oms_signing
    hidden = sorted(p for p in digests if ignored(p))
    if hidden:
        raise InputError(
            f"{hidden[0]}: published, but `model_signing verify` skips {ignored(hidden[0])!r}, so a "
            "signature over it could never verify; publish it under another path"
        )
    serialization = oms_manifest.SerializationType.from_args(
        {
            "method": "files",
            "hash_type": HASH_TYPE,
            "allow_symlinks": False,
            "ignore_paths": list(IGNORE_PATHS),
        }
    )
    items = [
        serialization.new_item(path, Digest(HASH_TYPE, bytes.fromhex(sha))) for path, sha in digests.items()
    ]
    return oms_signing.Payload(oms_manifest.Manifest(name, items, serialization))


def signed_files(manifest: oms_manifest.Manifest) -> SignedFiles:
    """The statement's content, from the manifest model-signing rebuilt from it."""
    args = manifest.serialization_type
    resources = list(manifest.resource_descriptors())
    # The subject digest as Payload computes it: sha256 over the raw digests in resource order.
    root = hashlib.sha256(b"".join(r.digest.digest_value for r in resources)).hexdigest()
    return SignedFiles(
        # `model_signing verify` hashes with sha256 whatever the statement says (hashing.py:278-281
        # defaults, set by _cli.py:749-758) and compares digests with their algorithm (manifest.py:442,
        # hashing's Digest): a resource signed under another algorithm never matches a file.
        {
            r.identifier: r.digest.digest_hex
            if r.digest.algorithm == HASH_TYPE
            else f"{r.digest.algorithm}:{r.digest.digest_hex}"
            for r in resources
        },
        tuple(str(p) for p in args.get("ignore_paths", ())),
        str(args["method"]),
        str(args["hash_type"]),
        manifest.model_name,
        root,
    )


def from_statement(data: dict[str, object], where: Path) -> SignedFiles:
    """A decoded in-toto statement -> its files; model-signing checks the predicate and the root digest."""
    with required():
        from model_signing._signing import signing as oms_signing
    try:
        return signed_files(oms_signing.dsse_payload_to_manifest(data))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise InputError(f"not an OpenSSF model signature: {_reason(exc)}", path=where) from None


def read_unverified(path: Path) -> SignedFiles:
    """The statement inside a bundle, without checking who signed it (push compares it with its plan)."""
    return statement_in(path.read_bytes(), path)


def statement_in(text: bytes, path: Path) -> SignedFiles:
    """``read_unverified`` of a bundle's bytes (``path``: where they are, for the error)."""
    try:
        bundle = parse_json(text)
        envelope = bundle["dsseEnvelope"]
        if envelope["payloadType"] != "application/vnd.in-toto+json":
            raise ValueError(f"DSSE payload type {envelope['payloadType']!r}, not in-toto JSON")
        data = parse_json(base64.b64decode(envelope["payload"], validate=True))
    except (KeyError, TypeError, ValueError, binascii.Error, ScreenError) as exc:
        raise InputError(f"not a Sigstore bundle with a DSSE envelope: {_reason(exc)}", path=path) from None
    if not isinstance(data, dict):
        raise InputError("the DSSE payload is not an in-toto statement", path=path)
    return from_statement(data, path)


def _reason(exc: BaseException) -> str:
    return f"missing {exc}" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__


def differences(signed: SignedFiles, observed: Mapping[str, str | None]) -> list[tuple[str, str]]:
    """(path, problem) for every way ``observed`` (repo path -> sha256 now) is not what was signed.

    ``model_signing verify`` of a download refuses each of these: a file signed but absent
    ("Missing files"), present but unsigned ("Extra files"), or with other bytes ("Hash mismatch").
    """
    problems: list[tuple[str, str]] = []
    # Only the method decides what model_signing compares (per-file items, manifest.py:442); the
    # statement's hash_type is informational there, the resources' own algorithms are not.
    if signed.method != "files":
        problems.append(
            (
                SIGNATURE_NAME,
                f"signed per {signed.method!r}: hubrelease compares whole-file sha256 digests only; "
                "check it with `model_signing verify`",
            )
        )
        return problems
    for path in sorted(set(signed.digests) | set(observed)):
        want, have = signed.digests.get(path), observed.get(path)
        if want is None:
            problems.append((path, "published but not signed"))
        elif path not in observed:
            problems.append((path, "signed but not published"))
        elif have is None:
            problems.append((path, "signed, but missing or unreadable"))
        elif have != want:
            problems.append((path, f"sha256 {have} is not the signed {want}"))
    return problems


def signs(signed: SignedFiles, files: Mapping[str, str]) -> bool:
    """Whether ``signed`` is exactly the statement ``hubrelease sign`` would make over ``files`` now."""
    return not (
        differences(signed, files)
        or download_problem(signed)
        or set(signed.ignore_paths) != set(IGNORE_PATHS)
    )


def download_problem(signed: SignedFiles) -> str | None:
    """Why ``model_signing verify`` of an ``hf download --local-dir`` of these files would fail, if it would.

    Not a difference between the files and the signature (a folder that is no download verifies),
    but a signature published to the Hub without it cannot be checked the way its card says.
    """
    if HF_LOCAL_DIR_CACHE in signed.ignore_paths:
        return None
    return (
        f"does not ignore {HF_LOCAL_DIR_CACHE}: `model_signing verify` of an `hf download --local-dir` "
        "fails on the files it keeps there; sign with `hubrelease sign`"
    )


def check_signs(signature: Path, published: Mapping[str, str]) -> None:
    """Refuse (exit 1) a ``model.sig`` whose statement is not exactly ``published`` (repo path -> sha256).

    Who signed is not checked here (push has no key or identity to check it with): ``verify
    --signature`` does that.
    """
    signed = read_unverified(signature)
    problems = differences(signed, published)
    unusable = download_problem(signed)
    if unusable is not None:
        problems.append((SIGNATURE_NAME, unusable))
    if problems:
        path, problem = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise CheckFailed(
            f"{SIGNATURE_NAME} does not sign what this push publishes: {path}: {problem}{more}; "
            "re-run `hubrelease sign`; nothing was pushed",
            path=signature,
        )
