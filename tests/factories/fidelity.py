"""The fidelity table: every ``HfApi`` method and ``hf`` verb hubrelease or its users touch, run with the
real client (huggingface_hub 2.4, the ``hf`` CLI) against a loopback Hub, each checked against what
the Hub answers. ``scripts/fidelity_table.py`` writes the table into docs/how-to/rehearsal-hub.md; a test checks
that the page holds what a run gives, so the table cannot drift from the code.

A probe returns None when every check held ("same"), or a sentence saying how the loopback Hub
answers otherwise ("differs"); a probe that a route the loopback Hub lacks makes fail is "missing".
"""

from __future__ import annotations

import contextlib
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import (
    CommitOperationAdd,
    CommitOperationCopy,
    HfApi,
    RepoFolder,
    constants,
    get_hf_file_metadata,
    hf_hub_url,
)
from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError
from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.auth import Grant
from tests.factories.cli import run_program
from tests.factories.hub import hf_env

OWNER, READER = "hf_fidelity_owner", "hf_fidelity_reader"
TOKENS = {OWNER: Grant("write"), READER: Grant("read", ("readers/*",))}
"""The owner writes every repo; the reader is user ``readers`` (``whoami``), for gated repos."""
WEIGHTS = bytes(range(256)) * 400
BEGIN, END = "<!-- fidelity-table:begin -->", "<!-- fidelity-table:end -->"


class Divergence(AssertionError):
    """A check that failed: the loopback Hub answers otherwise than the Hub."""


def check(ok: bool, how: str) -> None:
    if not ok:
        raise Divergence(how)


@dataclass
class Context:
    """What probes share: the Hub, clients for the owner, the reader and no one, a scratch folder."""

    hub: LoopbackHub
    work: Path

    @property
    def owner(self) -> HfApi:
        return HfApi(endpoint=self.hub.url, token=OWNER)

    @property
    def reader(self) -> HfApi:
        return HfApi(endpoint=self.hub.url, token=READER)

    @property
    def anonymous(self) -> HfApi:
        return HfApi(endpoint=self.hub.url, token=False)

    def repo(self, files: dict[str, bytes] | None = None, private: bool = False) -> str:
        """A new repo of the owner's, with ``files`` in one commit."""
        repo = f"acme/fidelity-{uuid.uuid4().hex[:8]}"
        self.owner.create_repo(repo, private=private)
        if files:
            ops = [CommitOperationAdd(path, data) for path, data in files.items()]
            self.owner.create_commit(repo, ops, commit_message="files")
        return repo

    def folder(self) -> Path:
        path = self.work / uuid.uuid4().hex[:8]
        path.mkdir(parents=True)
        return path

    def hf(self, *args: str, token: str | None = OWNER) -> subprocess.CompletedProcess[str]:
        """The ``hf`` CLI as a user runs it, against this Hub."""
        env = hf_env(self.hub, self.work / "hf-home")
        if token is not None:
            env["HF_TOKEN"] = token
        return run_program(["hf", *args], env=env)

    def hf_ok(self, *args: str) -> str:
        done = self.hf(*args)
        check(
            done.returncode == 0,
            f"`hf {' '.join(args[:2])}` exits {done.returncode}: {_last_line(done.stderr)}",
        )
        return done.stdout


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:120] if lines else ""


@contextlib.contextmanager
def xet(enabled: bool) -> Iterator[None]:
    """hf_xet on or off for the client in this process (``constants.HF_HUB_DISABLE_XET``)."""
    before = constants.HF_HUB_DISABLE_XET
    constants.HF_HUB_DISABLE_XET = not enabled
    try:
        yield
    finally:
        constants.HF_HUB_DISABLE_XET = before


Probe = Callable[[Context], "str | None"]


# -- HfApi ------------------------------------------------------------------------------------------


def create_repo(ctx: Context) -> str | None:
    repo = ctx.repo()
    url = ctx.owner.create_repo(repo, exist_ok=True)
    check(url.repo_id == repo, "the URL names another repo")
    return None


def repo_info(ctx: Context) -> str | None:
    repo = ctx.repo({"w.safetensors": WEIGHTS})
    info = ctx.owner.model_info(repo, files_metadata=True)
    names = {s.rfilename: s for s in info.siblings or []}
    check(set(names) == {".gitattributes", "w.safetensors"}, "siblings differ")
    lfs = names["w.safetensors"].lfs
    check(lfs is not None and lfs.size == len(WEIGHTS), "no LFS metadata on siblings")
    check(info.private is False and info.gated is False and info.sha is not None, "fields missing")
    return None


