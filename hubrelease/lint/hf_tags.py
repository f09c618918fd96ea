"""A GGUF release as llama.cpp's ``-hf REPO:TAG`` / ``-hfd REPO:TAG`` resolves it, and its split sets.

Mirrors mainline llama.cpp 0c1e57098 (the llama-cpp-python 0.3.36 sdist), ``common/download.cpp``:
- a file's tag: its name without ``.gguf`` and a ``-NNNNN-of-NNNNN`` suffix (``re_split``), then the
  last ``[-.]([A-Z0-9_]+)`` (``re_tag``), upper-cased (``get_gguf_split_info``, :482-510);
- ``find_best_model`` (:655-695): for ``TAG`` the *first* model file of the repo listing whose path
  matches ``TAG[.-]`` case-insensitively anywhere (:666), shards other than 00001 skipped; no tag tries
  Q4_K_M, then Q8_0, then the first model file. "Model file" excludes names holding ``mmproj``,
  ``imatrix``, ``mtp-``, ``eagle3-``, ``dflash-`` or ``dspark-`` (``gguf_filename_is_model``, :637-653);
- ``--spec-type draft-dflash`` also resolves a DFlash sidecar: the best file whose path holds
  ``dflash-`` in the model's folder or above it (``find_best_dflash``, :625; ``find_best_sibling``);
- a split file is fetched with every file of the same prefix and count (``get_split_files``, :524-541),
  and loaded from shard 00001 with the checks of ``src/llama-model-loader.cpp:595-672``.
The Hub's tree lists paths in order; this reads them sorted, as the loopback Hub and the Hub do.
ik_llama.cpp 8337e4cd takes ``-hf REPO -hff FILE`` (an explicit file, ``common/common.cpp:4062``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from hubrelease.errors import HubReleaseError
from hubrelease.formats.dflash import ARCH
from hubrelease.formats.gguf_header import read_gguf_header, split_problems
from hubrelease.fsutil import ReleaseFolder
from hubrelease.lint.findings import FileFinding, error, warning

if TYPE_CHECKING:
    from hubrelease.formats.gguf_header import GGUFHeader
    from hubrelease.manifest.models import Manifest

_SPLIT = re.compile(r"^(.+)-([0-9]{5})-of-([0-9]{5})$", re.IGNORECASE)
_TAG = re.compile(r"[-.]([A-Z0-9_]+)$", re.IGNORECASE)
_NOT_MODELS = ("mmproj", "imatrix", "mtp-", "eagle3-", "dflash-", "dspark-")
DEFAULT_TAGS = ("Q4_K_M", "Q8_0")


class SplitInfo(NamedTuple):
    prefix: str
    tag: str
    shard: int
    shards: int


def split_info(path: str) -> SplitInfo | None:
    """``get_gguf_split_info``: None for a name that is not ``*.gguf``."""
    if not path.endswith(".gguf"):
        return None
    prefix, index, count = path[: -len(".gguf")], 1, 1
    match = _SPLIT.match(prefix)
    if match:
        prefix, index, count = match.group(1), int(match.group(2)), int(match.group(3))
    tag = _TAG.search(prefix)
    return SplitInfo(prefix, tag.group(1).upper() if tag else "", index, count)


def is_model_file(path: str) -> bool:
    """``gguf_filename_is_model``: a .gguf whose file name names none of the sidecar kinds."""
    name = path.rsplit("/", 1)[-1]
    return path.endswith(".gguf") and not any(word in name for word in _NOT_MODELS)


def best_model(paths: list[str], tag: str) -> str | None:
    """What ``-hf REPO[:TAG]`` loads among ``paths`` (in listing order)."""
    for wanted in [tag] if tag else list(DEFAULT_TAGS):
        pattern = re.compile(re.escape(wanted) + "[.-]", re.IGNORECASE)
        for path in paths:
            info = split_info(path)
            if (
                is_model_file(path)
                and pattern.search(path)
                and info
                and not (info.shards > 1 and info.shard != 1)
            ):
                return path
    if not tag:
        return next((p for p in paths if is_model_file(p) and (i := split_info(p)) and i.shard == 1), None)
    return None


def _bits(tag: str) -> int:
    """``extract_quant_bits``: the number after the tag's first digit (Q4_K_M 4, F16 16), else 0."""
    digits = re.search(r"\d+", tag)
    return int(digits.group()) if digits else 0


