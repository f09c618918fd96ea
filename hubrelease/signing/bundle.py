"""A signature built from a release's digests: the request and the one function that answers it,
in this process or in the signing worker's (``signing.worker``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.signing.signers import SigningMethod, sign_statement
from hubrelease.signing.statement import SignedFiles, payload, statement_in
from hubrelease.signing.verifiers import SignaturePolicy, check_declared


class SignRequest(NamedTuple):
    """What to sign and how: the method, the statement's name and files, the signer to hold it to."""

    method: SigningMethod
    name: str
    files: Mapping[str, str]
    declared: SignaturePolicy | None
    manifest_path: Path

    def as_json(self) -> dict[str, Any]:
        method = self.method
        policy = self.declared
        return {
            "key": _text(method.key),
            "certificate": _text(method.certificate),
            "chain": [str(p) for p in method.chain],
            "name": self.name,
            "files": dict(self.files),
            "declared": None
            if policy is None
            else {
                "public_key": _text(policy.public_key),
                "certificate_chain": [str(p) for p in policy.certificate_chain],
                "fingerprint": policy.fingerprint,
            },
            "manifest_path": str(self.manifest_path),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SignRequest:
        method = SigningMethod(
            key=_path(data["key"]),
            certificate=_path(data["certificate"]),
            chain=tuple(map(Path, data["chain"])),
        )
        declared = data["declared"]
        policy = (
            None
            if declared is None
            else SignaturePolicy(
                public_key=_path(declared["public_key"]),
                certificate_chain=tuple(map(Path, declared["certificate_chain"])),
                fingerprint=declared["fingerprint"],
            )
        )
        return cls(method, data["name"], data["files"], policy, Path(data["manifest_path"]))


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _path(text: str | None) -> Path | None:
    return None if text is None else Path(text)


def signed_bundle(request: SignRequest) -> tuple[str, SignedFiles]:
    """The bundle (JSON text) over ``request``'s files and the statement it holds, refused if the
    manifest's ``signing:`` section would not accept it."""
    bundle = sign_statement(request.method, payload(request.name, request.files))
    if request.declared is not None:
        check_declared(bundle, request.declared, request.manifest_path)
    return bundle, statement_in(bundle.encode("utf-8"), Path(SIGNATURE_NAME))
