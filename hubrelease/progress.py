"""Progress as events: the library reports, the CLI decides whether anything is drawn."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Receiver of progress events from long-running library work (hashing, uploads, builds)."""

    def start(self, total_bytes: int, description: str) -> None: ...

    def advance(self, nbytes: int) -> None: ...

    def finish(self) -> None: ...


class _NullProgress:
    def start(self, total_bytes: int, description: str) -> None:
        return None

    def advance(self, nbytes: int) -> None:
        return None

    def finish(self) -> None:
        return None


NULL_PROGRESS: Progress = _NullProgress()
