"""``hubrelease lint``'s one library call: lint what the user names, a drafter file on disk or on
the Hub, or a whole release, against the target they name (or the release pins)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import HfApi

from hubrelease.errors import HubUnavailable
from hubrelease.hub.ranged import Traffic
from hubrelease.hub.remote_lint import lint_hub_file
from hubrelease.hub.target_facts import fetch_target, read_hub_target
from hubrelease.lint import lint_file
from hubrelease.lint.findings import FileFinding
from hubrelease.lint.release import lint_release
from hubrelease.lint.target import TargetFacts, read_local_target
from hubrelease.manifest import load_manifest
from hubrelease.manifest.root import release_root


@dataclass(frozen=True)
class LintResult:
    """The findings, what could not be checked (warnings), and the Hub reads an ``hf://`` file cost."""

    findings: list[FileFinding]
    warnings: list[str] = field(default_factory=list)
    traffic: Traffic | None = None

    @property
    def errors(self) -> int:
        return sum(f.finding.severity == "error" for f in self.findings)


def lint_location(
    location: str, *, config: str | None = None, target: str | None = None, hub: Callable[[], HfApi]
) -> LintResult:
    """Lint ``location``: a release manifest (.yaml), an ``hf://`` file, or a local file or folder.

    ``target`` (a path or ``hf://``) gives the served target's depth, width and vocabulary; a release
    reads its pinned target instead. ``hub`` makes the Hub client, called only when one is needed.
    """
    facts = _target(target, hub) if target is not None else None
    remote = location.startswith("hf://")
    if location.endswith((".yaml", ".yml")) and not remote:
        return _release(Path(location), facts, hub)
    if remote:
        findings, traffic = lint_hub_file(hub(), location, config, facts)
        return LintResult([FileFinding(location, f) for f in findings], traffic=traffic)
    found = lint_file(Path(location), Path(config) if config else None, None, facts)
    return LintResult([FileFinding(location, f) for f in found])


def _target(spec: str, hub: Callable[[], HfApi]) -> TargetFacts:
    return read_hub_target(hub(), spec) if spec.startswith("hf://") else read_local_target(spec)


def _release(manifest_path: Path, facts: TargetFacts | None, hub: Callable[[], HfApi]) -> LintResult:
    manifest = load_manifest(manifest_path)
    root = release_root(manifest, manifest_path)
    if facts is not None or not manifest.pins.targets or not any(a.lint for a in manifest.artifacts):
        return LintResult(lint_release(manifest, root, facts))
    try:
        facts = fetch_target(hub(), manifest, root)
    except HubUnavailable as exc:  # the local files are still linted; the target rules wait for the Hub
        warning = f"the pinned target was not read ({exc}): linted without its depth and width"
        return LintResult(lint_release(manifest, root, None), [warning])
    if facts is None:
        pin = manifest.pins.targets[0]
        warning = (
            f"{pin.repo_id}@{pin.revision}: nothing pins the target's bytes (no commit, no header pin): "
            "linted without its depth and width (`hubrelease lock` pins it, or give --target)"
        )
        return LintResult(lint_release(manifest, root, None), [warning])
    return LintResult(lint_release(manifest, root, facts))
