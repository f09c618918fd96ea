"""The versions a recipe records: hubrelease and the libraries that shape each builder's bytes.

Only libraries whose code decides output bytes are listed (a reader of our own, such as the
safetensors header parser, is hubrelease's version): gguf writes GGUF containers and rounds bf16 /
quantizes Q8_0 (``gguf.quants``), numpy does the float arithmetic, pydantic serialises evaluation
JSON, and the dataset card's front matter and body come from huggingface_hub, datasets, pyarrow
and jinja2. No builder uses torch, so none records it.
"""

from __future__ import annotations

from importlib import metadata

LIBRARIES: dict[str, tuple[str, ...]] = {
    "safetensors-drafter": ("gguf", "numpy"),
    "gguf-drafter": ("gguf", "numpy"),
    "eval": ("pydantic",),
    "dataset-card": ("huggingface_hub", "datasets", "pyarrow", "numpy", "jinja2"),
    "speculators-drafter": ("gguf", "numpy"),
    "eval-results": ("huggingface_hub", "pyyaml"),
}
"""Per builder, the libraries that shape its output bytes (``tokenizers`` too when a card counts tokens)."""
BUILDERS = tuple(LIBRARIES)


def tool_versions(builder: str, extra: tuple[str, ...] = ()) -> dict[str, str]:
    """``{hubrelease: VERSION, LIBRARY: VERSION...}`` as installed here."""
    names = ("hubrelease", *LIBRARIES.get(builder, ()), *extra)
    return {name: _version(name) for name in names}


def _version(name: str) -> str:
    if name == "hubrelease":  # the running code, also from a source checkout that is not installed
        from hubrelease import __version__

        return __version__
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def version_differences(recorded: dict[str, str]) -> list[tuple[str, str, str]]:
    """(library, recorded version, version here) for each recorded tool that differs here."""
    return [
        (name, version, _version(name)) for name, version in recorded.items() if _version(name) != version
    ]
