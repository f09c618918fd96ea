"""Local verify: observe the release folder (stat, cache, hash) and compare with what was pinned.

Size is compared before any byte is read, so a truncated 40 GB shard fails instantly. Digests come
from the stat cache when the file is provably unchanged, else from the hashing pool.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from hubrelease.errors import HubReleaseError, InputError
from hubrelease.findings import FileCheck, Finding, VerifyReport
from hubrelease.fsutil import STATE_DIR, ReleaseFolder, is_temp_name, relative_inside
from hubrelease.hashing.pool import HashJob, hash_files
from hubrelease.hashing.statcache import StatCache, StatKey
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.release_files import HUB_FILES, SIGNATURE_NAME, card_published
from hubrelease.verify.compare import ExpectedFile, Observed, compare, missing, size_finding

if TYPE_CHECKING:  # not at run time: a warm verify from verify.plan_cache never loads pydantic
    from hubrelease.manifest.models import Manifest

# Never reported as unlisted: VCS and tool state, caches.
_ALWAYS_IGNORED_DIRS = {".git", STATE_DIR, "__pycache__", ".cache"}


class VerifyOptions(NamedTuple):
    """How to verify: threads, cache, symlink policy, whether to look for unlisted files."""

    jobs: int | None = None
    use_cache: bool = True
    follow_symlinks: bool = False
    check_unlisted: bool = True
    remembered_target: bool = True
    """Lint against the target facts remembered in the state folder; off for ``--signature``, whose
    verdict no file outside the signature may change (model_signing ignores the state folder)."""


class VerifyPlan(NamedTuple):
    """Everything a manifest asks verify to check, without the manifest (``verify.plan_cache`` keeps it)."""

    folder: Path
    expected: tuple[ExpectedFile, ...]
    known: tuple[Path, ...]
    ignore: tuple[str, ...]
    findings: tuple[Finding, ...] = ()
    """Published files that cannot be checked (``verify.expected``); a plan with any is never cached."""
    cacheable: bool = True
    absent: tuple[str, ...] = ()
    """Files whose absence the plan relies on (a card without a ``card:`` section): one appearing re-plans."""
    needs_manifest: bool = False
    """Drafter lint (``lint: true``) or the evaluations' provenance is checked: both read the manifest
    (``verify_manifest``)."""
    published: tuple[tuple[str, str], ...] = ()
    """(repo path, release-folder name) of every file push publishes (the manifest: its file name)."""
    rooted: bool = False
    """The manifest declares ``root:``: the copy push publishes is not the file itself."""
    sign_ready: bool = False
    """``sign`` checked this manifest (pins, licences) and it declares no ``signing:`` and no ``root:``:
    a warm ``sign`` needs only the plan and verify's recalled lint (``signing.unchanged.sign_unchanged``)."""


def plan_manifest(manifest: Manifest, manifest_path: Path, root: Path | None = None) -> VerifyPlan:
    """The release folder (``root``, else the manifest's ``root:``, else its folder) and what to find there.

    Every file push publishes is expected (``verify.expected``): artifacts and evaluation files as
    pinned, the card as pinned or as a fresh render, and a copy of the manifest in a folder it does
    not live in (a ``--dir`` download) as the manifest, ``root:`` aside. ``.gitattributes`` (which
    the Hub adds and ``hf download`` brings) and the signature ``model.sig`` (``hubrelease sign``;
    checked by ``verify --signature``) are never unlisted.
    """
    from hubrelease.manifest.root import release_root
    from hubrelease.verify.expected import expectations

    folder = release_root(manifest, manifest_path, root).resolve()
    derived = expectations(manifest, manifest_path, folder)
    expected = tuple(
        item
        for published, item in derived.files
        if published.kind != "manifest" or (folder / item.name).resolve() != manifest_path.resolve()
    )
    known = (
        manifest_path.resolve(),
        folder / manifest.card_output,
        *(folder / name for name in (*HUB_FILES, SIGNATURE_NAME)),
    )
    absent = () if card_published(manifest, folder) else (manifest.card_output,)
    needs_manifest = bool(manifest.evaluations) or any(artifact.lint for artifact in manifest.artifacts)
    ignore = tuple(manifest.ignore)
    published = tuple((item.path, item.local) for item in derived.published)
    return VerifyPlan(
        folder,
        expected,
        known,
        ignore,
        derived.findings,
        derived.cacheable,
        absent,
        needs_manifest,
        published,
        rooted=manifest.root is not None,
    )


