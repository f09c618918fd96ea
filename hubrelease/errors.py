"""One error tree for the whole package.

Every error a user can cause is a ``HubReleaseError`` subclass carrying an exit code and the
context (file, line, field, repo) the CLI needs to print one actionable line. Drift is *not* an
error: it is data in a report, and the CLI maps it to exit code 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hubrelease.outcome import Outcome


class HubReleaseError(Exception):
    """Base class: a one-line, user-facing failure. ``exit_code`` 2 = usage or invalid input."""

    exit_code: int = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field

    def __str__(self) -> str:
        prefix = ""
        if self.path is not None:
            prefix = self.path
            if self.line is not None:
                prefix += f":{self.line}"
            prefix += ": "
        if self.field:
            prefix += f"{self.field}: "
        return prefix + self.message

    def lines(self) -> list[str]:
        """What the CLI prints, one ``error:`` line each: one, unless the error lists several problems
        (a newline inside a value from a file is shown escaped, never as a line of its own)."""
        return [str(self)]


class ManifestError(HubReleaseError):
    """The manifest cannot be parsed or does not validate."""


class InputError(HubReleaseError):
    """A file, folder or option given by the user is unusable (missing, unreadable, wrong kind)."""


class FormatError(HubReleaseError):
    """A model or data file is malformed (truncated GGUF, lying length field, bad safetensors header)."""


class BuildError(HubReleaseError):
    """A builder refused its input (tensor set does not match the config, unknown key...)."""


class CheckFailed(HubReleaseError):
    """A check the user asked for did not pass (e.g. ``render-card --check``). Exit code 1."""

    exit_code = 1


class HubError(HubReleaseError):
    """The Hub (or the loopback Hub) refused or failed a request.

    A push's errors carry its ``outcome``: whether anything landed and where, as data.
    """

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        repo_id: str | None = None,
        status: int | None = None,
        outcome: Outcome | None = None,
        path: str | Path | None = None,
    ) -> None:
        super().__init__(message, path=path)
        self.repo_id = repo_id
        self.status = status
        self.outcome = outcome

    def to_dict(self) -> dict[str, object]:
        """``error`` in ``push --json``: a push's failure and its outcome (docs/manual/publishing.md, "push --json")."""
        return {
            "error": type(self).__name__,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "field": self.field,
            "exit_code": self.exit_code,
            "repo_id": self.repo_id,
            "status": self.status,
            "outcome": None if self.outcome is None else self.outcome.to_dict(),
        }


class HubUnavailable(HubError):
    """The Hub could not be reached or refused us (network, auth, rate limit, 5xx, Xet): exit code 4.

    Distinct from 1 (a check failed) and 2 (our input is wrong) so CI can retry or alert on it.
    """

    exit_code = 4


class RemoteMovedError(HubError):
    """The branch moved since the push was planned (HTTP 412): someone else pushed."""


class NotFoundError(HubError):
    """A repository or revision does not exist on the Hub. Invalid input, so exit code 2."""

    exit_code = 2


class MetadataRefused(HubError):
    """The Hub refused the card's metadata (validate-yaml 400): invalid input, so exit code 2."""

    exit_code = 2


class StepFailedAfterLanding(HubError):
    """The commit landed, then a later step (the tag, the remote verify) failed.

    Its exit code is the step's (4 for the Hub, 1 for a check, 3 for a bug), given when raised:
    the release is published either way, which ``outcome`` says.
    """

    def __init__(self, message: str, *, exit_code: int, repo_id: str, outcome: Outcome) -> None:
        super().__init__(message, repo_id=repo_id, outcome=outcome)
        self.step_exit_code = exit_code

    @property
    def exit_code(self) -> int:  # type: ignore[override]  # read-only: the step's code, fixed when raised
        return self.step_exit_code


def with_outcome(error: HubError, text: str, outcome: Outcome) -> HubError:
    """``error`` again, same class (so same exit code), with ``text`` as its message and ``outcome``."""
    return type(error)(text, repo_id=error.repo_id, status=error.status, outcome=outcome, path=error.path)
