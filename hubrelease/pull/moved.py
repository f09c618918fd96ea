"""``pull --check``: whether the release a consumer pinned (``REPO@COMMIT``) is still its branch's head.

The pinned commit's manifest names the branch (``release.revision``); the branch is resolved once and,
when it moved, the two commits' listings are compared and the new manifest's target pin is checked
against the consumer's target. Metadata, configs and headers only: nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hubrelease.errors import InputError
from hubrelease.pull.files import FileChange, file_changes, listed_files
from hubrelease.pull.pairing import Pairing, check_pairing
from hubrelease.pull.release import drafter_facts, read_configs
from hubrelease.pull.resolve import Ref, read_published
from hubrelease.revisions import is_commit

if TYPE_CHECKING:
    from huggingface_hub import HfApi


@dataclass(frozen=True)
class MovedReport:
    repo_id: str
    branch: str
    pinned: str
    head: str
    files: list[FileChange] = field(default_factory=list)
    pairing: Pairing | None = None

    @property
    def moved(self) -> bool:
        return self.head != self.pinned

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo_id": self.repo_id,
            "branch": self.branch,
            "pinned": self.pinned,
            "head": self.head,
            "moved": self.moved,
            "files": [c.to_dict() for c in self.files],
            "pairing": None if self.pairing is None else self.pairing.to_dict(),
        }


def check_moved(api: HfApi, ref: Ref, target: str | None) -> MovedReport:
    """The pinned commit against the head of the branch its manifest publishes to."""
    if ref.revision is None or not is_commit(ref.revision):
        raise InputError(
            f"--check compares the commit you pinned with its branch: give REPO@COMMIT, not {ref.text!r}"
        )
    old = read_published(api, ref)
    branch = old.manifest.release.revision
    new = read_published(api, Ref(ref.repo_id, branch))
    if new.commit == old.commit:
        return MovedReport(ref.repo_id, branch, old.commit, new.commit)
    pairing = None
    if target is not None:
        pairing = check_pairing(api, new.manifest, target, drafter_facts(read_configs(api, new)))
    changes = file_changes(listed_files(old.files), listed_files(new.files))
    return MovedReport(ref.repo_id, branch, old.commit, new.commit, changes, pairing)
