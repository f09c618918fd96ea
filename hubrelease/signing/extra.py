"""The optional ``hubrelease[sign]`` extra: the one line when it is not installed."""

from hubrelease.errors import InputError


def missing_extra(exc: ModuleNotFoundError) -> InputError:
    """The one line for a missing optional extra (or pyOpenSSL, which model-signing 1.1.1 imports undeclared)."""
    return InputError(
        f"signing needs the optional extra: pip install 'hubrelease[sign]' ({exc.name} is not installed)"
    )
