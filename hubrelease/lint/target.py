"""What lint needs to know about the target a drafter serves: its depth, hidden size and vocabulary.

A drafter's config can state ``num_target_layers`` and ``target_hidden_size``, and most do not: the
target itself is the authority. Its facts come from its GGUF header (``<arch>.block_count``,
``<arch>.embedding_length``, the tokenizer's token count) or its HF ``config.json``
(``num_hidden_layers``, ``hidden_size``, ``vocab_size``; ``text_config`` first for multimodal
targets), locally or on the Hub (``hub.target_facts``).

The rules: every target layer id is below the target's last layer (the engines capture the input of
layer id + 1: mainline ``src/llama-graph.cpp:1384`` aborts "layer input tensor is null", ik never
drafts, "DFlash capture rows mismatch"); the fc input width is K x the target's hidden size (SGLang
``srt/models/dflash.py`` "fc.weight shape mismatch", mainline ``dflash.cpp:162``, ik
``n_target_features``); the mask token is inside the target's vocabulary; a DFlash2 selector's
codebooks have one row per target token (mainline ``dflash.cpp:228-231``).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard

from hubrelease.errors import InputError
from hubrelease.formats.gguf_header import GGUFSet, array_length, read_gguf
from hubrelease.formats.safetensors_header import read_json_object
from hubrelease.fsutil import TARGETS_CACHE as TARGETS_CACHE
from hubrelease.fsutil import atomic_write_text
from hubrelease.lint.findings import RuleFinding, error
from hubrelease.revisions import is_commit
from hubrelease.safe_parse import ScreenError, parse_json

if TYPE_CHECKING:
    from hubrelease.manifest.models import Manifest


@dataclass(frozen=True)
class TargetFacts:
    """A target's depth (decoder layers), hidden size and token count, and where they were read."""

    depth: int
    hidden: int
    vocab: int | None
    source: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: object) -> TargetFacts | None:
        """A cached entry, or None when it is not one (a foreign or damaged cache is not trusted)."""
        if not isinstance(data, dict):
            return None
        depth, hidden, vocab, source = (data.get(k) for k in ("depth", "hidden", "vocab", "source"))
        if not (_positive(depth) and _positive(hidden) and isinstance(source, str)):
            return None
        if vocab is not None and not _positive(vocab):
            return None
        return cls(depth, hidden, vocab, source)