def list_repo_refs(ctx: Context) -> str | None:
    repo = ctx.repo()
    ctx.owner.create_commit(repo, [CommitOperationAdd("a.txt", b"a")], commit_message="pr", create_pr=True)
    refs = ctx.owner.list_repo_refs(repo, include_pull_requests=True)
    check([b.name for b in refs.branches] == ["main"], "branches differ")
    check([p.ref for p in refs.pull_requests or []] == ["refs/pr/1"], "pull request refs missing")
    return None


def list_repo_tree(ctx: Context) -> str | None:
    repo = ctx.repo({"sub/a.txt": b"a", "w.safetensors": WEIGHTS})
    entries = list(ctx.owner.list_repo_tree(repo, expand=True))
    folders = [e for e in entries if isinstance(e, RepoFolder)]
    check([f.path for f in folders] == ["sub"], "folders differ")
    check(folders[0].last_commit is not None, "no lastCommit on folders")
    check(all(e.last_commit is not None for e in entries), "no lastCommit on files")
    return None


def get_paths_info(ctx: Context) -> str | None:
    repo = ctx.repo({"w.safetensors": WEIGHTS})
    info = ctx.owner.get_paths_info(repo, ["w.safetensors", "absent.txt"])
    check([i.path for i in info] == ["w.safetensors"], "a missing path is listed")
    return None


def list_repo_commits(ctx: Context) -> str | None:
    repo = ctx.repo({"a.txt": b"a"})
    commits = ctx.owner.list_repo_commits(repo, formatted=True)
    check([c.title for c in commits] == ["files", "initial commit"], "history differs")
    check(all(c.formatted_title is not None for c in commits), "no formatted titles")
    return "`formatted` title and message are HTML-escaped text; the Hub renders them from Markdown"


def preupload_lfs_files(ctx: Context) -> str | None:
    repo = ctx.repo()
    op = CommitOperationAdd("w.safetensors", WEIGHTS)
    ctx.owner.preupload_lfs_files(repo, [op])
    check(op._upload_mode == "lfs", "upload mode is not lfs")
    ctx.owner.create_commit(repo, [op], commit_message="w")
    return None


def _upload_and_download(ctx: Context, enabled: bool) -> str | None:
    with xet(enabled):
        repo = ctx.repo({"w.safetensors": WEIGHTS})
        path = ctx.anonymous.hf_hub_download(repo, "w.safetensors", cache_dir=ctx.folder())
    check(Path(path).read_bytes() == WEIGHTS, "downloaded bytes differ")
    return None


def commit_xet(ctx: Context) -> str | None:
    return _upload_and_download(ctx, True)


def commit_lfs(ctx: Context) -> str | None:
    return _upload_and_download(ctx, False)


def create_pull_request(ctx: Context) -> str | None:
    repo = ctx.repo({"a.txt": b"one\n"})
    pr = ctx.owner.create_commit(
        repo, [CommitOperationAdd("a.txt", b"two\n")], commit_message="change", create_pr=True
    ).pr_num
    check(pr == 1, "no pull request number")
    details = ctx.owner.get_discussion_details(repo, 1)
    check(details.diff is not None and "+two" in details.diff, "no diff in pull request details")
    ctx.owner.merge_pull_request(repo, 1)
    check(ctx.owner.get_discussion_details(repo, 1).status == "merged", "not merged")
    return None


def discussions(ctx: Context) -> str | None:
    repo = ctx.repo()
    made = ctx.owner.create_discussion(repo, "question")
    ctx.owner.comment_discussion(repo, made.num, "an answer")
    renamed = ctx.owner.rename_discussion(repo, made.num, "a better question")
    check(renamed.new_title == "a better question", "rename answered another title")
    ctx.owner.change_discussion_status(repo, made.num, "closed")
    listed = list(ctx.owner.get_repo_discussions(repo))
    check([(d.title, d.status) for d in listed] == [("a better question", "closed")], "listing differs")
    return None


