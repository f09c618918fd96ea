"""OpenSSF Model Signing (OMS) for a release: ``model.sig`` over exactly the files push publishes.

The signature is what ``model_signing sign`` writes (a Sigstore bundle holding a DSSE envelope
whose in-toto statement has predicate type ``https://model_signing/signature/v1.0``), so the real
``model_signing verify`` accepts an ``hf download --local-dir`` of the release. It is built from
the manifest's verified digests instead of hashing the published tree a second time.

This module holds names only: model-signing and sigstore (the optional extra
``hubrelease[sign]``) load in ``statement``, ``signers``, ``verifiers`` and ``identity`` (who signs:
fingerprints, GitHub workflow policies), which only ``sign``, ``verify --signature`` and a push that
carries a ``model.sig`` import.
The signature's file name is ``release_files.SIGNATURE_NAME`` (hub and verify name it without
importing signing). Exports load lazily (``hubrelease.lazy``).
"""

from typing import TYPE_CHECKING

from hubrelease.lazy import exports

if TYPE_CHECKING:
    from hubrelease.signing.extra import missing_extra

__all__ = ["missing_extra"]

__getattr__ = exports(__name__, {"missing_extra": "extra"})
