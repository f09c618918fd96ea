"""``hubrelease lint MANIFEST``: every check a release's files and metadata must pass before users meet them.

The drafters marked ``lint: true`` against their config and the pinned target's facts
(``lint.target``), then the release-level rules: how llama.cpp's ``-hf`` resolves the GGUF files
(``lint.hf_tags``), and the licence against everything the release derives from (``lint.licenses``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.errors import HubReleaseError
from hubrelease.fsutil import ReleaseFolder, read_regular
from hubrelease.lint.drafter import lint_file
from hubrelease.lint.findings import FileFinding, RuleFinding, error, warning
from hubrelease.lint.hf_tags import hf_tag_findings
from hubrelease.lint.hub_keys import hub_key_findings
from hubrelease.lint.licenses import license_findings
from hubrelease.lint.metadata import card_metadata_findings, gguf_general_findings

if TYPE_CHECKING:
    from hubrelease.lint.target import TargetFacts
    from hubrelease.manifest.models import Manifest


def lint_release(manifest: Manifest, root: Path, target: TargetFacts | None) -> list[FileFinding]:
    """All findings of the release in ``root``; ``target`` is the pinned target's facts, when known."""
    folder = ReleaseFolder(root)
    results: list[FileFinding] = []
    for artifact in manifest.artifacts:
        if not artifact.lint:
            continue
        config = folder.path(artifact.lint_config) if artifact.lint_config else None
        path = folder.path(artifact.local_path)
        if not path.exists():  # verify reports it missing; a manifest of a published release may be alone
            results.append(
                FileFinding(artifact.path, warning("readable", "not in the release folder: not linted"))
            )
            continue
        try:
            found = lint_file(path, config, artifact.composition, target)
        except HubReleaseError as exc:
            found = [error("readable", f"cannot lint: {exc}")]
        results += [FileFinding(artifact.path, f) for f in found]
        if config is not None:
            results += [FileFinding(artifact.path, f) for f in verifier_pin_findings(manifest, config)]
    results += [FileFinding("pins", f) for f in license_findings(manifest)]
    results += [FileFinding("release", f) for f in hub_key_findings(manifest.release)]
    results += hf_tag_findings(manifest, root)
    results += eval_results_findings(manifest, root)
    results += gguf_general_findings(manifest, root)
    results += card_metadata_findings(manifest, root)
    return results


def verifier_pin_findings(manifest: Manifest, config: Path) -> list[RuleFinding]:
    """A speculator's verifier is one of the release's pinned targets, at a commit: speculators and vLLM
    fetch it by name at its default branch (``speculators/utils/loading.py:170``), so the manifest and the
    card are where the commit it was built for is stated."""
    from hubrelease.formats.safetensors_header import read_json_object
    from hubrelease.formats.speculators import is_speculators

    try:
        raw = read_json_object(config)
    except HubReleaseError:
        return []  # the drafter lint reports an unreadable config
    verifier = raw.get("speculators_config", {}).get("verifier") if is_speculators(raw) else None
    name = verifier.get("name_or_path") if isinstance(verifier, dict) else None
    if not isinstance(name, str):
        return []
    pins = {p.repo_id: p for p in manifest.pins.targets}
    pin = pins.get(name)
    if pin is None or pin.unpinned or not pin.revision:
        state = "not in pins.targets" if pin is None else "pinned without a commit"
        return [
            error(
                "speculators", f"the verifier {name} is {state}: pin the commit the speculator was built for"
            )
        ]
    return []


def eval_results_findings(manifest: Manifest, root: Path) -> list[FileFinding]:
    """Each ``.eval_results`` artifact is a fresh render of its evaluation file and parses with
    huggingface_hub's ``parse_eval_result_entries``."""
    from hubrelease.evaluation.eval_results import BUILDER, parse, render

    pins = {e.path: e for e in manifest.evaluation_files}
    results = []
    for artifact in manifest.artifacts:
        if artifact.recipe is None or artifact.recipe.builder != BUILDER:
            continue
        source = artifact.recipe.source or ""
        dataset = artifact.recipe.options.get("dataset")
        path = root / artifact.local_path
        if source not in pins:
            results.append(
                FileFinding(
                    artifact.path,
                    error("eval-results", f"its evaluation file {source!r} is not in evaluations"),
                )
            )
            continue
        try:
            expected = render(manifest, pins[source], root, dataset if isinstance(dataset, str) else None)
            actual = read_regular(path)  # a FIFO is refused, not waited on
            parse(actual)
        except (HubReleaseError, OSError, ValueError, KeyError) as exc:
            results.append(FileFinding(artifact.path, error("eval-results", f"cannot be checked: {exc}")))
            continue
        if actual != expected:
            results.append(FileFinding(artifact.path, error("eval-results", f"is not a fresh render of {source}: run `hubrelease build eval-results`")))  # fmt: skip
    return results