def upload_folder(ctx: Context) -> str | None:
    folder = ctx.folder()
    (folder / "sub").mkdir()
    (folder / "sub" / "a.txt").write_bytes(b"a")
    (folder / "w.safetensors").write_bytes(WEIGHTS)
    repo = ctx.repo()
    ctx.owner.upload_folder(repo_id=repo, folder_path=folder)
    check(
        sorted(ctx.owner.list_repo_files(repo)) == [".gitattributes", "sub/a.txt", "w.safetensors"],
        "files differ",
    )
    return None


def snapshot_download(ctx: Context) -> str | None:
    repo = ctx.repo({"a.txt": b"a", "w.safetensors": WEIGHTS})
    local = Path(ctx.anonymous.snapshot_download(repo, cache_dir=ctx.folder()))
    check((local / "w.safetensors").read_bytes() == WEIGHTS, "bytes differ")
    return None


def file_metadata(ctx: Context) -> str | None:
    repo = ctx.repo({"w.safetensors": WEIGHTS})
    with xet(False):
        meta = get_hf_file_metadata(hf_hub_url(repo, "w.safetensors", endpoint=ctx.hub.url), token=OWNER)
    check(meta.size == len(WEIGHTS) and meta.commit_hash is not None, "size or commit missing")
    check(meta.location.startswith(ctx.hub.cdn_url), "not redirected to the storage origin")
    return None


def branches_and_tags(ctx: Context) -> str | None:
    repo = ctx.repo()
    ctx.owner.create_branch(repo, branch="dev")
    ctx.owner.create_tag(repo, tag="v1", tag_message="one")
    refs = ctx.owner.list_repo_refs(repo)
    check(sorted(b.name for b in refs.branches) == ["dev", "main"], "branches differ")
    check([t.name for t in refs.tags] == ["v1"], "tags differ")
    ctx.owner.delete_branch(repo, branch="dev")
    ctx.owner.delete_tag(repo, tag="v1")
    return None


def delete_default_branch(ctx: Context) -> str | None:
    repo = ctx.repo()
    try:
        ctx.owner.delete_branch(repo, branch="main")
    except HfHubHTTPError as exc:
        check(exc.response.status_code == 403, f"refused with {exc.response.status_code}")
        return None
    raise Divergence("the default branch is deleted; the next upload is 404")


def move_repo(ctx: Context) -> str | None:
    repo = ctx.repo({"a.txt": b"a"})
    moved = f"{repo}-moved"
    ctx.owner.move_repo(repo, moved)
    try:
        check(ctx.owner.repo_info(repo).id == moved, "the old name answers another repo")
    except RepositoryNotFoundError:
        raise Divergence("the old name is 404; the Hub redirects it") from None
    return None


def delete_repo(ctx: Context) -> str | None:
    repo = ctx.repo()
    ctx.owner.delete_repo(repo)
    check(not ctx.owner.repo_exists(repo), "still exists")
    ctx.owner.delete_repo(repo, missing_ok=True)
    return None


def settings_private(ctx: Context) -> str | None:
    repo = ctx.repo()
    ctx.owner.update_repo_settings(repo, private=True)
    check(ctx.owner.repo_info(repo).private is True, "not private")
    check(not ctx.anonymous.repo_exists(repo), "a private repo is visible without a token")
    return None


def settings_gated(ctx: Context) -> str | None:
    repo = ctx.repo({"a.txt": b"a"})
    ctx.owner.update_repo_settings(repo, gated="manual")
    check(ctx.anonymous.repo_info(repo).gated == "manual", "not gated")
    try:
        ctx.anonymous.hf_hub_download(repo, "a.txt", cache_dir=ctx.folder())
    except GatedRepoError:
        return None
    raise Divergence("anonymous downloads of a gated repo succeed")


def access_requests(ctx: Context) -> str | None:
    repo = ctx.repo({"a.txt": b"a"})
    ctx.owner.update_repo_settings(repo, gated="manual")
    try:
        ctx.reader.hf_hub_download(repo, "a.txt", cache_dir=ctx.folder())
        raise Divergence("a user without access downloads a gated repo's files")
    except GatedRepoError:
        pass
    ctx.owner.grant_access(repo, "readers")
    check([r.username for r in ctx.owner.list_accepted_access_requests(repo)] == ["readers"], "not listed")
    ctx.owner.reject_access_request(repo, "readers", rejection_reason="no")
    check([r.username for r in ctx.owner.list_rejected_access_requests(repo)] == ["readers"], "not rejected")
    ctx.owner.accept_access_request(repo, "readers")
    ctx.reader.hf_hub_download(repo, "a.txt", cache_dir=ctx.folder())
    return None


