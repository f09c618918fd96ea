"""``hubrelease preview``: the release as ``push`` would publish it, on an embedded loopback Hub.

The same steps as ``push`` (local preflight, plan, one commit through huggingface_hub) against a
loopback Hub in a temporary folder on 127.0.0.1, so the page a reader would see can be opened
before anything is published; nothing leaves the machine and the pinned repos are not looked up
(``check_pins`` needs the real Hub). The embedded Hub lets a browser read without a token but
writes only with the token this process minted. The page's problems (front matter the Hub's
validate-yaml would refuse, broken links and images) are the local Hub's page's own
(``LocalHub.page_problems``); the card is committed even when the Hub would refuse it, so it
can be seen, and the refusal is reported.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING
from urllib.parse import quote

from huggingface_hub import HfApi

from hubrelease.errors import InputError
from hubrelease.hub import build_plan, push_release, read_remote
from hubrelease.local_hub import provider
from hubrelease.manifest import load_manifest, release_root
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.verify.preflight import preflight

if TYPE_CHECKING:
    from hubrelease.hub.plan import PushPlan
    from hubrelease.local_hub import LocalHub, PageProblem


@dataclass
class Preview:
    """A running embedded Hub holding the release; ``close()`` stops it and removes its folder."""

    hub: LocalHub
    folder: Path
    plan: PushPlan
    commit: str
    problems: Sequence[PageProblem]

    @property
    def url(self) -> str:
        """The release's page (``/tree/{revision}`` for a branch other than main)."""
        prefix = "" if self.plan.repo_type == "model" else f"{self.plan.repo_type}s/"
        page = f"{self.hub.url}/{prefix}{self.plan.repo_id}"
        return page if self.plan.revision == "main" else f"{page}/tree/{quote(self.plan.revision, safe='')}"

    def to_dict(self) -> dict[str, object]:
        """The ``preview --json`` payload's body (docs/manual/publishing.md, "preview")."""
        return {
            "url": self.url,
            "repo_id": self.plan.repo_id,
            "repo_type": self.plan.repo_type,
            "revision": self.plan.revision,
            "commit": self.commit,
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.plan.files],
            "problems": [{"kind": p.kind, "message": p.message} for p in self.problems],
        }

    def close(self) -> None:
        self.hub.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Preview:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def open_preview(
    manifest_path: Path, directory: Path | None = None, port: int = 0, progress: Progress = NULL_PROGRESS
) -> Preview:
    """Preflight the release as push does, publish it to a new embedded Hub, and read its page's problems."""
    local = provider()
    manifest = load_manifest(manifest_path)
    root = release_root(manifest, manifest_path, directory)
    preflight(manifest, manifest_path, root, progress)
    folder = Path(tempfile.mkdtemp(prefix="hubrelease-preview-"))
    try:
        hub = local.start(folder / "hub", port=port, anonymous_reads=True, refuse_invalid_cards=False)
    except OSError as exc:  # --port taken (or not ours to bind)
        shutil.rmtree(folder, ignore_errors=True)
        raise InputError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}", field="--port") from None
    try:
        api = HfApi(endpoint=hub.url, token=hub.owner_token)
        plan = build_plan(manifest, manifest_path, root, read_remote(api, manifest))
        with warnings.catch_warnings():  # validate-yaml's warnings: reported below as problems
            warnings.simplefilter("ignore")
            result = push_release(
                api, plan, message=f"Preview of {plan.repo_id}", create_pr=False, tag=None, private=False
            )
        problems = hub.page_problems(plan.repo_type, plan.repo_id, result.commit)
    except BaseException:
        hub.stop()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return Preview(hub, folder, plan, result.commit, problems)
