"""``hubrelease rebuild``: re-run every recipe of a release into a temporary folder and compare.

Artifacts that one build wrote together (``model.safetensors`` and ``config.json``, the shards of a
split GGUF) share a recipe and are rebuilt by one run. Recipes never read each other's outputs from
the work folder: an input that is itself a built artifact is read from the release, pinned by
digest, and its own recipe rebuilds and compares it, so the chain from the sources holds digest by
digest and every recipe can run in parallel. Results are listed in manifest order whatever
``jobs`` is, so the report is the same for any ``--jobs``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hubrelease.errors import HubReleaseError, HubUnavailable, NotFoundError
from hubrelease.hashing import sha256_file
from hubrelease.manifest.jobs import Job, Output, plan_jobs
from hubrelease.manifest.models import Manifest, Recipe, RecipeInput
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.recipes.confine import Confinement, RecipeRefused, output_folder
from hubrelease.recipes.diff import FigureCheck, compare_figures, first_difference, load_json
from hubrelease.recipes.inputs import Input
from hubrelease.recipes.run import Release, prepare, run
from hubrelease.recipes.tools import BUILDERS, version_differences

if TYPE_CHECKING:
    from huggingface_hub import HfApi

Status = Literal["identical", "differs", "input-changed", "input-missing", "tool-differs", "skipped"]
STATUSES: tuple[Status, ...] = (
    "identical",
    "differs",
    "input-changed",
    "input-missing",
    "tool-differs",
    "skipped",
)


@dataclass(frozen=True)
class InputFinding:
    """A recorded input that is missing, changed, no longer read, or read but not recorded."""

    input: str
    problem: Literal["missing", "changed", "not-read", "new"]
    recorded: str | None = None
    now: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class ToolDifference:
    name: str
    recorded: str
    here: str


@dataclass
class OutputResult:
    output: Output
    builder: str
    status: Status = "identical"
    size: int | None = None
    sha256: str | None = None
    detail: str | None = None
    inputs: list[InputFinding] = field(default_factory=list)
    tools: list[ToolDifference] = field(default_factory=list)
    figures: FigureCheck | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RebuildReport:
    manifest: str
    results: tuple[OutputResult, ...]

    def count(self, status: Status) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def exit_code(self) -> int:
        """2 when an input is missing (the recipe could not run), 1 on any other difference, else 0."""
        if self.count("input-missing"):
            return 2
        return 1 if any(r.status not in ("identical", "skipped") for r in self.results) else 0

    def to_dict(self) -> dict[str, Any]:
        """The body of the ``--json`` document (docs/manual/recipes.md: `hubrelease rebuild`)."""
        return {
            "manifest": self.manifest,
            "summary": {status: self.count(status) for status in STATUSES},
            "results": [_result_json(r) for r in self.results],
        }


def _digest(item: Input | RecipeInput) -> str:
    if isinstance(item, RecipeInput):
        return f"sha256 {item.sha256}" if item.sha256 else f"header_sha256 {item.header_sha256}"
    return f"sha256 {item['sha256']}" if "sha256" in item else f"header_sha256 {item['header_sha256']}"


def _name(item: Input) -> str:
    return str(item.get("path") or item.get("uri"))


def input_findings(recorded: Sequence[RecipeInput], now: Sequence[Input]) -> list[InputFinding]:
    """The recorded inputs against the inputs the builder reads now: changed, not read any more, new."""
    current = {_name(i): i for i in now}
    findings = []
    for item in recorded:
        there = current.get(item.name)
        if there is None:
            findings.append(InputFinding(item.name, "not-read", _digest(item)))
        elif _digest(there) != _digest(item):
            findings.append(InputFinding(item.name, "changed", _digest(item), _digest(there)))
    names = {i.name for i in recorded}
    findings += [
        InputFinding(name, "new", None, _digest(i)) for name, i in current.items() if name not in names
    ]
    return findings


def _missing(recipe: Recipe, root: Path) -> list[InputFinding]:
    return [
        InputFinding(i.name, "missing", _digest(i))
        for i in recipe.inputs
        if i.path is not None and not (root / i.path).is_file()
    ]


class _Rebuilder:
    def __init__(self, release: Release, work: Path) -> None:
        self.release = release
        self.work = work

    def job(self, index: int, job: Job) -> list[OutputResult]:
        recipe = job.recipe
        results = [OutputResult(o, recipe.builder) for o in job.outputs]
        if recipe.builder not in BUILDERS:
            return self._all(results, "skipped", f"{recipe.builder} is not a hubrelease builder: not re-run")
        tools = [ToolDifference(*t) for t in version_differences(recipe.tools)]
        notes = [] if recipe.inputs else ["the recipe records no inputs (an older build): not compared"]
        for result in results:
            result.tools, result.notes = tools, list(notes)
        confinement = Confinement(
            job.outputs[0].path,
            (self.release.root, *self.release.inputs),
            {i.path: i.size for i in recipe.inputs if i.path is not None and i.size is not None},
        )
        work = self.work / str(index)
        target = output_folder(work, job.out, confinement)
        missing = _missing(recipe, self.release.root)
        if missing:
            return self._all(results, "input-missing", None, missing)
        try:
            prepared = prepare(recipe, self.release, confinement)
        except (HubUnavailable, RecipeRefused):
            raise
        except NotFoundError as exc:  # an hf:// input whose repo or commit is gone
            found = InputFinding(recipe.source or "?", "missing", detail=str(exc))
            return self._all(results, "input-missing", None, [found])
        except HubReleaseError as exc:  # every recorded file is there, but they no longer read as a source
            found = InputFinding(recipe.source or "?", "changed", detail=str(exc))
            return self._all(results, "input-changed", None, [found])
        findings = input_findings(recipe.inputs, prepared.inputs) if recipe.inputs else []
        for result in results:
            result.inputs = findings
        try:
            built = run(recipe, job.out, self.release, prepared, target)
        except (HubUnavailable, RecipeRefused):
            raise
        except HubReleaseError as exc:
            status: Status = "input-changed" if findings else "tool-differs" if tools else "differs"
            return self._all(results, status, f"the recipe failed: {exc}")
        written = {p.relative_to(work).as_posix(): p for p in built}
        for result in results:
            self._compare(result, written.get(result.output.local), bool(findings), bool(tools))
        return results

    @staticmethod
    def _all(
        results: list[OutputResult],
        status: Status,
        detail: str | None,
        inputs: list[InputFinding] | None = None,
    ) -> list[OutputResult]:
        for result in results:
            result.status, result.detail = status, detail
            if inputs is not None:
                result.inputs = inputs
        return results

    def _compare(
        self, result: OutputResult, rebuilt: Path | None, inputs_changed: bool, tools_differ: bool
    ) -> None:
        output = result.output
        if rebuilt is None:
            result.status = (
                "input-changed" if inputs_changed else "tool-differs" if tools_differ else "differs"
            )
            result.detail = "the recipe did not write this file"
            return
        result.size, result.sha256 = rebuilt.stat().st_size, sha256_file(rebuilt)
        same = (result.size, result.sha256) == (output.size, output.sha256) and output.sha256 is not None
        published = self.release.root / output.local
        trusted = (
            published.is_file()
            and published.stat().st_size == output.size
            and (same or sha256_file(published) == output.sha256)
        )
        if output.kind == "evaluation" and trusted:
            result.figures = compare_figures(load_json(published), load_json(rebuilt))
        if inputs_changed:
            result.status = "input-changed"
            if same:
                result.detail = "the rebuilt bytes are still the pinned ones"
        elif same:
            result.status = "identical"
            return
        else:
            result.status = "tool-differs" if tools_differ else "differs"
        if same:
            return
        if output.sha256 is None:
            result.detail = "the manifest pins no sha256 for it"
        elif trusted:
            result.detail = first_difference(published, rebuilt)
        else:
            result.detail = "the release's copy is missing or is not the pinned file: nothing to compare with"


def rebuild(
    manifest: Manifest,
    manifest_path: Path,
    root: Path,
    *,
    jobs: int | None = None,
    hub: Callable[[], HfApi] | None = None,
    progress: Progress = NULL_PROGRESS,
    inputs: Sequence[Path] = (),
) -> RebuildReport:
    """Re-run every recipe of ``manifest`` (release folder ``root``) into a temporary folder, removed after.

    Recipes read only from ``root`` and the folders ``inputs`` (``recipes.confine``); ``jobs`` of
    them run at once (default: one per core). ``hub`` makes the client for ``hf://`` inputs: it is
    called once, when a recipe first needs it, and the client is shared by every recipe.
    """
    jobs = jobs or os.cpu_count() or 1
    planned = plan_jobs(manifest)
    release = Release(
        root.resolve(),
        manifest_path,
        manifest,
        _made_once(hub) if hub is not None else None,
        1 if jobs > 1 and len(planned) > 1 else jobs,
        tuple(p.resolve() for p in inputs),
    )
    work = Path(tempfile.mkdtemp(prefix="hubrelease-rebuild-"))
    try:
        rebuilder = _Rebuilder(release, work)
        progress.start(len(planned), "rebuilding")
        with ThreadPoolExecutor(max(1, min(jobs, len(planned) or 1))) as pool:
            futures = [pool.submit(rebuilder.job, index, job) for index, job in enumerate(planned)]
            results: list[OutputResult] = []
            for future in futures:
                results += future.result()
                progress.advance(1)
        progress.finish()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    order = {(o.kind, o.path): n for n, o in enumerate(_manifest_order(manifest))}
    results.sort(key=lambda r: order.get((r.output.kind, r.output.path), len(order)))
    return RebuildReport(str(manifest_path), tuple(results))


def _made_once(make: Callable[[], HfApi]) -> Callable[[], HfApi]:
    """``make`` called on first use only: recipes run on threads, and share one client."""
    lock = threading.Lock()
    made: list[HfApi] = []

    def client() -> HfApi:
        with lock:
            if not made:
                made.append(make())
            return made[0]

    return client


def _manifest_order(manifest: Manifest) -> list[Output]:
    return [o for job in plan_jobs(manifest) for o in job.outputs]


def _result_json(result: OutputResult) -> dict[str, Any]:
    output = result.output
    data: dict[str, Any] = {
        "path": output.path,
        "kind": output.kind,
        "builder": result.builder,
        "status": result.status,
        "expected": {"size": output.size, "sha256": output.sha256},
        "rebuilt": {"size": result.size, "sha256": result.sha256} if result.sha256 else None,
        "detail": result.detail,
        "inputs": [
            {"input": f.input, "problem": f.problem, "recorded": f.recorded, "now": f.now, "detail": f.detail}
            for f in result.inputs
        ],
        "tools": [{"name": t.name, "recorded": t.recorded, "here": t.here} for t in result.tools],
        "notes": result.notes,
    }
    if result.figures is not None:
        data["figures"] = {
            "compared": result.figures.compared,
            "matched": result.figures.matched,
            "differing": [
                {"path": d.path, "published": d.published, "rebuilt": d.rebuilt}
                for d in result.figures.differing
            ],
        }
    return data
