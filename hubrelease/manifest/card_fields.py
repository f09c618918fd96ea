"""A README's front matter -> the manifest's ``release`` fields, through huggingface_hub's cards.

``ModelCard`` / ``DatasetCard`` parse the YAML block exactly as the Hub does; this module only
picks the fields a manifest keeps and drops values the manifest's types would reject (with a
warning), so an odd card never stops ``init`` or ``import``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from hubrelease.manifest.models import BaseModelRelation, is_repo_id
from hubrelease.safe_parse import ScreenError, parse_yaml

_RELATION: TypeAdapter[str] = TypeAdapter(BaseModelRelation)
_OTHER_LICENSE_KEYS = ("license_name", "license_link")


def card_release_fields(readme: Path, repo_type: str) -> tuple[dict[str, Any], list[str]]:
    """``release`` fields stated by the card at ``readme`` and warnings about values left out."""
    from huggingface_hub import DatasetCard, ModelCard
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    card_class = DatasetCard if repo_type == "dataset" else ModelCard
    try:
        block = REGEX_YAML_BLOCK.search(readme.read_text(encoding="utf-8"))
        if block is not None:  # screened first: huggingface_hub's safe_load and card data expand aliases
            parse_yaml(block.group(2))
        card = card_class.load(readme, repo_type=repo_type, ignore_metadata_errors=True)
        data = card.data.to_dict()
    except (ValueError, TypeError, AttributeError, OSError, yaml.YAMLError, ScreenError) as exc:
        # huggingface_hub's card data constructors assume well-typed keys (``tags: 5`` is a TypeError).
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return {}, [f"{readme.name}: front matter not readable ({reason}); card metadata not imported"]
    fields: dict[str, Any] = {}
    warnings: list[str] = []
    license_id = data.get("license")
    if license_id == "other" and not all(isinstance(data.get(k), str) for k in _OTHER_LICENSE_KEYS):
        warnings.append(f"{readme.name}: license 'other' without license_name and license_link; left out")
    elif isinstance(license_id, str):
        fields["license"] = license_id
        fields.update({k: data[k] for k in _OTHER_LICENSE_KEYS if isinstance(data.get(k), str)})
    bases = data.get("base_model")
    bases = [bases] if isinstance(bases, str) else bases if isinstance(bases, list) else []
    valid = []
    for base in bases:
        if is_repo_id(base):
            valid.append(base)
        else:
            warnings.append(f"{readme.name}: base_model {base!r} is not a Hub repo id; left out")
    if valid:
        fields["base_model"] = valid
        if _valid(_RELATION, data.get("base_model_relation")):
            fields["base_model_relation"] = data["base_model_relation"]
    for key in ("pipeline_tag", "library_name"):
        if isinstance(data.get(key), str):
            fields[key] = data[key]
    tags = data.get("tags")
    # An empty YAML list item is None; str() would publish it as the tag "None".
    kept = [str(tag) for tag in tags if tag is not None] if isinstance(tags, list) else []
    if kept:
        fields["tags"] = kept
    if isinstance(data.get("inference"), bool):
        fields["inference"] = data["inference"]
    return fields, warnings


def _valid(adapter: TypeAdapter[str], value: object) -> bool:
    try:
        adapter.validate_python(value)
    except ValidationError:
        return False
    return True
