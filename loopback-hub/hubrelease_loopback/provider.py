"""The loopback Hub as the client's local Hub: the object this distribution registers under
hubrelease's ``hubrelease.local_hub`` entry points (``pyproject.toml``), which ``hub serve``,
``preview``, ``check`` and ``--endpoint local`` load (``hubrelease.local_hub``).

The server's modules (blake3, lz4, numpy) are imported when a Hub is made, not when the entry point
is loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.errors import InputError
from hubrelease.local_hub import LocalHubProvider, ServeOptions

if TYPE_CHECKING:
    from hubrelease_loopback.auth import Grant
    from hubrelease_loopback.server import LoopbackHub


class LoopbackProvider:
    """``hubrelease.local_hub.LocalHubProvider`` for ``server.LoopbackHub``."""

    def start(
        self, root: Path, *, port: int = 0, anonymous_reads: bool = False, refuse_invalid_cards: bool = True
    ) -> LoopbackHub:
        from hubrelease_loopback.server import LoopbackHub

        hub = LoopbackHub(root, port=port, allow_anonymous=False, anonymous_reads=anonymous_reads)
        hub.refuse_invalid_cards = refuse_invalid_cards
        return hub.start()

    def server(self, root: Path, options: ServeOptions) -> LoopbackHub:
        from hubrelease_loopback.auth import EVERYTHING, TokenFileError, read_token_file
        from hubrelease_loopback.oidc import TrustedPublishing, TrustFileError, read_trust_file
        from hubrelease_loopback.server import LoopbackHub

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
            root,
            port=options.port,
            storage_port=options.storage_port,
            access_log=options.access_log,
            tokens=tokens,
            allow_anonymous=options.allow_anonymous,
            anonymous_reads=options.anonymous_reads,
        )
        hub.oidc = trusted
        return hub


PROVIDER: LocalHubProvider = LoopbackProvider()
"""The entry point's object (mypy checks here that it is what the client loads)."""
