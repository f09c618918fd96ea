"""One pull, in the order that keeps a wrong release from costing a download: the commit and manifest,
the drafter's configs (checked, a few kB), the signature and the pairing (both from metadata and
headers), and only then the weights (``pull.fetch``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hubrelease.errors import CheckFailed, InputError
from hubrelease.formats.dflash import DrafterConfig
from hubrelease.formats.speculators import drafter_config
from hubrelease.hub.download import read_checked
from hubrelease.hub.ranged import Traffic
from hubrelease.manifest.models import Manifest
from hubrelease.pull.command import EngineCommand, engine_commands
from hubrelease.pull.fetch import Fetched, fetch_files, pinned
from hubrelease.pull.pairing import Pairing, PairingRefused, check_pairing
from hubrelease.pull.resolve import Published, Ref, read_published
from hubrelease.pull.select import EngineName, config_paths, engine_files, engine_of
from hubrelease.safe_parse import ScreenError, parse_json

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from hubrelease.signing.verifiers import SignaturePolicy


@dataclass
class PullReport:
    """What ``pull`` did: the commit read, the files in place, the checks, the commands."""

    repo_id: str
    revision: str
    commit: str
    engine: EngineName
    files: list[Fetched] = field(default_factory=list)
    pairing: Pairing | None = None
    signature: dict[str, Any] = field(default_factory=lambda: {"checked": False})
    commands: list[EngineCommand] = field(default_factory=list)
    traffic: Traffic = field(default_factory=Traffic)

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo_id": self.repo_id,
            "revision": self.revision,
            "commit": self.commit,
            "engine": self.engine,
            "files": [
                {
                    "path": f.path,
                    "local": str(f.local),
                    "size": f.size,
                    "sha256": f.sha256,
                    "fetched": f.fetched,
                    "resumed_from": f.resumed_from,
                }
                for f in self.files
            ],
            "pairing": None if self.pairing is None else self.pairing.to_dict(),
            "signature": self.signature,
            "commands": [c.to_dict() for c in self.commands],
            "requests": self.traffic.requests,
            "fetched_bytes": self.traffic.fetched_bytes,
        }


def default_engine(manifest: Manifest) -> EngineName:
    """The first engine the release shows a command for, else one it was measured with, else by its
    recommended file (a GGUF: llama.cpp; else SGLang)."""
    named = [u.engine for u in manifest.card.usage] if manifest.card is not None else []
    for name in [*named, *(e.name for e in manifest.pins.engines)]:
        engine = engine_of(name)
        if engine is not None:
            return engine
    recommended = next((a for a in manifest.artifacts if a.role == "recommended"), None)
    return "llama.cpp" if recommended is not None and recommended.path.endswith(".gguf") else "sglang"


def read_configs(api: HfApi, published: Published) -> dict[str, dict[str, Any]]:
    """The release's config.json files, each checked against the Hub's listing and the manifest's pin."""
    configs: dict[str, dict[str, Any]] = {}
    for path in config_paths(published.manifest):
        artifact = published.manifest.artifact(path)
        entry = published.files.get(path)
        if artifact is None or entry is None:
            continue
        size, sha256 = pinned(artifact)
        data = read_checked(api, published.repo_id, published.commit, published.repo_type, entry)
        if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
            raise CheckFailed(
                f"{path}: the Hub's bytes are not the pinned sha256 {sha256}", path=published.label
            )
        try:
            parsed = parse_json(data)
        except ScreenError as exc:
            raise InputError(f"{path}: not a JSON object ({exc})", path=published.label) from None
        if isinstance(parsed, dict):
            configs[path] = parsed
    return configs


def drafter_facts(configs: dict[str, dict[str, Any]]) -> DrafterConfig | None:
    """The drafter as its first config.json describes it (layer taps, target depth, vocabulary)."""
    for path, raw in configs.items():
        try:
            return drafter_config(raw, Path(path))[0]
        except InputError:
            continue
    return None


def signature_policy(manifest: Manifest, given: SignaturePolicy | None) -> SignaturePolicy | None:
    """Whom to trust for ``model.sig``: the signer the user names, else the one the manifest pins (its
    keyless identity and issuer). The one place a pinned signer identity enters ``pull``. None: nothing
    to check with (an unsigned release, or a key the user must get from the publisher, not the repo)."""
    from hubrelease.manifest.models import GitHubWorkflow
    from hubrelease.signing.verifiers import SignaturePolicy

    if given is not None and given.method is not None:
        return given
    signing = manifest.signing
    if signing is None or signing.method != "sigstore":
        return None
    trust = given.trust_config if given is not None else None
    identity = signing.identity
    return SignaturePolicy(
        identity=identity if isinstance(identity, str) else None,
        issuer=signing.issuer,
        trust_config=trust,
        workflow=identity if isinstance(identity, GitHubWorkflow) else None,
        anchor="the manifest published at that commit",
    )


def check_signature(api: HfApi, published: Published, given: SignaturePolicy | None) -> dict[str, Any]:
    """``model.sig`` against the files the Hub lists at the commit (no weights read); exit 1 when it fails."""
    if published.manifest.signing is None and (given is None or given.method is None):
        return {"checked": False, "why": "the manifest declares no signer"}
    policy = signature_policy(published.manifest, given)
    if policy is None:
        method = published.manifest.signing.method if published.manifest.signing else "key"
        return {
            "checked": False,
            "why": f"signed with a {method}: pass the publisher's --public-key to check it",
        }
    from hubrelease.hub.remote_signature import verify_remote_signature

    found, _ = verify_remote_signature(
        api, published.repo_id, published.commit, policy, {}, repo_type=published.repo_type
    )
    problems = [f"{f.path}: {f.message}" for f in found if f.severity == "error"]
    if problems:
        raise CheckFailed("signature: " + "; ".join(problems), path=published.label)
    return {"checked": True, "ok": True, "method": policy.method}


def pull_release(
    api: HfApi,
    ref: Ref,
    *,
    engine: EngineName | None = None,
    target: str | None = None,
    directory: Path | None = None,
    cache_dir: Path | None = None,
    signer: SignaturePolicy | None = None,
) -> PullReport:
    """Pull ``ref`` for ``engine``; refuses (exit 1) a bad signature or a target that does not pair before
    any weights are read."""
    published = read_published(api, ref)
    manifest = published.manifest
    chosen = engine or default_engine(manifest)
    configs = read_configs(api, published)
    artifacts = engine_files(manifest, chosen, configs)
    report = PullReport(published.repo_id, published.revision, published.commit, chosen)
    report.signature = check_signature(api, published, signer)
    if target is not None:
        report.pairing = check_pairing(api, manifest, target, drafter_facts(configs))
        if not report.pairing.ok:
            raise PairingRefused(report.pairing)
    report.files = fetch_files(api, published, artifacts, directory, cache_dir, traffic=report.traffic)
    local = {f.path: str(f.local) for f in report.files}
    repo = str(directory) if directory is not None else published.repo_id
    paired = target if target is not None and target.endswith(".gguf") and Path(target).is_file() else None
    report.commands = engine_commands(
        manifest, published.label, repo, published.commit, local, engine=chosen, target_file=paired
    )
    return report
