"""The ``training:`` section -> the facts the card states about how the drafter was trained, read from files.

Every number comes from a file of the release: the architecture from the checkpoint config (the keys
SGLang and the converters read: ``dflash_config`` first, then the top level), the recipe from the
trainer's arguments, the step count from its state, the data counts from ``build dataset-card``'s
report. A missing file or key is left out of the card, never filled in; a path that is not an
artifact, or a hardware id that is not pinned, is a ManifestError naming the ``training.*`` field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hubrelease.card.locator import Locator
from hubrelease.formats.dflash import is_number, rope_theta_lookup
from hubrelease.formats.safetensors_header import read_json_object
from hubrelease.manifest.models import Hardware, Manifest

_OPTIMIZERS = {"adamw": "AdamW", "adam": "Adam", "sgd": "SGD", "adafactor": "Adafactor", "lion": "Lion"}


@dataclass(frozen=True)
class Architecture:
    """The drafter as its checkpoint config describes it (None: the config does not say)."""

    path: str
    kind: str | None
    """DFlash2 or DFlash (``architectures``, or DFlash2's selector/convolution keys)."""
    layers: int | None
    block_size: int | None
    sliding_window: int | None
    pattern: str | None
    """Per layer, T for a sliding-window layer and F for a full-attention one (e.g. TTTTTF)."""
    selector_rank: int | None
    selector_top_k: int | None
    target_layer_ids: tuple[int, ...]
    """0-based target layers whose hidden states the drafter reads."""
    projection_width: int | None
    """``hidden_size``: the width the fc layer projects the captured target features to."""
    rope_theta: float | None
    rope_theta_source: str | None
    top_level_rope_theta: object
    """The top-level ``rope_theta`` as written (converters that read only the top level need it)."""


@dataclass(frozen=True)
class Recipe:
    """The trainer's arguments that the card states."""

    path: str
    anchors: int | None
    microbatch: int | None
    effective_batch: int | None
    """``global_batch_size`` where the file states it, else microbatch x gradient accumulation x devices."""
    optimizer: str | None
    learning_rate: float | None
    schedule: str | None
    """e.g. "warmup-plus-cosine" (warmup steps or ratio with a cosine scheduler)."""


@dataclass(frozen=True)
class TrainingFacts:
    """Everything the ``training:`` files say, for the card's Training facts."""

    architecture: Architecture | None
    recipe: Recipe | None
    steps: int | None
    state_path: str | None
    conversations: int | None
    completion_tokens: int | None
    data_path: str | None
    dataset: str | None
    capture_hardware: Hardware | None
    hardware: Hardware | None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _read(manifest: Manifest, root: Path, field: str, where: Locator) -> tuple[str, dict[str, Any]] | None:
    training = manifest.training
    assert training is not None
    path = getattr(training, field)
    if path is None:
        return None
    artifact = manifest.artifact(path)
    if artifact is None:
        raise where.error(
            f"{path!r} is not an artifact: the card states only what published files hold",
            ("training", field),
        )
    return path, read_json_object(root / artifact.local_path)


def _architecture(path: str, config: dict[str, Any]) -> Architecture:
    dflash = config.get("dflash_config") if isinstance(config.get("dflash_config"), dict) else {}
    assert isinstance(dflash, dict)

    def key(name: str) -> Any:
        return dflash.get(name, config.get(name))

    listed = config.get("architectures")
    archs: list[Any] = listed if isinstance(listed, list) else []
    dflash2 = "DFlash2DraftModel" in archs or any(k in dflash for k in ("selector_rank", "conv_kernel_size"))
    kind = "DFlash2" if dflash2 else ("DFlash" if any("DFlash" in str(a) for a in archs) else None)
    layer_types = config.get("layer_types")
    types: list[Any] = layer_types if isinstance(layer_types, list) else []
    pattern = "".join("T" if t == "sliding_attention" else "F" for t in types) or None
    ids = key("target_layer_ids")
    theta, source = rope_theta_lookup(config)
    top = config.get("rope_theta")
    return Architecture(
        path=path,
        kind=kind,
        layers=_int(config.get("num_hidden_layers")),
        block_size=_int(key("block_size")),
        sliding_window=_int(dflash.get("swa_window_size", config.get("sliding_window"))),
        pattern=pattern,
        selector_rank=_int(key("selector_rank")),
        selector_top_k=_int(key("selector_top_k")),
        target_layer_ids=tuple(i for i in ids if _int(i) is not None) if isinstance(ids, list) else (),
        projection_width=_int(config.get("hidden_size")),
        rope_theta=theta,
        rope_theta_source=source,
        top_level_rope_theta=top if is_number(top) else None,
    )


def _recipe(path: str, args: dict[str, Any]) -> Recipe:
    micro = _int(args.get("per_device_train_batch_size"))
    accumulation = _int(args.get("gradient_accumulation_steps"))
    devices = _int(args.get("world_size")) or 1
    # A file that states the effective batch but not how it was made (a transcription) keeps it as stated;
    # a missing accumulation is not assumed to be 1, so the card says the effective batch is not stated.
    stated = _int(args.get("global_batch_size"))
    computed = micro * accumulation * devices if micro is not None and accumulation is not None else None
    optim = str(args.get("optim") or "")
    optimizer = next((name for prefix, name in _OPTIMIZERS.items() if optim.lower().startswith(prefix)), None)
    scheduler = args.get("lr_scheduler_type")
    warmup = (_int(args.get("warmup_steps")) or 0) > 0 or (args.get("warmup_ratio") or 0) > 0
    schedule = f"{'warmup-plus-' if warmup else ''}{scheduler}" if isinstance(scheduler, str) else None
    rate = args.get("learning_rate")
    return Recipe(
        path=path,
        anchors=_int(args.get("num_anchors")),
        microbatch=micro,
        effective_batch=stated if stated is not None else computed,
        optimizer=optimizer,
        learning_rate=float(rate) if is_number(rate) else None,
        schedule=schedule,
    )


def _hardware(manifest: Manifest, field: str, where: Locator) -> Hardware | None:
    assert manifest.training is not None
    wanted = getattr(manifest.training, field)
    if wanted is None:
        return None
    found = next((h for h in manifest.pins.hardware if h.id == wanted), None)
    if found is None:
        known = ", ".join(h.id for h in manifest.pins.hardware) or "none"
        raise where.error(f"{wanted!r} is not in pins.hardware ({known})", ("training", field))
    return found


def training_facts(manifest: Manifest, root: Path, where: Locator) -> TrainingFacts | None:
    """The facts of ``manifest.training``'s files, or None without a ``training:`` section."""
    if manifest.training is None:
        return None
    config = _read(manifest, root, "config", where)
    arguments = _read(manifest, root, "arguments", where)
    state = _read(manifest, root, "state", where)
    data = _read(manifest, root, "data", where)
    return TrainingFacts(
        architecture=_architecture(*config) if config else None,
        recipe=_recipe(*arguments) if arguments else None,
        steps=_int(state[1].get("global_step")) if state else None,
        state_path=state[0] if state else None,
        conversations=_int(data[1].get("conversations")) if data else None,
        completion_tokens=_int(data[1].get("completion_tokens")) if data else None,
        data_path=data[0] if data else None,
        dataset=manifest.training.dataset,
        capture_hardware=_hardware(manifest, "capture_hardware", where),
        hardware=_hardware(manifest, "hardware", where),
    )
