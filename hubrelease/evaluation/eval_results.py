"""Evaluation JSON -> the Hub's ``.eval_results/*.yaml``, through huggingface_hub's own types.

The Hub shows evaluation results from ``.eval_results/*.yaml`` in a model repo (huggingface_hub 2.4:
``EvalResultEntry``, ``eval_result_entries_to_yaml``, ``parse_eval_result_entries``). One file per
evaluation file, one entry per measured number: each cell's output tok/s (and accepted length), each
A/B row's relative change (its 95% interval and p in the notes), each sweep row's mean tok/s.

Every entry links to the evaluation file it comes from, in the release's repo at the release's
branch, and its notes carry that file's sha256: a commit cannot name its own id, so the link names
the branch the push lands on and the digest proves which bytes it meant (``verify --remote
--revision COMMIT`` checks both at any commit). The YAML files are artifacts of the manifest
(pinned by size and sha256, recipe ``eval-results``), so they are verified and published in the same
commit as the evaluation files; ``lint MANIFEST`` re-renders them and names a stale one.

``dataset_id`` is the benchmark the numbers are on: ``--dataset`` (recorded in the recipe), else the
one dataset pinned with role ``evaluation``. The Hub shows an entry only when that dataset is a
benchmark: a dataset repo with an ``eval.yaml`` at its root whose ``tasks`` list the entry's
``task_id`` (huggingface.co/docs/hub/eval-results; hub-docs ``docs/hub/eval-results.md`` at 064c7548,
"Registering a Benchmark", lines 14-37). ``benchmark_yaml`` writes that file from the same entries, so every task
id a model's file uses is one the benchmark declares; the release's own model repo is never a
benchmark, so a release that names none is refused.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import yaml

from hubrelease.errors import InputError
from hubrelease.evaluation.load import load_evaluation
from hubrelease.safe_parse import ScreenError, parse_yaml

if TYPE_CHECKING:
    from huggingface_hub import EvalResultEntry

    from hubrelease.evaluation.models import Evaluation
    from hubrelease.manifest.models import EvaluationFile, Manifest

FOLDER = ".eval_results"
BUILDER = "eval-results"
HUB = "https://huggingface.co"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def eval_results_path(evaluation_path: str) -> str:
    """Where the entries of an evaluation file go: ``.eval_results/<its name>.yaml``."""
    return f"{FOLDER}/{PurePosixPath(evaluation_path).stem}.yaml"


def benchmark(manifest: Manifest, dataset: str | None) -> tuple[str, str | None]:
    """(benchmark dataset id, its revision): ``--dataset``, else the one dataset pinned with role evaluation."""
    if dataset:
        repo_id, _, revision = dataset.partition("@")
        return repo_id, revision or None
    evaluation = [d for d in manifest.pins.datasets if d.role == "evaluation"]
    if len(evaluation) == 1:
        pin = evaluation[0]
        return pin.repo_id, None if pin.unpinned else pin.revision
    raise InputError(
        f"{len(evaluation) or 'no'} datasets are pinned with role evaluation: the Hub shows results only on "
        "a benchmark dataset (a dataset repo with eval.yaml), never on the release itself; publish the "
        "prompt set as one (`hubrelease build eval-results --benchmark DIR` writes its eval.yaml) and name "
        "it with --dataset ORG/NAME[@COMMIT] or one pins.datasets entry with role: evaluation"
    )


def entries(
    manifest: Manifest, pin: EvaluationFile, evaluation: Evaluation, dataset: str | None
) -> list[EvalResultEntry]:
    """The entries of one evaluation file (``pin`` is its manifest entry, whose sha256 the notes cite)."""
    from huggingface_hub import EvalResultEntry

    dataset_id, revision = benchmark(manifest, dataset)
    release = manifest.release
    url = f"{HUB}/{release.repo_id}/blob/{release.revision}/{pin.path}"
    run = evaluation.run
    where = (
        f"{run.engine.name}{f' {run.engine.commit[:12]}' if run.engine.commit else ''} on {run.hardware.name}"
    )
    prompts = run.prompt_set.name
    digest = f"; evaluation file sha256 {pin.sha256}" if pin.sha256 else ""

    def dated(when: str | None) -> str | None:
        """A table's own date wins over the run's; anything but an ISO date is left out (the Hub parses it)."""
        value = when or run.date
        return value if value and _DATE.match(value) else None

    labels = {c.id: c.label for c in evaluation.configurations}

    def entry(task: str, value: float, what: str, when: str | None = None) -> EvalResultEntry:
        return EvalResultEntry(
            dataset_id=dataset_id, task_id=task, value=value, dataset_revision=revision, date=dated(when),
            source_url=url, source_name=f"hubrelease evaluation: {evaluation.title}",
            notes=f"{what}; {prompts}; {where}{digest}",
        )  # fmt: skip

    found = []
    for cell in evaluation.cells:
        label = f"{labels.get(cell.configuration, cell.configuration)}, concurrency {cell.concurrency}"
        base = f"{cell.configuration}-c{cell.concurrency}"
        found.append(entry(f"{base}-output-tok-s", cell.overall_tok_s, f"{label}: output tok/s"))
        if cell.accepted_length is not None:
            found.append(entry(f"{base}-accepted-length", cell.accepted_length, f"{label}: accepted length"))
    for comparison in evaluation.comparisons:
        for row in comparison.rows:
            name = comparison.setting_name or "setting"
            setting = "" if row.setting is None else f"-{name}-{row.setting}"
            at = "" if row.setting is None else f" at {name} = {row.setting}"
            ci = (
                f", 95% CI [{row.relative_ci95.low:+.4f}, {row.relative_ci95.high:+.4f}]"
                if row.relative_ci95
                else ""
            )
            p = f", p = {row.p_value:.3g}" if row.p_value is not None else ""
            what = f"{comparison.title}: relative change of {comparison.metric}, {comparison.treatment} vs {comparison.baseline}{at}{ci}{p}, n = {row.n}"  # fmt: skip
            task = f"{comparison.id}{setting}-relative-change"
            found.append(entry(task, row.relative_change, what, comparison.date))
    for sweep in evaluation.sweeps:
        for sweep_row in sweep.rows:
            what = f"{sweep.title}: mean tok/s at {sweep.setting_name} = {sweep_row.setting} ({sweep_row.runs} runs, sd {sweep_row.sd_tok_s})"
            found.append(
                entry(
                    f"{sweep.id}-{sweep.setting_name}-{sweep_row.setting}-tok-s",
                    sweep_row.mean_tok_s,
                    what,
                    sweep.date,
                )
            )
    return found


def render(manifest: Manifest, pin: EvaluationFile, root: Path, dataset: str | None) -> bytes:
    """The ``.eval_results`` YAML of one evaluation file of the release in ``root``."""
    from huggingface_hub import eval_result_entries_to_yaml

    found = entries(manifest, pin, load_evaluation(root / pin.path), dataset)
    if not found:
        raise InputError(
            "has no cells, comparisons or sweeps to publish as eval results", path=root / pin.path
        )
    text = yaml.safe_dump(eval_result_entries_to_yaml(found), sort_keys=False, allow_unicode=True, width=1000)
    return text.encode("utf-8")


def benchmark_yaml(manifest: Manifest, root: Path, dataset: str | None) -> bytes:
    """The benchmark dataset's ``eval.yaml``: one task per task id the release's entries use.

    Each task is the benchmark dataset's ``default`` config and ``test`` split (the prompt set is one
    table); ``evaluation_framework`` names the tool that measured and wrote the entries.
    """
    found: dict[str, None] = {}
    prompt_sets: dict[str, str | None] = {}
    for pin in (e for e in manifest.evaluation_files if e.sha256):
        evaluation = load_evaluation(root / pin.path)
        prompt_sets[evaluation.run.prompt_set.name] = evaluation.run.prompt_set.description
        found.update(dict.fromkeys(e.task_id for e in entries(manifest, pin, evaluation, dataset)))
    if not found:
        raise InputError("no evaluation file pinned by sha256 has numbers to declare as benchmark tasks")
    if len(prompt_sets) > 1:
        raise InputError(f"the evaluation files use {len(prompt_sets)} prompt sets ({', '.join(sorted(prompt_sets))}): a benchmark dataset is one prompt set")  # fmt: skip
    ((name, description),) = prompt_sets.items()
    document = {
        "name": name,
        "description": description or f"The prompts {manifest.release.repo_id} was measured on.",
        "evaluation_framework": "hubrelease",
        "tasks": [{"id": task, "config": "default", "split": "test"} for task in found],
    }
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=1000).encode("utf-8")


def parse(data: bytes) -> list[EvalResultEntry]:
    """A ``.eval_results`` file read back by huggingface_hub's own parser."""
    from huggingface_hub import parse_eval_result_entries

    try:
        loaded: Any = parse_yaml(data)
    except ScreenError as exc:
        raise InputError(f"an .eval_results file that is not YAML: {exc.problem}", line=exc.line) from None
    if not isinstance(loaded, list):
        raise InputError("an .eval_results file is a YAML list of entries")
    try:
        return parse_eval_result_entries(loaded)
    except (TypeError, AttributeError, KeyError, ValueError, IndexError) as exc:
        # huggingface_hub indexes each entry as the Hub writes it (_eval_results.py:198-210): another shape
        # raises whatever the first wrong access raises.
        raise InputError(
            f"an .eval_results entry huggingface_hub cannot read: {type(exc).__name__}: {exc}"
        ) from None