def verify_plan(plan: VerifyPlan, options: VerifyOptions, progress: Progress = NULL_PROGRESS) -> VerifyReport:
    """Verify the files of a plan (no drafter lint: that needs the manifest, see ``verify_manifest``)."""
    report = verify_tree(plan.folder, plan.expected, options, progress, known=plan.known, ignore=plan.ignore)
    return with_findings(report, plan.findings)


def verify_manifest(
    manifest: Manifest,
    manifest_path: Path,
    root: Path | None = None,
    options: VerifyOptions = VerifyOptions(),
    progress: Progress = NULL_PROGRESS,
    *,
    plan: VerifyPlan | None = None,
) -> VerifyReport:
    """Verify the release folder (see ``plan_manifest``) against the manifest, lint included.

    ``plan``: this manifest's plan when already made (``verify.plan_cache`` keeps one).
    """
    plan = plan or plan_manifest(manifest, manifest_path, root)
    report = verify_plan(plan, options, progress)
    return with_findings(report, manifest_checks(manifest, plan.folder, report, options.remembered_target))


def manifest_checks(
    manifest: Manifest, folder: Path, report: VerifyReport, remembered_target: bool = True
) -> list[Finding]:
    """What verify checks beyond the files, reading the manifest: drafter lint and the evaluations'
    provenance, of the files ``report`` found as pinned."""
    found = _lint_findings(manifest, ReleaseFolder(folder), report, remembered_target)
    if manifest.evaluations:  # the evaluations' run metadata against the pins
        from hubrelease.evaluation.provenance import provenance_findings

        found += provenance_findings(manifest, folder, {c.path for c in report.files if c.status == "ok"})
    return found


def with_findings(report: VerifyReport, found: Sequence[Finding]) -> VerifyReport:
    """``report`` with ``found`` among its findings, in their order."""
    if not found:
        return report
    return report._replace(findings=tuple(sorted(report.findings + tuple(found))))


def _lint_findings(
    manifest: Manifest, folder: ReleaseFolder, report: VerifyReport, remembered_target: bool = True
) -> list[Finding]:
    """Drafter lint for artifacts marked ``lint: true`` whose bytes verified (linting drift is noise)."""
    verified = {check.path for check in report.files if check.status == "ok"}
    wanted = [a for a in manifest.artifacts if a.lint and a.local_path in verified]
    if not wanted:
        return []
    from hubrelease.lint import lint_file  # format readers load only when a manifest asks for lint
    from hubrelease.lint.release import verifier_pin_findings
    from hubrelease.lint.target import cached_target

    # The pinned target's depth, width and vocabulary, as lock or lint remembered them (no network here).
    target = cached_target(manifest, folder.root) if remembered_target else None
    findings: list[Finding] = []
    for artifact in wanted:
        config = folder.path(artifact.lint_config) if artifact.lint_config else None
        try:
            results = lint_file(folder.path(artifact.local_path), config, artifact.composition, target)
        except HubReleaseError as exc:
            findings.append(Finding.make("lint", artifact.local_path, f"cannot lint: {exc}"))
            continue
        if config is not None:
            results = [*results, *verifier_pin_findings(manifest, config)]
        findings.extend(
            Finding.make("lint", artifact.local_path, f"{r.rule_id}: {r.message}", severity=r.severity)
            for r in results
        )
    return findings


def verify_sums_file(
    sums_path: Path,
    text: str,
    root: Path | None = None,
    options: VerifyOptions = VerifyOptions(),
    progress: Progress = NULL_PROGRESS,
) -> VerifyReport:
    """Verify files listed in a ``sha256sum`` file (like ``sha256sum -c``, with the stat cache)."""
    from hubrelease.hashing.sumfile import parse_sums

    folder = (root or sums_path.parent).resolve()
    entries = parse_sums(text, sums_path)
    expected = [ExpectedFile(e.name, None, e.sha256) for e in entries]
    # A plain checksum list says nothing about other files, as with `sha256sum -c`.
    relaxed = options._replace(check_unlisted=False)
    return verify_tree(folder, expected, relaxed, progress, known={sums_path.resolve()})


