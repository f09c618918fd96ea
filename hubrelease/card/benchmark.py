"""A dataset release's ``eval.yaml``: the Hub benchmark it registers, for the dataset card.

The Hub treats a dataset repo with an ``eval.yaml`` at its root as a benchmark and shows a model's
``.eval_results`` entries whose ``task_id`` it declares (hub-docs ``docs/hub/eval-results.md`` at
064c7548, "Registering a Benchmark", lines 14-37: ``name``, ``description``, ``evaluation_framework``,
``tasks[].id`` / ``config`` / ``split``). ``hubrelease build eval-results --benchmark`` writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hubrelease.card.locator import Locator
from hubrelease.safe_parse import ScreenError, parse_yaml

if TYPE_CHECKING:
    from hubrelease.manifest.models import Manifest

EVAL_YAML = "eval.yaml"


@dataclass(frozen=True)
class BenchmarkTask:
    id: str
    config: str
    split: str


@dataclass(frozen=True)
class Benchmark:
    """What the card says of the benchmark the release registers."""

    name: str
    framework: str | None
    tasks: tuple[BenchmarkTask, ...]


def benchmark(manifest: Manifest, root: Path, where: Locator) -> Benchmark | None:
    """The release's ``eval.yaml`` (an artifact at the repo root), or None when it publishes none."""
    index = next((i for i, a in enumerate(manifest.artifacts) if a.path == EVAL_YAML), None)
    if index is None:
        return None
    artifact, loc = manifest.artifacts[index], ("artifacts", index, "path")
    try:
        loaded: Any = parse_yaml((root / artifact.local_path).read_bytes())
    except (OSError, ScreenError) as exc:
        raise where.error(f"cannot read {EVAL_YAML}: {exc}", loc) from None
    tasks = loaded.get("tasks") if isinstance(loaded, dict) else None
    if not isinstance(loaded.get("name") if isinstance(loaded, dict) else None, str) or not isinstance(
        tasks, list
    ):
        raise where.error(f"{EVAL_YAML} needs a name and a list of tasks (the Hub validates it at push)", loc)
    found = []
    for task in tasks:
        if not isinstance(task, dict) or not all(
            isinstance(task.get(k), str) for k in ("id", "config", "split")
        ):
            raise where.error(f"each task of {EVAL_YAML} has a string id, config and split", loc)
        found.append(BenchmarkTask(task["id"], task["config"], task["split"]))
    framework = loaded.get("evaluation_framework")
    return Benchmark(loaded["name"], framework if isinstance(framework, str) else None, tuple(found))
