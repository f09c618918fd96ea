"""The files each builder reads, with their digests: one function per builder, used to record a
recipe at build time and again by ``rebuild`` to see whether the same files hold the same bytes.

Whole files are pinned by size and sha256. A ``--tokenizer-from`` GGUF is pinned by each shard's
header digest (``header_sha256``): the builder reads only its header (tokenizer keys, block count,
width), and a 200 GB target should not be hashed to record a drafter build.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hubrelease.formats.gguf_header import GGUFSet
from hubrelease.fsutil import relative_inside
from hubrelease.hashing import sha256_file

Input = dict[str, Any]
"""A ``RecipeInput`` as the manifest stores it: ``{path|uri, size, sha256}`` or ``{path|uri, header_sha256}``."""
Screen = Callable[[Path, str], object]
"""Called with each file and its recorded name before it is read; raises to refuse it (``rebuild``)."""


def relative_name(path: Path, root: Path) -> str:
    """``path`` from the release folder, through ``../`` when outside it (as recipes record paths)."""
    return relative_inside(path, root) or Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()


def file_inputs(paths: Iterable[Path], root: Path, screen: Screen | None = None) -> list[Input]:
    """Whole-file inputs, each once, in the order given (each passed to ``screen`` before it is read)."""
    seen: dict[str, Path] = {}
    for path in paths:
        seen.setdefault(relative_name(path, root), path)
    if screen is not None:
        for name, path in seen.items():
            screen(path, name)
    return [{"path": name, "size": p.stat().st_size, "sha256": sha256_file(p)} for name, p in seen.items()]


def header_inputs(model: GGUFSet, root: Path, uri_of: dict[Path, str] | None = None) -> list[Input]:
    """One header-pinned input per GGUF shard: its ``hf://`` location when read on the Hub, else its path."""
    result: list[Input] = []
    for shard in model.shards:
        where = {"uri": uri_of[shard.path]} if uri_of else {"path": relative_name(shard.path, root)}
        result.append({**where, "header_sha256": shard.header_sha256})
    return result


def drafter_files(source: Path, *, modules: bool) -> list[Path]:
    """What a drafter builder reads from its folder: config.json, the index it follows, the
    safetensors files holding the tensors and (``modules``: safetensors-drafter) the auto_map modules."""
    from hubrelease.formats.dflash import load_config
    from hubrelease.formats.safetensors_header import INDEX_NAME, read_safetensors
    from hubrelease.lint.drafter_config import auto_map_modules

    config = source / "config.json"
    files = [config]
    if (source / INDEX_NAME).is_file():  # read_safetensors follows the index when there is one
        files.append(source / INDEX_NAME)
    files += sorted({t.path for t in read_safetensors(source).tensors})
    if modules:
        files += [source / m for m in auto_map_modules(load_config(config)) if (source / m).is_file()]
    return files


def dataset_files(data: Path, tokenizer: Path | None) -> list[Path]:
    """What ``build dataset-card`` reads: every shard under ``data`` and the tokenizer it counts with."""
    from hubrelease.builders.dataset_scan import find_shards

    return [*find_shards(data), *([tokenizer] if tokenizer is not None else [])]