def verify_tree(
    root: Path,
    expected: Sequence[ExpectedFile],
    options: VerifyOptions,
    progress: Progress = NULL_PROGRESS,
    *,
    known: Iterable[Path] = (),
    ignore: Sequence[str] = (),
) -> VerifyReport:
    """Compare ``root`` with ``expected``; return every file's state and every finding."""
    if not root.is_dir():
        raise InputError("release folder does not exist or is not a folder", path=root)
    findings: list[Finding] = []
    checks: dict[str, FileCheck] = {}
    pending: list[tuple[ExpectedFile, HashJob]] = []
    folder = ReleaseFolder(root)
    for item in expected:
        observed = _observe(folder, item, options.follow_symlinks)
        if isinstance(observed, HashJob):
            pending.append((item, observed))
        elif observed is not None:
            checks[item.name], finding = observed
            findings.append(finding)
    jobs = [job for _, job in pending]
    cache: StatCache | None = None
    if options.use_cache and jobs:
        cache = StatCache(root)
        if cache.discarded_reason:
            findings.append(
                Finding.make("cache_rebuilt", STATE_DIR, f"stat cache ignored: {cache.discarded_reason}")
            )
    try:
        results = hash_files(jobs, threads=options.jobs, cache=cache, progress=progress)
    finally:
        if cache is not None:
            cache.close()
    hashed = 0
    for item, job in pending:
        result = results[job.name]
        if result.sha256 is None:
            findings.append(Finding.make("unreadable", job.name, f"cannot read: {result.error}"))
            checks[job.name] = FileCheck(job.name, "unreadable", job.key.size)
            continue
        if not result.from_cache:
            hashed += job.key.size
        seen = Observed(job.key.size, result.sha256, source="cache" if result.from_cache else "hashed")
        checks[job.name], problems = compare(item, seen, "local")
        findings.extend(problems)
    if options.check_unlisted:
        listed = {item.name for item in expected}
        known_names = {relative_inside(p, root) for p in known}
        leftovers: list[str] = []
        for name in _walk(root, leftovers):
            if name in listed or name in known_names or _ignored(name, ignore):
                continue
            findings.append(
                Finding.make("unlisted", name, "file is in the release folder but not in the manifest")
            )
        findings.extend(
            Finding.make("temp_leftover", name, "left by an interrupted write; not data, safe to delete")
            for name in leftovers
        )
    ordered = tuple(
        checks[item.name] for item in expected if item.name in checks
    )  # optional ones may be absent
    return VerifyReport("local", str(root), ordered, tuple(sorted(findings)), hashed_bytes=hashed)


def _observe(
    folder: ReleaseFolder, item: ExpectedFile, follow_symlinks: bool
) -> HashJob | tuple[FileCheck, Finding] | None:
    """A job to hash the file, or, if it cannot be, its state and the finding that says why (no bytes read).

    None: an optional file (``ExpectedFile.optional``) that is not there.
    """
    path = folder.join(item.name)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None if item.optional else missing(item, "local")
    except OSError as exc:
        reason = f"cannot stat: {exc.strerror}"
        return FileCheck(item.name, "unreadable"), Finding.make("unreadable", item.name, reason)
    if stat.S_ISLNK(st.st_mode):
        if not follow_symlinks:
            message = "is a symlink; refused (pass --follow-symlinks to hash its target)"
            return FileCheck(item.name, "symlink"), Finding.make("symlink", item.name, message)
        try:
            st = os.stat(path)
        except OSError as exc:
            return missing(item, "local", f"broken symlink: {exc.strerror}")
    if not stat.S_ISREG(st.st_mode):
        reason = "is not a regular file"
        return FileCheck(item.name, "unreadable"), Finding.make("unreadable", item.name, reason)
    wrong_size = size_finding(item, st.st_size, "local")
    if wrong_size is not None:
        return FileCheck(item.name, "size_mismatch", st.st_size), wrong_size
    return HashJob(item.name, path, StatKey.of(st))


def _walk(root: Path, leftovers: list[str]) -> list[str]:
    """Every file (and symlinked folder) under ``root`` as a POSIX relative path; strings, not pathlib.

    Temp files and staging folders of interrupted writes are not data: they go to ``leftovers``.
    """
    names: list[str] = []
    pending = [""]
    while pending:
        prefix = pending.pop()
        with os.scandir(os.path.join(root, prefix) if prefix else root) as entries:
            for entry in entries:
                if is_temp_name(entry.name):  # left by a killed write (fsutil.TEMP_PREFIX)
                    leftovers.append(prefix + entry.name)
                    continue
                name = prefix + entry.name
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _ALWAYS_IGNORED_DIRS:
                        pending.append(name + "/")
                else:
                    names.append(name)  # files, symlinks (to files or folders), sockets...
    return sorted(names)


def _ignored(name: str, patterns: Sequence[str]) -> bool:
    return any(
        fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(name, p.rstrip("/") + "/*") for p in patterns
    )