def whoami(ctx: Context) -> str | None:
    check(ctx.reader.whoami()["name"] == "readers", "another user")
    return "one user per token (named by its scope); no real accounts, orgs or emails"


def list_models(ctx: Context) -> str | None:
    repo = ctx.repo()
    found = [m.id for m in ctx.anonymous.list_models(author="acme", search=repo.split("/")[1])]
    check(found == [repo], "search differs")
    return "no downloads, likes or tags: always 0 and []"


def list_user_repos(ctx: Context) -> str | None:
    repo = ctx.repo()
    check(repo in [r.id for r in ctx.owner.list_user_repos(namespace="acme")], "not listed")
    return "storage is the sum of the files' sizes at main; no storage percentage"


def duplicate_repo(ctx: Context) -> str | None:
    repo = ctx.repo({"w.safetensors": WEIGHTS})
    copy = ctx.owner.duplicate_repo(repo, f"{repo}-copy")
    path = ctx.anonymous.hf_hub_download(copy.repo_id, "w.safetensors", cache_dir=ctx.folder())
    check(Path(path).read_bytes() == WEIGHTS, "bytes differ")
    return None


def _copy_across(ctx: Context, enabled: bool) -> str:
    """``copy_files`` of a new file uploaded with hf_xet on or off to another repo; returns the source."""
    weights = uuid.uuid4().bytes * 4_000  # bytes no other probe sent: no Xet record of them exists yet
    with xet(enabled):
        source = ctx.repo({"w.safetensors": weights})
        target = ctx.repo()
    try:
        ctx.owner.copy_files(f"hf://{source}/w.safetensors", f"hf://{target}/w.safetensors")
    except ValueError as exc:
        if "has no xet hash" not in str(exc):
            raise
        raise Divergence(
            "files uploaded over plain LFS get no `xetHash` (the Hub converts them to Xet), so the client "
            'refuses to copy them to another repo ("Cannot duplicate LFS file ...: file has no xet hash")'
        ) from None
    path = ctx.anonymous.hf_hub_download(target, "w.safetensors", cache_dir=ctx.folder())
    check(Path(path).read_bytes() == weights, "bytes differ")
    return source


def copy_files_xet(ctx: Context) -> str | None:
    _copy_across(ctx, True)
    return None


def copy_files_lfs(ctx: Context) -> str | None:
    source = _copy_across(ctx, False)
    target = ctx.repo()
    ctx.hf_ok("cp", f"hf://{source}/w.safetensors", f"hf://{target}/w.safetensors")
    check(ctx.owner.file_exists(target, "w.safetensors"), "`hf cp` copied nothing")
    return None


def copy_within(ctx: Context) -> str | None:
    repo = ctx.repo({"w.safetensors": WEIGHTS})
    ctx.owner.create_commit(repo, [CommitOperationCopy("w.safetensors", "c.safetensors")], commit_message="c")
    path = ctx.anonymous.hf_hub_download(repo, "c.safetensors", cache_dir=ctx.folder())
    check(Path(path).read_bytes() == WEIGHTS, "bytes differ")
    return None


def super_squash(ctx: Context) -> str | None:
    repo = ctx.repo({"a.txt": b"a"})
    ctx.owner.super_squash_history(repo)
    check(len(ctx.owner.list_repo_commits(repo)) == 1, "history not squashed")
    return None


def exists(ctx: Context) -> str | None:
    repo = ctx.repo({"a.txt": b"a"})
    check(ctx.anonymous.file_exists(repo, "a.txt") and not ctx.anonymous.file_exists(repo, "b.txt"), "file")
    check(ctx.anonymous.revision_exists(repo, "main") and not ctx.anonymous.revision_exists(repo, "x"), "rev")
    check(ctx.anonymous.repo_exists(repo) and not ctx.anonymous.repo_exists(f"{repo}-no"), "repo")
    return None


def anonymous_private(ctx: Context) -> str | None:
    repo = ctx.repo(private=True)
    try:
        ctx.anonymous.repo_info(repo)
    except RepositoryNotFoundError:
        return None
    raise Divergence("a private repo is visible without a token")