def _positive(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def facts_from_gguf(model: GGUFSet, source: str) -> TargetFacts:
    """From a target GGUF's own keys; ``nextn_predict_layers`` (MTP heads the converters append to
    ``block_count``, e.g. conversion/bailingmoe.py:118-119) are not decoder layers a drafter can tap."""
    arch = model.architecture
    if arch is None:
        raise InputError("target GGUF has no general.architecture", path=source)
    depth, hidden = model.value(f"{arch}.block_count"), model.value(f"{arch}.embedding_length")
    if not (_positive(depth) and _positive(hidden)):
        raise InputError(f"target GGUF lacks {arch}.block_count or {arch}.embedding_length", path=source)
    nextn = model.value(f"{arch}.nextn_predict_layers")
    if _positive(nextn) and nextn < depth:
        depth -= nextn
    return TargetFacts(depth, hidden, array_length(model.value("tokenizer.ggml.tokens")), source)


def facts_from_config(config: dict[str, Any], source: str) -> TargetFacts:
    """From a target's HF config.json (``text_config`` first, as transformers reads a multimodal one)."""
    text = config.get("text_config")
    holder = text if isinstance(text, dict) and "num_hidden_layers" in text else config
    depth, hidden, vocab = (holder.get(k) for k in ("num_hidden_layers", "hidden_size", "vocab_size"))
    if not (_positive(depth) and _positive(hidden)):
        raise InputError("target config.json lacks num_hidden_layers or hidden_size", path=source)
    return TargetFacts(depth, hidden, vocab if _positive(vocab) else None, source)


def read_local_target(spec: str | Path) -> TargetFacts:
    """``--target`` given as a local GGUF (any shard of a set), a config.json or a folder holding one."""
    path = Path(spec)
    if path.name.endswith(".gguf"):
        return facts_from_gguf(read_gguf(path), str(path))
    config = path / "config.json" if path.is_dir() else path
    if config.name.endswith(".json"):
        return facts_from_config(read_json_object(config), str(config))
    raise InputError("--target must be a .gguf, a config.json or a folder with one", path=path)


class PinnedSource(NamedTuple):
    """Where a pinned target's facts are read and the pin that makes them stable."""

    path: str
    header_sha256: str | None
    key: str
    """The cache key: ``header:<sha256>``, or ``<type>:<repo>@<commit>/<path>``."""


def pinned_source(manifest: Manifest) -> PinnedSource | None:
    """The first target's first pinned GGUF file (a header pin first), else its config.json at the
    pinned commit; None without a target or when nothing pins its bytes (a branch, no header pin)."""
    if not manifest.pins.targets:
        return None
    pin = manifest.pins.targets[0]
    ggufs = sorted(
        (f for f in pin.files if f.path.endswith(".gguf")), key=lambda f: (f.header_sha256 is None, f.path)
    )
    if ggufs and ggufs[0].header_sha256 is not None:
        return PinnedSource(ggufs[0].path, ggufs[0].header_sha256, f"header:{ggufs[0].header_sha256}")
    if not (pin.revision and is_commit(pin.revision)):
        return None
    path = ggufs[0].path if ggufs else "config.json"
    return PinnedSource(path, None, f"{pin.repo_type}:{pin.repo_id}@{pin.revision}/{path}")


def _remembered(root: Path) -> dict[str, object]:
    try:  # a corrupt or hostile cache is forgotten and filled again
        data = parse_json((root / TARGETS_CACHE).read_bytes())
    except (OSError, ScreenError):
        return {}
    return data if isinstance(data, dict) else {}


def cached_target(manifest: Manifest, root: Path) -> TargetFacts | None:
    """The pinned target's facts as remembered in the release folder ``root`` (no network)."""
    source = pinned_source(manifest)
    return TargetFacts.from_dict(_remembered(root).get(source.key)) if source else None


def remember_target(root: Path, key: str, facts: TargetFacts) -> None:
    """Add one entry; a read-only release folder keeps nothing (the facts still serve this run)."""
    entries = _remembered(root)
    entries[key] = facts.to_dict()
    with contextlib.suppress(OSError):
        (root / TARGETS_CACHE).parent.mkdir(exist_ok=True)
        atomic_write_text(root / TARGETS_CACHE, json.dumps(entries, indent=1, sort_keys=True) + "\n")


def target_findings(
    facts: TargetFacts,
    layer_ids: tuple[int, ...] | list[int],
    fc_width: int | None,
    mask_token_id: int | None,
    selector_rows: int | None,
    *,
    declared_depth: object = None,
) -> list[RuleFinding]:
    """The drafter (0-based HF layer ids, fc input width, mask id, selector codebook rows) against the target."""
    where = f"the target ({facts.source})"
    findings = []
    if isinstance(declared_depth, int) and declared_depth != facts.depth:
        findings.append(
            error(
                "target-layers", f"num_target_layers is {declared_depth} but {where} has {facts.depth} layers"
            )
        )
    last = facts.depth - 1
    # A config whose num_target_layers is the target's depth already has this finding (drafter_config).
    if layer_ids and max(layer_ids) >= last and declared_depth != facts.depth:
        findings.append(
            error(
                "target-layers",
                f"target layer {max(layer_ids)} is not below the last layer {last} of {where}: "
                "the engines capture layer inputs, the last layer has no successor",
            )
        )
    if fc_width is not None and layer_ids and fc_width != facts.hidden * len(layer_ids):
        findings.append(
            error(
                "n-target-features",
                f"fc input width {fc_width} != {len(layer_ids)} target layers x hidden {facts.hidden} of {where}",
            )
        )
    if facts.vocab is not None and mask_token_id is not None and not 0 <= mask_token_id < facts.vocab:
        findings.append(
            error(
                "mask-token", f"mask token id {mask_token_id} is outside the {facts.vocab} tokens of {where}"
            )
        )
    if facts.vocab is not None and selector_rows is not None and selector_rows != facts.vocab:
        findings.append(
            error(
                "dflash2-tensors",
                f"selector codebooks have {selector_rows} rows, {where} has {facts.vocab} tokens",
            )
        )
    return findings
