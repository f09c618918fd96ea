"""The engine command lines a pulled release was measured with: its ``card.usage`` entries, rendered by
the card's own code (``card.context.usage_commands``) with the drafter at the commit pulled, and run
with ``--exec``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hubrelease.card.context import DrafterRef, UsageCommand, usage_commands
from hubrelease.card.locator import Locator
from hubrelease.manifest.models import Manifest
from hubrelease.pull.select import EngineName, engine_of


@dataclass(frozen=True)
class EngineCommand:
    """One command: the engine it runs on (``pull``'s name), its pinned commit, and its text."""

    engine: EngineName | None
    pinned_engine: str
    engine_commit: str
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return " \\\n  ".join(self.lines)

    @property
    def argv(self) -> list[str]:
        """The command as arguments, for ``--exec`` (no shell: values are quoted as the card prints them)."""
        return shlex.split(" ".join(self.lines))

    def to_dict(self) -> dict[str, object]:
        return {
            "engine": self.engine,
            "pinned_engine": self.pinned_engine,
            "engine_commit": self.engine_commit,
            "command": self.text,
            "argv": self.argv,
        }


def _command(usage: UsageCommand) -> EngineCommand:
    return EngineCommand(engine_of(usage.engine.name), usage.engine.name, usage.engine.commit, usage.lines)


def engine_commands(
    manifest: Manifest,
    label: str,
    repo: str,
    commit: str,
    files: Mapping[str, str] | None = None,
    *,
    engine: EngineName | None = None,
    target_file: str | None = None,
) -> list[EngineCommand]:
    """The release's commands (those of ``engine`` when given), the drafter named as ``repo`` at ``commit``;
    ``files`` maps repo paths to the local copies a command should name, ``target_file`` is the local
    target GGUF the user paired with (named where the command names the target's file)."""
    if manifest.card is None:
        return []
    drafter = DrafterRef(repo, commit, dict(files or {}), target_file)
    commands = usage_commands(manifest, manifest.card, Locator(Path(label)), {}, (), drafter=drafter)
    return [c for c in map(_command, commands) if engine is None or c.engine == engine]
