"""``hubrelease pull`` as one library call: the files one engine loads, or with ``check``, whether
the pinned commit is still its branch's head (``pull.moved``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.pull.moved import MovedReport, check_moved
from hubrelease.pull.release import PullReport, pull_release
from hubrelease.pull.resolve import Ref
from hubrelease.pull.select import EngineName

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from hubrelease.signing.verifiers import SignaturePolicy


@dataclass(frozen=True, kw_only=True)
class PullOptions:
    """What ``hubrelease pull`` takes besides the release and the Hub."""

    engine: EngineName | None = None
    target: str | None = None
    directory: Path | None = None
    cache_dir: Path | None = None
    signer: SignaturePolicy | None = None
    check: bool = False
    """Compare the pinned commit with its branch's head instead; downloads nothing."""


def pull(api: HfApi, ref: Ref, options: PullOptions = PullOptions()) -> PullReport | MovedReport:
    """Pull ``ref`` for ``options.engine`` (``pull_release``), or with ``options.check``, report
    whether the release moved (``check_moved``)."""
    if options.check:
        return check_moved(api, ref, options.target)
    return pull_release(
        api,
        ref,
        engine=options.engine,
        target=options.target,
        directory=options.directory,
        cache_dir=options.cache_dir,
        signer=options.signer,
    )
