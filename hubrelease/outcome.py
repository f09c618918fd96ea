"""Whether a push landed, and where: the one fact every push result and push error carries as data.

A caller (the CLI, a CI script, ``--json``) decides from ``Outcome.state`` and ``Outcome.ref``, never
from the wording of a message: ``unchanged`` (the remote is as it was: retrying is safe), ``landed``
(the commit is on the Hub at ``ref``: a later step may have failed), ``unknown`` (the Hub could not
be read back after a failed attempt: ``hubrelease verify --remote`` says which).

It sits below the error tree, which carries it on every push error.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

State = Literal["unchanged", "landed", "unknown"]


@dataclass(frozen=True)
class Outcome:
    """Where the remote stands after a push (or a failed one)."""

    state: State
    repo_id: str
    ref: str | None
    """The branch the commit is (or would have been) on, or ``refs/pr/N``; None when no PR was seen."""
    commit: str | None
    """landed: the new commit; unchanged: the head it is still at (None: no repo existed); unknown: None."""

    @property
    def landed(self) -> bool:
        return self.state == "landed"

    def clause(self) -> str:
        """The end of a one-line message: what this outcome means for the user."""
        if self.state == "landed":
            return f"{self.commit} is on the Hub at {self.repo_id}@{self.ref}"
        if self.state == "unknown":
            return "whether the commit landed is unknown: run `hubrelease verify --remote`"
        if self.commit is None:
            return "nothing was pushed"
        return f"nothing landed: {self.repo_id}@{self.ref} is unchanged at {self.commit[:12]}"

    def to_dict(self) -> dict[str, object]:
        """``outcome`` in ``push --json`` (result and error alike)."""
        return asdict(self)
