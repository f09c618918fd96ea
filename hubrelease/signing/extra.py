"""The optional ``hubrelease[sign]`` extra: the one line when it is not installed.

model-signing and sigstore cost ~0.4-0.9 s to import (model-signing's package ``__init__`` loads
sigstore, protobuf and pyOpenSSL), so the signing modules import them inside ``required()`` where a
signature is built or checked, not at module level: a ``sign`` or ``verify --signature`` that
finds the signature current in its caches never loads them.
"""

import contextlib
from collections.abc import Iterator

from hubrelease.errors import InputError


def missing_extra(exc: ModuleNotFoundError) -> InputError:
    """The one line for a missing optional extra (or pyOpenSSL, which model-signing 1.1.1 imports undeclared)."""
    return InputError(
        f"signing needs the optional extra: pip install 'hubrelease[sign]' ({exc.name} is not installed)"
    )


@contextlib.contextmanager
def required() -> Iterator[None]:
    """Wrap the imports of model-signing or sigstore: a missing one is ``missing_extra``'s line."""
    try:
        yield
    except ModuleNotFoundError as exc:
        raise missing_extra(exc) from None
