"""The card's YAML front matter, built from the manifest and validated offline.

huggingface_hub's ``ModelCardData``/``DatasetCardData`` do the serialising (so the YAML is what
the Hub itself writes), but they accept any licence string and only the Hub's network
``validate-yaml`` rejects bad ones; the checks it would make are done here first, each error
naming the manifest field.
"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from huggingface_hub import DatasetCardData, ModelCardData

from hubrelease.card.locator import Locator
from hubrelease.hub_licenses import is_hub_license
from hubrelease.manifest.models import BaseModelRelation, Manifest

ALLOWED_RELATIONS: tuple[str, ...] = get_args(BaseModelRelation)
"""The Hub's base_model_relation values (https://huggingface.co/docs/hub/model-cards)."""

# Key order of the front matter: identity first, tags last (stable across huggingface_hub versions).
_ORDER = [
    "pretty_name",
    "pipeline_tag",
    "library_name",
    "base_model",
    "base_model_relation",
    "license",
    "license_name",
    "license_link",
    "datasets",
    "source_datasets",
    "task_categories",
    "inference",
    "tags",
]


def _check_metadata(manifest: Manifest, where: Locator) -> None:
    pins = manifest.pins
    checks: list[tuple[tuple[str | int, ...], str | None]] = [
        (("release", "license"), manifest.release.license)
    ]
    checks += [(("pins", "targets", i, "license"), t.license) for i, t in enumerate(pins.targets)]
    checks += [(("pins", "base_drafters", i, "license"), d.license) for i, d in enumerate(pins.base_drafters)]
    checks += [(("pins", "datasets", i, "license"), d.license) for i, d in enumerate(pins.datasets)]
    for loc, value in checks:
        if value is not None and not is_hub_license(value):
            raise where.error(
                f"{value!r} is not a Hub licence id (e.g. apache-2.0, mit, cc-by-4.0; use 'other' with "
                "license_name and license_link for anything else)",
                loc,
            )
    # The manifest's BaseModelRelation type already restricts the value; here it must also be present,
    # since the Hub otherwise guesses it (gguf-my-repo's cards end up "quantized" that way).
    if manifest.release.base_model_relation is None and manifest.release.base_model:
        raise where.error(
            f"set base_model_relation too ({', '.join(ALLOWED_RELATIONS)}); the Hub would guess it",
            ("release", "base_model"),
        )


def _one_or_list(values: list[str]) -> str | list[str] | None:
    if not values:
        return None
    return values[0] if len(values) == 1 else list(values)


def _trained_on(manifest: Manifest, sources: list[str]) -> list[str]:
    """A model's ``datasets:``: the dataset it was trained on (``training.dataset``, e.g. generations
    released beside it), then the datasets its training data derives from."""
    trained = manifest.training.dataset if manifest.training is not None else None
    return [trained, *(s for s in sources if s != trained)] if trained else sources


def front_matter(manifest: Manifest, path: Path) -> str:
    """YAML (without the ``---`` fences) for the manifest at ``path``; errors carry its YAML line."""
    _check_metadata(manifest, Locator(path))
    release = manifest.release
    training = [d.repo_id for d in manifest.pins.datasets if d.role in ("training", "training-source")]
    data: ModelCardData | DatasetCardData
    if release.repo_type == "dataset":
        data = DatasetCardData(
            license=release.license,
            pretty_name=release.title,
            source_datasets=training or None,
            task_categories=[release.pipeline_tag] if release.pipeline_tag else None,
            tags=release.tags or None,
            license_name=release.license_name,
            license_link=release.license_link,
        )
    else:
        data = ModelCardData(
            base_model=_one_or_list(release.base_model),
            datasets=_trained_on(manifest, training) or None,
            library_name=release.library_name,
            license=release.license,
            license_name=release.license_name,
            license_link=release.license_link,
            pipeline_tag=release.pipeline_tag,
            tags=release.tags or None,
            base_model_relation=release.base_model_relation,
            inference=release.inference,
        )
    return data.to_yaml(original_order=_ORDER)
