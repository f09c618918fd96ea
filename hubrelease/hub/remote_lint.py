"""Drafter lint of a Hub-hosted file: the local rules on headers range-read from the Hub (``hub.remote_headers``).

A GGUF is checked against ``--config`` (local or ``hf://``) as locally; a safetensors drafter against
the config.json beside it on the Hub, fetched (it is small) unless ``--config`` names another.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from huggingface_hub import HfApi

from hubrelease.errors import InputError
from hubrelease.formats.safetensors_header import read_json_object
from hubrelease.formats.speculators import drafter_config
from hubrelease.hub.ranged import Traffic
from hubrelease.hub.remote_headers import RemoteRepo, parse_location, read_gguf, read_safetensors
from hubrelease.lint import RuleFinding, lint_gguf, lint_safetensors
from hubrelease.lint.speculators import speculators_findings
from hubrelease.lint.target import TargetFacts


def lint_hub_file(
    api: HfApi, uri: str, config: str | None = None, target: TargetFacts | None = None
) -> tuple[list[RuleFinding], Traffic]:
    """``lint.lint_file`` for an ``hf://`` GGUF or safetensors drafter, plus what the reads cost."""
    location = parse_location(uri)
    repo = RemoteRepo(api, location.repo_id, location.revision, location.repo_type)
    raw = _config(api, config, repo.traffic) if config else None
    if location.path.endswith(".gguf"):
        drafter = drafter_config(*raw)[0] if raw else None
        return sorted(lint_gguf(read_gguf(repo, location.path), drafter, None, target)), repo.traffic
    model, sibling = read_safetensors(repo, location.path)
    if raw is None and sibling is not None:
        raw = sibling, Path(repo.uri("config.json"))
    if raw is None:
        raise InputError("safetensors lint needs a config.json (beside the file or via --config)", path=uri)
    drafter, speculators = drafter_config(*raw)
    findings = lint_safetensors(model, drafter, target) + (
        speculators_findings(speculators) if speculators else []
    )
    return sorted(findings), repo.traffic


def _config(api: HfApi, config: str, traffic: Traffic) -> tuple[dict[str, Any], Path]:
    """``--config``'s JSON (a path or ``hf://``) and the path it is named by."""
    if not config.startswith("hf://"):
        return read_json_object(Path(config)), Path(config)
    location = parse_location(config)
    repo = RemoteRepo(api, location.repo_id, location.revision, location.repo_type)
    repo.traffic = traffic
    return repo.read_json(location.path), Path(repo.uri(location.path))
