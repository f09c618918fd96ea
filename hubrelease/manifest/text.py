"""A manifest file's text, read without the YAML reader or the models: a warm ``sign`` that
proves its signature current from the caches never validates the manifest (``signing.release``)."""

from pathlib import Path

from hubrelease.errors import InputError, ManifestError


def read_text(path: Path) -> str:
    """A manifest file's text, or the one-line reason it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("manifest not found", path=path) from None
    except IsADirectoryError:
        raise InputError("is a folder, expected a manifest file", path=path) from None
    except UnicodeDecodeError:
        raise ManifestError("not UTF-8 text", path=path) from None