# -- hf ---------------------------------------------------------------------------------------------


def hf_download(ctx: Context) -> str | None:
    repo = ctx.repo({"w.safetensors": WEIGHTS})
    out = ctx.folder()
    done = ctx.hf("download", repo, "w.safetensors", "--local-dir", str(out), token=None)
    check(done.returncode == 0, f"exits {done.returncode}: {_last_line(done.stderr)}")
    check((out / "w.safetensors").read_bytes() == WEIGHTS, "bytes differ")
    return None


def hf_upload(ctx: Context) -> str | None:
    repo = ctx.repo()
    local = ctx.folder() / "w.safetensors"
    local.write_bytes(WEIGHTS)
    ctx.hf_ok("upload", repo, str(local), "w.safetensors")
    check(ctx.owner.file_exists(repo, "w.safetensors"), "not uploaded")
    return None


def hf_repos_create_delete(ctx: Context) -> str | None:
    repo = f"acme/fidelity-{uuid.uuid4().hex[:8]}"
    ctx.hf_ok("repos", "create", repo)
    check(ctx.owner.repo_exists(repo), "not created")
    ctx.hf_ok("repos", "delete", repo, "--yes")
    check(not ctx.owner.repo_exists(repo), "not deleted")
    return None


def hf_repos_list(ctx: Context) -> str | None:
    repo = ctx.repo()
    check(repo in ctx.hf_ok("repos", "list", "--namespace", "acme", "--limit", "0"), "not listed")
    return None


def hf_repos_duplicate(ctx: Context) -> str | None:
    repo = ctx.repo({"a.txt": b"a"})
    ctx.hf_ok("repos", "duplicate", repo, f"{repo}-dup")
    check(ctx.owner.file_exists(f"{repo}-dup", "a.txt"), "not duplicated")
    return None


def hf_repos_settings_gated(ctx: Context) -> str | None:
    repo = ctx.repo({"a.txt": b"a"})
    ctx.hf_ok("repos", "settings", repo, "--gated", "auto")
    check(ctx.owner.repo_info(repo).gated == "auto", "not gated")
    return None


def hf_repos_move(ctx: Context) -> str | None:
    repo = ctx.repo()
    ctx.hf_ok("repos", "move", repo, f"{repo}-moved")
    check(ctx.owner.repo_exists(f"{repo}-moved"), "not moved")
    return None


def hf_repos_branch_tag(ctx: Context) -> str | None:
    repo = ctx.repo()
    ctx.hf_ok("repos", "branch", "create", repo, "dev")
    ctx.hf_ok("repos", "tag", "create", repo, "v1")
    check("v1" in ctx.hf_ok("repos", "tag", "list", repo), "tag not listed")
    ctx.hf_ok("repos", "tag", "delete", repo, "v1", "--yes")
    ctx.hf_ok("repos", "branch", "delete", repo, "dev")
    return None


def hf_cp(ctx: Context) -> str | None:
    weights = uuid.uuid4().bytes * 4_000
    source, target = ctx.repo({"w.safetensors": weights}), ctx.repo()
    ctx.hf_ok("cp", f"hf://{source}/w.safetensors", f"hf://{target}/w.safetensors")
    path = ctx.anonymous.hf_hub_download(target, "w.safetensors", cache_dir=ctx.folder())
    check(Path(path).read_bytes() == weights, "bytes differ")
    return None


def hf_cache_verify(ctx: Context) -> str | None:
    repo = ctx.repo({"w.safetensors": WEIGHTS})
    cache = ctx.folder()
    ctx.anonymous.hf_hub_download(repo, "w.safetensors", cache_dir=cache)
    ctx.hf_ok("cache", "verify", repo, "--cache-dir", str(cache))
    return None


