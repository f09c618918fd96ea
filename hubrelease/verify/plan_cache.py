"""Verify a manifest file, reusing the plan made from the same bytes last time.

A warm ``verify`` (every digest from the stat cache) is otherwise mostly fixed cost: importing
pydantic and the manifest models, parsing and validating the YAML. The plan (release folder,
expected files with their pins, known and ignored names) is a pure function of the manifest's
bytes, its path, ``--dir`` and this code, so it is stored under the manifest's ``.hubrelease/``
keyed on the path and ``--dir``, with the manifest's text and the code's identity beside it, and
reused only while both are exactly what they were (bench/startup_bench.py). The text is compared in
full rather than through a digest: as exact, and a warm verify then never loads hashlib (OpenSSL).
An edit or an upgrade replaces the plan of that manifest. Any other
state (a different manifest, an edited byte, another hubrelease) misses and validates again;
``--no-cache`` never reads or writes it. A manifest with ``lint: true`` artifacts or evaluation
files is loaded anyway (lint and the provenance check need it), but its plan is reused all the
same: the card is not rendered again. A rendered card is expected by the digest of its render, which the
plan holds only when that render read nothing but the manifest, this code and evaluation files that
matched their pins (``VerifyPlan.cacheable``); otherwise the plan is made afresh each time. Like the stat cache, ``.hubrelease/`` is local state the user's
own tools write; a cache that cannot be read is ignored, never trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hubrelease import __version__
from hubrelease.findings import Finding, VerifyReport
from hubrelease.fsutil import STATE_DIR, TARGETS_CACHE, atomic_write_text
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.safe_parse import ScreenError, parse_json
from hubrelease.verify.compare import ExpectedFile
from hubrelease.verify.local import VerifyOptions, VerifyPlan, manifest_checks, verify_plan, with_findings

if TYPE_CHECKING:
    from hubrelease.manifest.models import Manifest

CACHE_NAME = "verify-plans.json"
_FORMAT = "hubrelease-verify-plans-7"
_KEEP = 8  # plans kept per folder (a few manifests, or --dir variants, side by side)
_KEEP_CHECKS = 2  # lint outcomes kept per plan: verify's and verify --signature's (no remembered target)
_SPLIT = re.compile(r"-\d{5}-of-\d{5}\.gguf$")  # one part of a GGUF split set (llama.cpp's split naming)


def _key(manifest_path: Path, root: Path | None) -> str:
    """Which manifest, verified where: one plan each."""
    return json.dumps([str(manifest_path.resolve()), str(root) if root else None])


def _code(files: Sequence[str] | None = None, also: object = ()) -> list[object]:
    """The identity of the code that made a plan (as it reads back from JSON): the version, then each
    package file that making it used, with its mtime: every hubrelease module loaded by then and the
    card templates (None: those of this process). Derived, not listed by hand (a list of the modules
    that plan missed fsutil.py and revisions.py); an edit to one, or a new import in one, misses."""
    package = Path(__file__).resolve().parents[1]
    if files is None:
        loaded = {
            getattr(m, "__file__", None) for n, m in list(sys.modules.items()) if n.startswith("hubrelease")
        }
        with os.scandir(package / "templates") as entries:  # a symlink: scandir follows it
            templates = {f"templates/{e.name}" for e in entries if e.is_file()}
        files = sorted({os.path.relpath(f, package) for f in loaded if f} | templates | _names(also))
    return [__version__, *([name, os.stat(package / name).st_mtime_ns] for name in files)]


def _names(stored: object) -> set[str]:
    """The file names of a stored ``code`` (none from one of another shape)."""
    if not isinstance(stored, list):
        return set()
    return {str(item[0]) for item in stored[1:] if isinstance(item, list) and item}


def _same_code(stored: object) -> bool:
    """Whether ``stored`` (a plan's ``code``) is what the same files say now."""
    if not isinstance(stored, list) or not stored or stored[0] != __version__:
        return False
    try:
        return stored == _code([str(name) for name, _ in stored[1:]])
    except (OSError, TypeError, ValueError):  # a file gone, an entry of another shape
        return False


def _cache_file(manifest_path: Path) -> Path:
    return manifest_path.resolve().parent / STATE_DIR / CACHE_NAME


_last_read: tuple[tuple[str, int, int, int, int], dict[str, Any]] | None = None
"""The cache file as last parsed, under its path, inode, size, mtime and ctime: ``verify --signature``
reads it for the plan, the files to publish and the recalled checks, and the screened parse of
2,000 entries costs more than a ``stat``."""


def _read(path: Path) -> dict[str, Any]:
    global _last_read
    try:
        info = path.stat()
        seen = (str(path), info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        if _last_read is not None and _last_read[0] == seen:
            return _last_read[1]
        stored = parse_json(path.read_bytes())
    except (OSError, ScreenError):  # a corrupt cache is rebuilt
        return {}
    found = stored if isinstance(stored, dict) and stored.get("format") == _FORMAT else {}
    _last_read = (seen, found)
    return found


def load_plan(manifest_path: Path, text: str, root: Path | None) -> VerifyPlan | None:
    """The plan stored for this exact manifest text, path and ``--dir`` by this code, if any."""
    entry = _read(_cache_file(manifest_path)).get("plans", {}).get(_key(manifest_path, root))
    if not isinstance(entry, dict) or entry.get("manifest") != text or not _same_code(entry.get("code")):
        return None
    plan = _plan_of(entry)
    # A card that appeared since (no `card:` section: README.md is published when present) re-plans.
    if plan is None or any(os.path.lexists(plan.folder / name) for name in plan.absent):
        return None
    return plan


_last_plan: tuple[dict[str, Any], VerifyPlan | None] | None = None


def _plan_of(entry: dict[str, Any]) -> VerifyPlan | None:
    """The plan a stored entry holds, made once for the entry ``_read`` keeps (2,000 paths)."""
    global _last_plan
    if _last_plan is not None and _last_plan[0] is entry:
        return _last_plan[1]
    try:
        plan: VerifyPlan | None = VerifyPlan(
            Path(entry["folder"]),
            tuple(map(ExpectedFile._make, entry["expected"])),  # a row of another length: TypeError
            tuple(Path(p) for p in entry["known"]),
            tuple(str(p) for p in entry["ignore"]),
            absent=tuple(str(p) for p in entry["absent"]),
            needs_manifest=entry["needs_manifest"] is True,
            published=tuple((str(path), str(local)) for path, local in entry["published"]),
            rooted=entry["rooted"] is True,
            sign_ready=entry["sign_ready"] is True,
        )
    except (KeyError, TypeError, ValueError):
        plan = None
    _last_plan = (entry, plan)
    return plan


def store_plan(manifest_path: Path, text: str, root: Path | None, plan: VerifyPlan) -> None:
    """Remember ``plan`` for this text (best effort: a read-only folder just means no cache)."""
    path = _cache_file(manifest_path)
    key = _key(manifest_path, root)
    plans = _read(path).get("plans", {})
    plans = plans if isinstance(plans, dict) else {}
    same = plans.get(key)
    if not isinstance(same, dict) or same.get("manifest") != text or not _same_code(same.get("code")):
        same = {}
    # The same text's lint outcomes, made by the same code, still hold (keyed on all else they read);
    # the code that made them stays part of the plan's identity.
    checks, code = same.get("checks", []), same.get("code")
    plans = {k: v for k, v in plans.items() if k != key}
    plans = dict(list(plans.items())[-(_KEEP - 1) :])
    plans[key] = {
        "manifest": text,
        "code": _code(also=code),
        "folder": str(plan.folder),
        "expected": [list(e) for e in plan.expected],
        "known": [str(p) for p in plan.known],
        "ignore": list(plan.ignore),
        "absent": list(plan.absent),
        "needs_manifest": plan.needs_manifest,
        "published": [list(item) for item in plan.published],
        "rooted": plan.rooted,
        "sign_ready": plan.sign_ready,
        "checks": checks,
    }
    with contextlib.suppress(OSError):
        path.parent.mkdir(exist_ok=True)
        atomic_write_text(path, json.dumps({"format": _FORMAT, "plans": plans}, separators=(",", ":")))


def _made(manifest: Manifest, manifest_path: Path, text: str, root: Path | None, store: bool) -> VerifyPlan:
    from hubrelease.verify.local import plan_manifest

    plan = plan_manifest(manifest, manifest_path, root)
    if store and plan.cacheable:
        store_plan(manifest_path, text, root, plan)
    return plan


def manifest_plan(manifest: Manifest, manifest_path: Path, text: str, root: Path) -> VerifyPlan:
    """The plan of ``manifest`` (loaded from ``text``) in the release folder ``root``: the one verify
    stored, else made (the card rendered) and stored for the next command.

    Stored under the key ``verify`` uses when ``root`` is the manifest's own folder (no ``--dir``),
    so a ``sign`` after a ``verify`` renders nothing.
    """
    given = _given(manifest, manifest_path, root)
    return load_plan(manifest_path, text, given) or _made(manifest, manifest_path, text, given, True)


def mark_sign_ready(manifest: Manifest, manifest_path: Path, text: str, root: Path, plan: VerifyPlan) -> None:
    """Store ``plan`` as one ``sign`` has checked (``VerifyPlan.sign_ready``), if a plan may be stored."""
    if plan.cacheable and not plan.findings:
        store_plan(manifest_path, text, _given(manifest, manifest_path, root), plan._replace(sign_ready=True))


def _given(manifest: Manifest, manifest_path: Path, root: Path) -> Path | None:
    """``--dir`` as verify keys its plan: None when ``root`` is the manifest's own release folder."""
    from hubrelease.manifest.root import release_root

    return None if release_root(manifest, manifest_path, None).resolve() == root.resolve() else root


def verify_manifest_file(
    manifest_path: Path,
    text: str,
    root: Path | None = None,
    options: VerifyOptions = VerifyOptions(),
    progress: Progress = NULL_PROGRESS,
) -> VerifyReport:
    """Verify against the manifest whose content is ``text`` (read from ``manifest_path``)."""
    plan = load_plan(manifest_path, text, root) if options.use_cache else None
    manifest = None
    if plan is None:
        from hubrelease.manifest import load_manifest_text

        manifest = load_manifest_text(text, manifest_path)
        plan = _made(manifest, manifest_path, text, root, options.use_cache)
    report = verify_plan(plan, options, progress)
    found = recalled_checks(manifest_path, text, root, plan, report, options=options)
    if found is None:  # lint and provenance read the manifest; the plan (the card's digest) is kept
        if manifest is None:
            from hubrelease.manifest import load_manifest_text

            manifest = load_manifest_text(text, manifest_path)
        found = manifest_checks(manifest, plan.folder, report, options.remembered_target)
        if options.use_cache and _checks_read_only_pinned(manifest, plan):
            key = _checks_key(plan, report, options.remembered_target)
            _store_checks(manifest_path, text, root, key, found)
    return with_findings(report, found)


def recalled_checks(
    manifest_path: Path,
    text: str,
    root: Path | None,
    plan: VerifyPlan,
    report: VerifyReport,
    *,
    options: VerifyOptions = VerifyOptions(),
) -> list[Finding] | None:
    """What lint and the provenance check say of ``report`` (``verify_plan`` of ``plan``) without
    loading the manifest: nothing when the plan asks for neither, else what they said last time
    for exactly the same inputs (``_checks_key``); None when they must run."""
    if not plan.needs_manifest:
        return []
    if not options.use_cache:
        return None
    return _recall_checks(manifest_path, text, root, _checks_key(plan, report, options.remembered_target))


def _checks_key(plan: VerifyPlan, report: VerifyReport, remembered_target: bool) -> list[object]:
    """Everything lint and the provenance check read besides the manifest, as it reads back from
    JSON: each listed file's state and digest (a file that verified has its pinned bytes) and the
    remembered target facts lint compares the drafter with (``lint.target``)."""
    facts: str | None = None
    if remembered_target:
        try:
            facts = (plan.folder / TARGETS_CACHE).read_text(encoding="utf-8", errors="replace")
        except OSError:
            facts = ""
    return [[[c.path, c.status, c.size, c.sha256] for c in report.files], facts]


def _checks_read_only_pinned(manifest: Manifest, plan: VerifyPlan) -> bool:
    """Whether lint reads only files the plan lists (so ``_checks_key`` holds all it read): one GGUF
    or safetensors file per artifact, its config listed; not a split set or an index, which read
    further files (the provenance check reads listed evaluations and artifacts only)."""
    listed = {item.name for item in plan.expected}
    for artifact in manifest.artifacts:
        if not artifact.lint:
            continue
        name = artifact.local_path
        sibling = posixpath.join(posixpath.dirname(name), "config.json")
        config = artifact.lint_config or (None if name.endswith(".gguf") else sibling)
        if _SPLIT.search(name) or not name.endswith((".gguf", ".safetensors")):
            return False
        if config is not None and config not in listed:
            return False
    return True


def _recall_checks(
    manifest_path: Path, text: str, root: Path | None, key: list[object]
) -> list[Finding] | None:
    """The findings lint and the provenance check gave for this plan and ``key``, if stored."""
    entry = _read(_cache_file(manifest_path)).get("plans", {}).get(_key(manifest_path, root))
    if not isinstance(entry, dict) or entry.get("manifest") != text:
        return None
    for stored in entry.get("checks", ()):
        if isinstance(stored, dict) and stored.get("key") == key:
            try:
                return [Finding._make(row) for row in stored["findings"]]
            except (KeyError, TypeError):
                return None
    return None


def _store_checks(
    manifest_path: Path, text: str, root: Path | None, key: list[object], found: list[Finding]
) -> None:
    """Keep ``found`` beside the plan (best effort), with the code that made it: the lint and
    evaluation modules now loaded join the plan's code identity."""
    path = _cache_file(manifest_path)
    stored, name = _read(path), _key(manifest_path, root)
    plans = stored.get("plans")
    entry = plans.get(name) if isinstance(plans, dict) else None
    if not isinstance(plans, dict) or not isinstance(entry, dict) or entry.get("manifest") != text:
        return
    kept = [c for c in entry.get("checks", ()) if isinstance(c, dict) and c.get("key") != key]
    checks = [*kept[-(_KEEP_CHECKS - 1) :], {"key": key, "findings": [list(f) for f in found]}]
    # New dicts along the changed path only: the parse ``_read`` keeps is never changed in place.
    entry = {**entry, "checks": checks, "code": _code(also=entry.get("code"))}
    with contextlib.suppress(OSError):
        updated = {**stored, "plans": {**plans, name: entry}}
        atomic_write_text(path, json.dumps(updated, separators=(",", ":")))
