"""The Hub's checks of a card's front matter, as ``/api/validate-yaml`` makes them before a commit.

huggingface_hub parses the block (``RepoCard``: YAML, a mapping, ``ModelCardData``'s ``model-index``
and ``eval_results`` rules; ``DatasetCard`` for datasets), and the Hub then refuses values it does
not know: a licence that is not one of its ids, a base model or dataset that is not a repo id
(``validate_repo_id``), a relation other than its four, tags that are not a list of strings. The
parse is huggingface_hub's own; the rest mirrors the Hub's rules (``hubrules``: its own copy, from the
Hub's documentation, never the client's constants), which run server-side only
(huggingface_hub ``hf_api.HfApi._validate_yaml`` posts the card and reports the Hub's ``errors``).
Whether a base model exists on the Hub is not checked here: that needs the real Hub.
"""

from __future__ import annotations

from typing import Any

import yaml
from huggingface_hub import DatasetCard, ModelCard
from huggingface_hub.errors import HFValidationError
from huggingface_hub.repocard import REGEX_YAML_BLOCK
from huggingface_hub.utils import validate_repo_id

from hubrelease.safe_parse import ScreenError, parse_yaml
from hubrelease_loopback.hubrules import BASE_MODEL_RELATIONS, LICENSE_IDS


def parse_card(content: str, repo_type: str) -> tuple[dict[str, Any], str]:
    """Front matter and body, parsed by huggingface_hub as the Hub reads them; ValueError says why not.

    The YAML goes through the input screen first (``safe_parse.parse_yaml``): RepoCard's own
    ``yaml.safe_load`` would expand an alias bomb of a few hundred bytes into millions of values.
    """
    block = REGEX_YAML_BLOCK.search(content)
    if block is None:
        return {}, content  # RepoCard would log a warning and take empty metadata: the same
    try:
        parse_yaml(block.group(2))
    except ScreenError as exc:
        raise ValueError(f"invalid YAML in the front matter: {exc.problem}") from None
    card_class = DatasetCard if repo_type == "dataset" else ModelCard
    try:
        card = card_class(content)
        data: dict[str, Any] = card.data.to_dict()  # type: ignore[no-untyped-call]
    except yaml.YAMLError as exc:
        where = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        raise ValueError(f"invalid YAML in the front matter: {where}") from None
    except (
        TypeError,
        KeyError,
        AttributeError,
        ValueError,
    ) as exc:  # model-index, eval_results of the wrong shape
        raise ValueError(f"invalid front matter: {exc}") from None
    return data, str(card.text)


def _ids(value: Any, field: str, kind: str) -> list[str]:
    values = value if isinstance(value, list) else [value]
    errors = []
    for item in values:
        if not isinstance(item, str):
            errors.append(f'"{field}" must be a {kind} id or a list of them, not {type(item).__name__}')
            continue
        try:
            validate_repo_id(item)
        except HFValidationError:
            errors.append(f'"{field}": {item!r} is not a valid {kind} id (namespace/name)')
    return errors


def metadata_errors(content: str, repo_type: str) -> list[str]:
    """What the Hub's validate-yaml would refuse in ``content`` (empty: accepted)."""
    try:
        data, _ = parse_card(content, repo_type)
    except ValueError as exc:
        return [str(exc)]
    errors = []
    license_id = data.get("license")
    if license_id is not None and not (isinstance(license_id, str) and license_id in LICENSE_IDS):
        errors.append(f'"license": {license_id!r} is not one of the Hub\'s licence ids (or "other")')
    if repo_type != "dataset":
        if "base_model" in data:
            errors += _ids(data["base_model"], "base_model", "model")
        relation = data.get("base_model_relation")
        if relation is not None and relation not in BASE_MODEL_RELATIONS:
            errors.append(
                f'"base_model_relation" must be one of {", ".join(BASE_MODEL_RELATIONS)}, not {relation!r}'
            )
        if relation is not None and not data.get("base_model"):
            errors.append('"base_model_relation" needs a "base_model"')
    for field in ("datasets", "source_datasets"):
        if field in data:
            errors += _ids(data[field], field, "dataset")
    tags = data.get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
        errors.append('"tags" must be a list of strings')
    for field in ("library_name", "pipeline_tag", "license_name", "license_link"):
        if data.get(field) is not None and not isinstance(data[field], str):
            errors.append(f'"{field}" must be a string')
    return errors
