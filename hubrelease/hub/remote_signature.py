"""A published release checked against its ``model.sig`` on the Hub, without downloading weights.

The Hub's tree listing gives every LFS/Xet file's sha256, which is what the statement signs. A
regular (non-LFS) file has only a git blob id there: its digest comes from the local copy when that
copy has the same blob id, else from its bytes, fetched (regular files are small: the Hub sends
anything over 10 MiB to LFS). The signature itself is a regular file, fetched the same way. Every
file at the commit counts but those ``model_signing verify`` of a download ignores under the
statement's own rules (``signing.folder``), so a file added on the Hub is "published but not
signed", exactly as it would say "Extra files".
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.findings import Finding
from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.signing.folder import hidden
from hubrelease.signing.release import statement_findings, verified_statement, with_signer
from hubrelease.signing.verifiers import SignaturePolicy

if TYPE_CHECKING:  # the Hub client loads for a remote check only: a local `verify --signature` needs none
    from huggingface_hub import HfApi

    from hubrelease.hub.metadata import RemoteFile
    from hubrelease.hub.ranged import Traffic
    from hubrelease.manifest.models import Manifest

MAX_SIGNATURE_BYTES = 64 << 20
"""A statement of 25,000 files (the Hub's per-commit cap) is about 5 MB of base64: far below this."""


def verify_remote_signature(
    api: HfApi,
    repo_id: str,
    commit: str,
    policy: SignaturePolicy,
    local: Mapping[str, Path],
    *,
    repo_type: str = "model",
) -> tuple[list[Finding], Traffic]:
    """Findings for the repo at ``commit`` against its ``model.sig``, and what reading it cost.

    ``local`` maps repo paths to local copies that may spare a download of a regular file.
    """
    from hubrelease.hub.download import read_whole
    from hubrelease.hub.metadata import list_files
    from hubrelease.hub.ranged import Traffic

    traffic = Traffic()
    files = list_files(api, repo_id, commit, repo_type)
    remote_sig = files.get(SIGNATURE_NAME)
    if remote_sig is None:
        return [Finding.make("signature", SIGNATURE_NAME, "no signature on the Hub at this commit")], traffic
    if remote_sig.size > MAX_SIGNATURE_BYTES:
        message = (
            f"{remote_sig.size:,} bytes, over the {MAX_SIGNATURE_BYTES:,} a signature may take; not read"
        )
        return [Finding.make("signature", SIGNATURE_NAME, message)], traffic
    with tempfile.TemporaryDirectory() as scratch:
        signature = Path(scratch) / SIGNATURE_NAME
        signature.write_bytes(read_whole(api, repo_id, commit, repo_type, remote_sig, traffic=traffic))
        signed = verified_statement(signature, policy)
    if isinstance(signed, Finding):
        return [signed], traffic
    observed: dict[str, str | None] = {}
    for path, entry in sorted(files.items()):
        if hidden(path, signed):  # what model_signing verify of a download skips, by the statement's rules
            continue
        observed[path] = entry.sha256 or _regular_sha256(
            api, repo_id, commit, repo_type, entry, local=local, traffic=traffic
        )
    return with_signer(statement_findings(signed, observed), policy), traffic


def _regular_sha256(
    api: HfApi,
    repo_id: str,
    commit: str,
    repo_type: str,
    entry: RemoteFile,
    *,
    local: Mapping[str, Path],
    traffic: Traffic,
) -> str | None:
    """sha256 of a regular file on the Hub: from a local copy with its blob id, else from its bytes."""
    from hubrelease.hub.download import is_content, read_whole
    from hubrelease.hub.plan import REGULAR_FILE_MAX

    copy = local.get(entry.path)
    if copy is not None and copy.is_file() and copy.stat().st_size == entry.size:
        data = copy.read_bytes()
        if is_content(data, entry):
            return hashlib.sha256(data).hexdigest()
    if entry.size > REGULAR_FILE_MAX:
        return None  # not a regular file the Hub would keep: reported as not matching, never fetched
    data = read_whole(api, repo_id, commit, repo_type, entry, traffic=traffic)
    return hashlib.sha256(data).hexdigest() if is_content(data, entry) else None


MAX_MANIFEST_BYTES = 10 << 20
"""The Hub keeps a file up to 10 MiB as a regular file; a larger manifest is not one push wrote."""


def trusted_manifest(api: HfApi, pinned: str, name: str, repo_type: str = "model") -> Manifest:
    """The manifest ``name`` as published at ``REPO@COMMIT`` (``pinned``), read from the Hub.

    A reader's trust root: a commit the reader chose, whose files a later push cannot change, unlike
    the folder being checked. Only a 40-hex commit is accepted (a branch or tag can be moved).
    """
    from hubrelease.errors import CheckFailed, InputError
    from hubrelease.hub.download import is_content, read_whole
    from hubrelease.hub.metadata import list_files
    from hubrelease.manifest import load_manifest_text
    from hubrelease.revisions import is_commit

    repo_id, _, commit = pinned.rpartition("@")
    if not repo_id or not is_commit(commit):
        raise InputError(
            f"--trust-manifest {pinned!r}: say REPO@COMMIT, the full 40-hex commit whose manifest you trust"
        )
    entry = list_files(api, repo_id, commit, repo_type).get(name)
    if entry is None or entry.size > MAX_MANIFEST_BYTES:
        raise CheckFailed(f"--trust-manifest: {repo_id} has no {name} at {commit}")
    data = read_whole(api, repo_id, commit, repo_type, entry)
    if not is_content(data, entry):
        raise CheckFailed(f"--trust-manifest: {name} at {repo_id}@{commit} is not what the Hub lists")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CheckFailed(f"--trust-manifest: {name} at {repo_id}@{commit} is not UTF-8") from None
    return load_manifest_text(text, f"{repo_id}@{commit}:{name}")


def signer_policy(
    release: Manifest,
    manifest_path: Path,
    root: Path,
    given: SignaturePolicy,
    trust_manifest: str | None = None,
    *,
    api: HfApi | None = None,
    remote: bool = False,
) -> SignaturePolicy:
    """Whom ``verify --signature`` trusts: ``given`` if it names a signer, else the ``signing:`` of
    the manifest published at ``trust_manifest`` (REPO@COMMIT, read from the Hub) or of ``release``.

    ``release``'s own pin counts as from outside the files checked only with ``remote``: the manifest
    given is then the reference the Hub is compared with, not one of the files under test.
    """
    from hubrelease.signing.release import declared_policy

    if trust_manifest is not None:
        assert api is not None
        release = trusted_manifest(api, trust_manifest, manifest_path.name, release.release.repo_type)
        given = given._replace(anchor=f"the manifest at {trust_manifest}")
    policy = declared_policy(release, given, root)
    if remote and policy.anchor is None and policy.pinned is not None:
        policy = policy._replace(anchor=f"the manifest {manifest_path}")
    return policy
