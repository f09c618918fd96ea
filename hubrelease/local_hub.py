"""The seam a local Hub plugs into: what the client needs of one, and where it finds one.

The loopback Hub (``loopback-hub/``, distribution ``hubrelease-loopback``) is installed apart and
builds on this package's ground floor; were the client to import it back, the two would import each
other. So the client names none of its modules: a distribution offers a local Hub by declaring an
entry point in the group ``GROUP`` (the loopback's is in ``loopback-hub/pyproject.toml``) whose
object is a ``LocalHubProvider``, and ``hub serve``, ``preview``, ``check``'s page check and
``--endpoint local`` load it here, as pytest finds its plugins (``importlib.metadata`` entry points).
Where none is installed they say in one line how to install it (exit 2), or, for ``check``, skip.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Protocol, cast

from hubrelease.errors import InputError

GROUP = "hubrelease.local_hub"
"""The entry-point group a local Hub's distribution declares its ``LocalHubProvider`` in."""
MISSING = (
    "the loopback Hub is a distribution of its own and is not installed here: "
    "run `pip install ./loopback-hub` in the hubrelease repository"
)


class PageProblem(Protocol):
    """Something on a release's page the Hub would refuse, or a reader would find broken."""

    @property
    def kind(self) -> str: ...

    @property
    def message(self) -> str: ...


class LocalHub(Protocol):
    """A Hub-compatible server on 127.0.0.1, bound to its ports."""

    @property
    def url(self) -> str: ...

    @property
    def cdn_url(self) -> str:
        """The storage origin LFS and Xet downloads redirect to (the Hub's CDN)."""
        ...

    @property
    def owner_token(self) -> str:
        """A write token minted for the process that started it; never printed."""
        ...

    def page_problems(self, repo_type: str, repo_id: str, revision: str) -> Sequence[PageProblem]:
        """The problems of the repo's page at ``revision``: its card's front matter, links and images."""
        ...

    def serve_forever(self) -> None:
        """Serve on the calling thread until interrupted."""
        ...

    def stop(self) -> None: ...


@dataclass(frozen=True, kw_only=True)
class ServeOptions:
    """``hub serve``'s options, as the command parsed them (the provider reads the files they name)."""

    port: int = 0
    storage_port: int = 0
    token: str | None = None
    token_file: Path | None = None
    allow_anonymous: bool = False
    anonymous_reads: bool = True
    trusted_publishers: Path | None = None
    access_log: Callable[[str], None] | None = None


class LocalHubProvider(Protocol):
    """What a distribution registered under ``GROUP`` offers."""

    def start(
        self, root: Path, *, port: int = 0, anonymous_reads: bool = False, refuse_invalid_cards: bool = True
    ) -> LocalHub:
        """A Hub on a disk folder, serving from daemon threads, that writes only with its ``owner_token``.

        ``refuse_invalid_cards=False`` commits a card the Hub would refuse, so ``preview`` can show it.
        ``OSError`` when ``port`` cannot be bound.
        """
        ...

    def server(self, root: Path, options: ServeOptions) -> LocalHub:
        """A Hub bound as ``options`` say, not serving yet; ``InputError`` for a token or trust file it
        cannot read, or for options that would let nobody write."""
        ...


def _registered() -> list[EntryPoint]:
    return sorted(entry_points(group=GROUP), key=lambda point: point.name)


def installed() -> bool:
    """Whether a local Hub is installed here (nothing of it is imported)."""
    return bool(_registered())


def provider() -> LocalHubProvider:
    """The installed local Hub (the first by entry-point name), or ``InputError`` saying how to install one.

    The client installs without the server and its dependencies, so every command that starts one
    asks here first: one line and exit 2, never a traceback.
    """
    found = _registered()
    if not found:
        raise InputError(MISSING)
    try:
        return cast("LocalHubProvider", found[0].load())
    except ImportError as exc:  # registered, but the package or one of its dependencies is gone
        raise InputError(
            f"the loopback Hub ({found[0].value}) is installed but cannot be loaded ({exc}): "
            "reinstall it with `pip install ./loopback-hub` in the hubrelease repository"
        ) from None


def server(root: Path, options: ServeOptions) -> LocalHub:
    """The installed local Hub bound for ``hub serve`` (``LocalHubProvider.server``)."""
    return provider().server(root, options)