PROBES: list[tuple[str, Probe]] = [
    ("`HfApi.create_repo`", create_repo),
    ("`HfApi.repo_info` / `model_info`", repo_info),
    ("`HfApi.list_repo_refs`", list_repo_refs),
    ("`HfApi.list_repo_tree` (`expand`)", list_repo_tree),
    ("`HfApi.get_paths_info`", get_paths_info),
    ("`HfApi.list_repo_commits` (`formatted`)", list_repo_commits),
    ("`HfApi.preupload_lfs_files`", preupload_lfs_files),
    ("`HfApi.create_commit` + `hf_hub_download`, hf_xet", commit_xet),
    ("`HfApi.create_commit` + `hf_hub_download`, plain LFS", commit_lfs),
    (
        "`HfApi.create_commit(create_pr=True)`, `get_discussion_details`, `merge_pull_request`",
        create_pull_request,
    ),
    (
        "`HfApi.create_discussion`, `comment_discussion`, `rename_discussion`, `change_discussion_status`, "
        "`get_repo_discussions`",
        discussions,
    ),
    ("`HfApi.upload_folder`", upload_folder),
    ("`HfApi.snapshot_download`", snapshot_download),
    ("`get_hf_file_metadata`", file_metadata),
    ("`HfApi.create_branch`, `create_tag`, `delete_branch`, `delete_tag`", branches_and_tags),
    ('`HfApi.delete_branch("main")`', delete_default_branch),
    ("`HfApi.move_repo`", move_repo),
    ("`HfApi.delete_repo`", delete_repo),
    ("`HfApi.update_repo_settings(private=)`", settings_private),
    ("`HfApi.update_repo_settings(gated=)`", settings_gated),
    ("`HfApi.grant_access`, `accept_`/`reject_access_request`, `list_*_access_requests`", access_requests),
    ("`HfApi.whoami`", whoami),
    ("`HfApi.list_models`", list_models),
    ("`HfApi.list_user_repos`", list_user_repos),
    ("`HfApi.duplicate_repo`", duplicate_repo),
    ("`CommitOperationCopy` within a repo", copy_within),
    ("`HfApi.copy_files` to another repo, file uploaded with hf_xet", copy_files_xet),
    ("`HfApi.copy_files` / `hf cp` to another repo, file uploaded over plain LFS", copy_files_lfs),
    ("`HfApi.super_squash_history`", super_squash),
    ("`HfApi.file_exists`, `revision_exists`, `repo_exists`", exists),
    ("a private repo without a token", anonymous_private),
    ("`hf download` (no token, public repo)", hf_download),
    ("`hf upload`", hf_upload),
    ("`hf repos create`, `hf repos delete`", hf_repos_create_delete),
    ("`hf repos list`", hf_repos_list),
    ("`hf repos duplicate`", hf_repos_duplicate),
    ("`hf repos settings --gated`", hf_repos_settings_gated),
    ("`hf repos move`", hf_repos_move),
    ("`hf repos branch`, `hf repos tag`", hf_repos_branch_tag),
    ("`hf cp hf://A hf://B`, file uploaded with hf_xet", hf_cp),
    ("`hf cache verify`", hf_cache_verify),
]


def verdict(ctx: Context, probe: Probe) -> str:
    """``same``, ``differs: how`` or ``missing: why`` for one probe."""
    try:
        how = probe(ctx)
    except Divergence as exc:
        return f"differs: {exc}"
    except HfHubHTTPError as exc:
        message = exc.server_message or str(exc).splitlines()[0]
        if exc.response.status_code == 404 and "no route for" in message:
            return "missing: no such route"
        return f"differs: HTTP {exc.response.status_code} {_last_line(message)}"
    return "same" if how is None else f"differs: {how}"


def run(work: Path) -> list[tuple[str, str]]:
    """Every probe against a fresh loopback Hub under ``work``: (operation, verdict)."""
    hub = LoopbackHub(work / "hub", tokens=TOKENS, allow_anonymous=False)
    with hub, _quiet():
        ctx = Context(hub, work / "scratch")
        return [(name, verdict(ctx, probe)) for name, probe in PROBES]


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No progress bars from the client while probing."""
    was_disabled = are_progress_bars_disabled()
    disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            enable_progress_bars()


def markdown(rows: list[tuple[str, str]]) -> str:
    """The guide's table, between its markers."""
    lines = [BEGIN, "| Operation (huggingface_hub 2.4, `hf` CLI) | Loopback Hub |", "|---|---|"]
    lines += [f"| {name} | {result.replace('|', '/')} |" for name, result in rows]
    return "\n".join([*lines, END])


def replace_table(readme: str, table: str) -> str:
    """``readme`` with the text between the markers replaced by ``table``."""
    start, end = readme.index(BEGIN), readme.index(END) + len(END)
    return readme[:start] + table + readme[end:]
