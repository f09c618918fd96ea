"""OpenSSF Model Signing (OMS) for a release: ``model.sig`` over exactly the files push publishes.

The signature is what ``model_signing sign`` writes (a Sigstore bundle holding a DSSE envelope
whose in-toto statement has predicate type ``https://model_signing/signature/v1.0``), so the real
``model_signing verify`` accepts an ``hf download --local-dir`` of the release. It is built from
the manifest's verified digests instead of hashing the published tree a second time.

This module holds names only: model-signing and sigstore (the optional extra
``hubrelease[sign]``) load in ``statement``, ``signers`` and ``verifiers``, which only ``sign``,
``verify --signature`` and a push that carries a ``model.sig`` import.
"""

from hubrelease.errors import InputError
from hubrelease.release_files import SIGNATURE_NAME

__all__ = ["SIGNATURE_NAME", "missing_extra"]


def missing_extra(exc: ModuleNotFoundError) -> InputError:
    """The one line for a missing optional extra (or pyOpenSSL, which model-signing 1.1.1 imports undeclared)."""
    return InputError(
        f"signing needs the optional extra: pip install 'hubrelease[sign]' ({exc.name} is not installed)"
    )
