"""What a manifest records about local files: size and sha256 (the shared pool + stat cache),
tensor-type composition from model headers, and whether a JSON file is an evaluation.

Nothing here writes a manifest; ``init`` and ``edit`` turn these facts into entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hubrelease.errors import HubReleaseError
from hubrelease.hashing import HashJob, StatCache, hash_files
from hubrelease.onboarding.scan import ScannedFile, Skipped
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.safe_parse import ScreenError, parse_json

# Keys every evaluation JSON has at the top level; a JSON file with all of them is meant to be one.
_EVALUATION_KEYS = frozenset({"schema_version", "run", "provenance"})
# Evaluation files are small; larger JSON (tokenizers, indexes) is never parsed to look.
_EVALUATION_MAX_BYTES = 16 << 20


@dataclass(frozen=True)
class FileFacts:
    """One file as a manifest pins it. ``sha256`` is None only for Hub files known by size alone."""

    name: str
    size: int
    sha256: str | None
    composition: dict[str, int] | None = None
    evaluation: bool = False


def hash_scanned(
    root: Path,
    files: Sequence[ScannedFile],
    *,
    threads: int | None = None,
    progress: Progress = NULL_PROGRESS,
) -> tuple[list[FileFacts], list[Skipped], list[str]]:
    """Hash ``files`` through the stat cache of ``root``; inspect headers and evaluation JSON.

    Returns (facts in input order, files that could not be read, warnings about headers/JSON).
    """
    cache = StatCache(root)
    try:
        results = hash_files(
            [HashJob(f.name, f.path, f.key) for f in files], threads=threads, cache=cache, progress=progress
        )
    finally:
        cache.close()
    facts: list[FileFacts] = []
    unreadable: list[Skipped] = []
    warnings: list[str] = []
    for item in files:
        result = results[item.name]
        if result.sha256 is None:
            unreadable.append(Skipped(item.name, f"cannot read: {result.error}"))
            continue
        composition, problem = inspect_composition(item.path)
        if problem:
            warnings.append(f"{item.name}: {problem}")
        evaluation, problem = detect_evaluation(item.path)
        if problem:
            warnings.append(f"{item.name}: {problem}")
        facts.append(FileFacts(item.name, item.key.size, result.sha256, composition, evaluation))
    return facts, unreadable, warnings


def inspect_composition(path: Path) -> tuple[dict[str, int] | None, str | None]:
    """Tensor-type counts of one GGUF or safetensors file from its header, or why there are none.

    A split GGUF shard is read on its own: the artifact is that one file, not the whole set.
    """
    if path.suffix not in (".gguf", ".safetensors"):
        return None, None
    from hubrelease.formats.gguf_header import GGUFSet, read_gguf_header
    from hubrelease.formats.safetensors_header import SafetensorsSet, read_safetensors_header

    try:
        if path.suffix == ".gguf":
            return GGUFSet((read_gguf_header(path, keep_array=0),)).composition(), None
        tensors, metadata = read_safetensors_header(path)
        return SafetensorsSet((path,), tuple(tensors), metadata).composition(), None
    except HubReleaseError as exc:
        return None, f"header not readable ({exc.message}); composition not recorded"
    except OSError as exc:
        return None, f"header not readable ({exc.strerror}); composition not recorded"


def detect_evaluation(path: Path) -> tuple[bool, str | None]:
    """True when ``path`` is a valid evaluation JSON; a warning when it looks like one but is not."""
    if path.suffix != ".json":
        return False, None
    try:
        if path.stat().st_size > _EVALUATION_MAX_BYTES:
            return False, None
        data = parse_json(path.read_bytes())
    except (OSError, ScreenError):
        return False, None
    if not isinstance(data, dict) or not data.keys() >= _EVALUATION_KEYS:
        return False, None
    from hubrelease.evaluation.load import load_evaluation

    try:
        load_evaluation(path)
    except HubReleaseError as exc:
        detail = f"{exc.field}: {exc.message}" if exc.field else exc.message
        return False, f"looks like an evaluation file but does not validate ({detail}); listed as an artifact"
    return True, None
