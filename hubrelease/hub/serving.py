"""``hubrelease hub serve`` as one library call: the loopback Hub configured from the command's
token and trust files, ready to serve in the foreground."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.errors import InputError
from hubrelease.hub.client import require_loopback

if TYPE_CHECKING:
    from hubrelease_loopback import LoopbackHub


@dataclass(frozen=True, kw_only=True)
class ServeOptions:
    """What ``hub serve`` takes: where the Hub keeps its repos, its ports, and who may use it."""

    root: Path
    port: int = 0
    storage_port: int = 0
    token: str | None = None
    """A write token for every repo."""
    token_file: Path | None = None
    trusted_publishers: Path | None = None
    allow_anonymous: bool = False
    anonymous_reads: bool = True


def served_hub(options: ServeOptions, *, access_log: Callable[[str], None]) -> LoopbackHub:
    """The loopback Hub ``options`` describe (not yet serving); a Hub no one could write to without
    a token, or an unreadable token or trust file, is an input error."""
    require_loopback()
    from hubrelease_loopback import LoopbackHub
    from hubrelease_loopback.auth import EVERYTHING, Grant, TokenFileError, read_token_file
    from hubrelease_loopback.oidc import TrustedPublishing, TrustFileError, read_trust_file

    tokens: dict[str, Grant] = {}
    if options.token_file is not None:
        try:
            tokens.update(read_token_file(options.token_file))
        except (OSError, UnicodeDecodeError, TokenFileError) as exc:
            raise InputError(f"cannot read the token file: {exc}", path=options.token_file) from None
    if options.token:
        tokens[options.token] = EVERYTHING
    trusted = TrustedPublishing()
    if options.trusted_publishers is not None:
        try:
            trusted = read_trust_file(options.trusted_publishers)
        except (OSError, UnicodeDecodeError, TrustFileError) as exc:
            raise InputError(
                f"cannot read the trusted publishers: {exc}", path=options.trusted_publishers
            ) from None
    if not tokens and not options.allow_anonymous:
        raise InputError("hub serve needs --token, --token-file or --allow-anonymous", field="token")
    hub = LoopbackHub(
        options.root,
        port=options.port,
        storage_port=options.storage_port,
        access_log=access_log,
        tokens=tokens,
        allow_anonymous=options.allow_anonymous,
        anonymous_reads=options.anonymous_reads,
    )
    hub.oidc = trusted
    return hub