def best_sidecar(paths: list[str], model: str, keyword: str, tag: str) -> str | None:
    """``find_best_sibling`` (download.cpp:546-611): the deepest folder shared with ``model`` (the file
    must sit in the model's folder or above it), then an exact ``-TAG.``, then the closest bits."""
    model_dir = model.split("/")[:-1]
    want = _bits(tag) if tag else _bits(i.tag if (i := split_info(model)) else "")
    best: tuple[int, bool, int] | None = None
    chosen = None
    for path in paths:
        if not path.endswith(".gguf") or keyword not in path:
            continue
        folder = path.split("/")[:-1]
        depth = 0
        while depth < min(len(model_dir), len(folder)) and model_dir[depth] == folder[depth]:
            depth += 1
        if depth != len(folder):
            continue
        info = split_info(path)
        exact = bool(tag) and f"-{tag.upper()}." in path.upper()
        diff = abs(_bits(info.tag if info else "") - want)
        if (
            best is None
            or depth > best[0]
            or (depth == best[0] and exact and not best[1])
            or (depth == best[0] and exact == best[1] and diff < best[2])
        ):
            best, chosen = (depth, exact, diff), path
    return chosen


def hf_tag_findings(manifest: Manifest, root: Path) -> list[FileFinding]:
    """Each published GGUF against the resolution its tag gets, and each split set against the loader."""
    paths = sorted(a.path for a in manifest.artifacts if a.path.endswith(".gguf"))
    if not paths:
        return []
    local = {a.path: a.local_path for a in manifest.artifacts}
    headers = _headers(ReleaseFolder(root), paths, local)
    drafters = {p for p, h in headers.items() if h.value("general.architecture") in ARCH.values()}
    repo = manifest.release.repo_id
    results: list[FileFinding] = []
    for path in paths:
        info = split_info(path)
        if info is None or info.shard != 1:
            continue
        flag = "-hfd" if path in drafters else "-hf"
        if not info.tag:
            results.append(FileFinding(path, warning("hf-tag", f"no quantization token in the name: `{flag} {repo}:TAG` cannot select it")))  # fmt: skip
        elif is_model_file(path) and (chosen := best_model(paths, info.tag)) != path:
            results.append(FileFinding(path, error("hf-tag", f"`{flag} {repo}:{info.tag}` loads {chosen}, not this file (llama.cpp takes the first path matching {info.tag}[.-])")))  # fmt: skip
        elif not is_model_file(path) and "dflash-" in path.rsplit("/", 1)[-1]:
            model = best_model(paths, info.tag) or ""
            chosen = best_sidecar(paths, model, "dflash-", info.tag)
            if chosen != path:
                results.append(FileFinding(path, error("hf-tag", f"`-hfd {repo}:{info.tag} --spec-type draft-dflash` loads {chosen or 'no sidecar'}, not this file (a sidecar must sit in its model's folder or above it)")))  # fmt: skip
        if (
            path in drafters
            and is_model_file(path)
            and any(p in headers and p not in drafters and _first(p) for p in paths)
        ):
            results.append(FileFinding(path, error("hf-tag", "a DFlash drafter beside other models must have 'dflash-' in its name: "
                                                   "llama.cpp takes it for the model, and `--spec-type draft-dflash` looks for 'dflash-' sidecars")))  # fmt: skip
    results += _split_findings(paths, headers)
    return results


def _first(path: str) -> bool:
    """A model file llama.cpp could pick: shard 00001 or a single file."""
    info = split_info(path)
    return is_model_file(path) and info is not None and info.shard == 1


def _headers(folder: ReleaseFolder, paths: list[str], local: dict[str, str]) -> dict[str, GGUFHeader]:
    headers = {}
    for path in paths:
        try:
            headers[path] = read_gguf_header(
                folder.path(local[path]), keep_key=lambda k: k.startswith(("general.", "split."))
            )
        except (HubReleaseError, OSError):
            continue  # the drafter lint and verify report a missing or unreadable file
    return headers


def _split_findings(paths: list[str], headers: dict[str, GGUFHeader]) -> list[FileFinding]:
    sets: dict[tuple[str, int], dict[int, str]] = {}
    for path in paths:
        info = split_info(path)
        if info is not None and _SPLIT.match(path[: -len(".gguf")]):
            sets.setdefault((info.prefix, info.shards), {})[info.shard] = path
    results = []
    for (prefix, count), shards in sorted(sets.items()):
        missing = [f"{prefix}-{i:05d}-of-{count:05d}.gguf" for i in range(1, count + 1) if i not in shards]
        first = shards.get(1, next(iter(shards.values())))
        if missing:
            results.append(
                FileFinding(first, error("gguf-split", f"split set of {count} lacks {', '.join(missing)}"))
            )
            continue
        read = [headers[shards[i]] for i in range(1, count + 1) if shards[i] in headers]
        if len(read) == count:
            by_file = {str(h.path): p for p, h in headers.items()}
            results += [
                FileFinding(by_file.get(str(at), first), error("gguf-split", message))
                for at, message in split_problems(read)
            ]
    return results
