"""The target a user points at against the target the release pins, before any weights are fetched.

What is compared, each with both values: the repo and commit (a target on the Hub), the bytes that
identify the build (a config.json's sha256, a GGUF's header sha256, as pinned in ``pins.targets[].files``;
a GGUF set pinned by its shards' sizes alone, as a publisher who recorded no commit pins it, by those),
the target's depth, hidden size and vocabulary (``lint.target.TargetFacts``: from the pinned target on
the Hub when its bytes are pinned), and the drafter's own claims about its target: the layers it taps
and ``num_target_layers`` (``lint.target.target_findings``, the rule the engines enforce or silently
break: a guessed layer loads and collapses acceptance). Any mismatch refuses the pull (exit 1).
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hubrelease.errors import CheckFailed, InputError
from hubrelease.formats.dflash import DrafterConfig
from hubrelease.formats.gguf_header import read_gguf, split_shards
from hubrelease.hub.metadata import list_files, resolve_commit
from hubrelease.hub.target_facts import fetch_target, read_target_file
from hubrelease.lint.target import TargetFacts, pinned_source, read_local_target, target_findings
from hubrelease.manifest.models import Manifest, PinnedRepo
from hubrelease.pull.resolve import Ref, parse_ref
from hubrelease.revisions import is_commit

if TYPE_CHECKING:
    from huggingface_hub import HfApi


@dataclass(frozen=True)
class PairingCheck:
    """One comparison: what the release pins, what the user's target has."""

    what: str
    pinned: str
    found: str
    ok: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Pairing:
    target: str
    """The target as the user gave it (a Hub target: at the commit read)."""
    checks: tuple[PairingCheck, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "ok": self.ok, "checks": [c.to_dict() for c in self.checks]}

    def mismatches(self) -> list[str]:
        """One line per failed check: both values, or the drafter rule's own message (which names both)."""
        return [
            f"{c.what}: the release pins {c.pinned}, the target has {c.found}"
            if c.pinned
            else f"{c.what}: {c.found}"
            for c in self.checks
            if not c.ok
        ]


class PairingRefused(CheckFailed):
    """The target does not pair: one ``error:`` line saying so, then one per mismatch with both values."""

    def __init__(self, pairing: Pairing) -> None:
        super().__init__(
            f"{pairing.target}: the target does not pair with this release; nothing was downloaded"
        )
        self.problems = pairing.mismatches()

    def lines(self) -> list[str]:
        return [str(self), *self.problems]


def _check(what: str, pinned: object, found: object) -> PairingCheck:
    return PairingCheck(what, str(pinned), str(found), pinned == found)


def _gguf_headers(pin: PinnedRepo) -> set[str]:
    return {f.header_sha256 for f in pin.files if f.path.endswith(".gguf") and f.header_sha256}


def _config_sha256(pin: PinnedRepo) -> str | None:
    return next((f.sha256 for f in pin.files if f.path == "config.json" and f.sha256), None)


def _shard_sizes(pin: PinnedRepo, found: list[int | None]) -> list[PairingCheck]:
    """The GGUF set's sizes, shard by shard, against the pinned ones (none when the pin has no sizes)."""
    pinned = [f.size for f in sorted(pin.files, key=lambda f: f.path) if f.path.endswith(".gguf")]
    if not pinned or None in pinned:
        return []
    return [_check("target GGUF shard sizes", ", ".join(map(str, pinned)), ", ".join(map(str, found)))]


def _local(spec: Path, pin: PinnedRepo) -> tuple[TargetFacts, list[PairingCheck]]:
    facts = read_local_target(spec)
    checks = []
    if spec.name.endswith(".gguf"):
        checks += _shard_sizes(pin, [shard.stat().st_size for shard in split_shards(spec)])
    if spec.name.endswith(".gguf") and _gguf_headers(pin):
        header = read_gguf(spec).shards[0].header_sha256
        pinned = _gguf_headers(pin)
        checks.append(
            PairingCheck("GGUF header sha256", " or ".join(sorted(pinned)), header, header in pinned)
        )
    config = spec / "config.json" if spec.is_dir() else spec
    if config.name == "config.json" and _config_sha256(pin):
        checks.append(
            _check("config.json sha256", _config_sha256(pin), hashlib.sha256(config.read_bytes()).hexdigest())
        )
    return facts, checks


def _hub(api: HfApi, ref: Ref, pin: PinnedRepo) -> tuple[str, TargetFacts, list[PairingCheck]]:
    commit = resolve_commit(api, ref.repo_id, ref.revision or pin.revision or "main", pin.repo_type)
    checks = []
    if pin.revision and is_commit(pin.revision):
        checks.append(_check("target commit", pin.revision, commit))
    ggufs = [f for f in pin.files if f.path.endswith(".gguf")]
    if ggufs:
        listed = list_files(api, ref.repo_id, commit, pin.repo_type)
        names = sorted(f.path for f in ggufs)
        checks += _shard_sizes(pin, [listed[n].size if n in listed else None for n in names])
    path = ggufs[0].path if ggufs else "config.json"
    facts, header = read_target_file(api, ref.repo_id, commit, path, pin.repo_type)
    if header is not None and _gguf_headers(pin):
        pinned = _gguf_headers(pin)
        checks.append(
            PairingCheck(
                f"GGUF header sha256 ({path})", " or ".join(sorted(pinned)), header, header in pinned
            )
        )
    return f"{ref.repo_id}@{commit}", facts, checks


def parse_target(spec: str) -> Path | Ref:
    """A local path when one exists there, else ``REPO[@REV]`` on the Hub (exit 2 when it is neither)."""
    path = Path(spec)
    if path.exists():
        return path
    try:
        return parse_ref(spec)
    except InputError:
        raise InputError(f"--target {spec!r}: no such file or folder, and not REPO[@REVISION]") from None


def check_pairing(api: HfApi, manifest: Manifest, spec: str, drafter: DrafterConfig | None) -> Pairing:
    """Every check of the user's target ``spec`` against the release; read-only, headers and configs only."""
    if not manifest.pins.targets:
        raise InputError("--target: the release pins no target to pair with")
    target = parse_target(spec)
    pins = manifest.pins.targets
    if isinstance(target, Path):
        shown, (facts, checks) = str(target), _local(target, pins[0])
    else:
        pin = next((p for p in pins if p.repo_id == target.repo_id), None)
        if pin is None:
            known = " or ".join(p.repo_id for p in pins)
            return Pairing(target.text, (PairingCheck("target repo", known, target.repo_id, False),))
        shown, facts, checks = _hub(api, target, pin)
    if pinned_source(manifest) is not None:
        with tempfile.TemporaryDirectory() as scratch:  # the pin's facts are not cached for a consumer
            expected = fetch_target(api, manifest, Path(scratch))
        if expected is not None:
            checks += [
                _check("target layers", expected.depth, facts.depth),
                _check("target hidden size", expected.hidden, facts.hidden),
                _check("target vocabulary", expected.vocab, facts.vocab),
            ]
    if drafter is not None:
        declared = drafter.raw.get("num_target_layers")
        for finding in target_findings(
            facts, drafter.target_layer_ids, None, drafter.mask_token_id, None, declared_depth=declared
        ):
            checks.append(PairingCheck(f"drafter {finding.rule_id}", "", finding.message, False))
        if drafter.vocab_size is not None and facts.vocab is not None:
            checks.append(_check("drafter vocabulary", drafter.vocab_size, facts.vocab))
    return Pairing(shown, tuple(checks))
