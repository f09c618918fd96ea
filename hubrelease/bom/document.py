"""The release as a CycloneDX 1.6 JSON ML-BOM, from the manifest and its evaluation files.

cyclonedx-python-lib's object model has no ``modelCard`` and no ``formulation`` yet (both are
commented out in ``cyclonedx/model/component.py`` and ``bom.py`` of 11.x), so the document is built
here as plain JSON and validated with that library's own strict JSON validator (``bom.validate``).

What goes where:

* ``metadata.component``: the release, a ``machine-learning-model`` whose nested ``file``
  components are every published file with its manifest sha256 (not the card nor the manifest,
  whose digests would depend on this BOM's), and whose ``modelCard.quantitativeAnalysis`` holds
  the evaluations' figures: each serving cell's metrics, each paired comparison's mean
  difference with its 95% interval, each sweep row.
* ``components``: the pins, each at its commit with its licence: targets and base drafters
  (``machine-learning-model``), datasets (``data``), engines (``application``, with their binaries'
  digests), hardware (``device``), external files (``file``).
* ``formulation``: one workflow per recipe: its inputs by digest, options as parameters, outputs as
  references to the published files, tool versions as properties.

No timestamp, and a serial number derived from the content: the same manifest gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

from hubrelease import __version__
from hubrelease.manifest.jobs import plan_jobs
from hubrelease.manifest.models import Manifest, PinnedRepo, Recipe

SPEC_VERSION = "1.6"
HUB = "https://huggingface.co"
_PREFIX = "hubrelease:"


def _license(hub_id: str | None) -> list[dict[str, Any]] | None:
    """A Hub licence id as an SPDX id when it is one (``apache-2.0`` -> ``Apache-2.0``), else by name."""
    if not hub_id:
        return None
    from cyclonedx.spdx import fixup_id

    spdx = fixup_id(hub_id)
    return [{"license": {"id": spdx} if spdx else {"name": hub_id}}]


def _prop(name: str, value: object) -> dict[str, str]:
    return {"name": _PREFIX + name, "value": str(value)}


def _clean(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v not in (None, [], {})}


def _hub_url(repo_id: str, repo_type: str, revision: str | None) -> str:
    kind = "" if repo_type == "model" else f"{repo_type}s/"
    return f"{HUB}/{kind}{repo_id}" + (f"/tree/{revision}" if revision else "")


def _file(ref: str, name: str, size: int | None, sha256: str | None, **props: object) -> dict[str, Any]:
    return _clean(
        {
            "type": "file",
            "bom-ref": ref,
            "name": name,
            "hashes": [{"alg": "SHA-256", "content": sha256}] if sha256 else None,
            "properties": [_prop(k, v) for k, v in {"size": size, **props}.items() if v is not None],
        }
    )


def _repo(kind: str, pin: PinnedRepo) -> dict[str, Any]:
    ref = f"pin:{kind}:{pin.repo_id}"
    return _clean(
        {
            "type": "machine-learning-model",
            "bom-ref": ref,
            "name": pin.repo_id,
            "version": pin.revision,
            "description": pin.note,
            "licenses": _license(pin.license),
            "externalReferences": [
                {"type": "distribution", "url": _hub_url(pin.repo_id, pin.repo_type, pin.revision)}
            ],
            "components": [
                _file(f"{ref}:{f.path}", f.path, f.size, f.sha256, header_sha256=f.header_sha256)
                for f in pin.files
            ],
            "properties": [
                _prop(k, v)
                for k, v in (
                    ("role", kind),
                    ("quantization", pin.quantization),
                    ("unpinned", pin.unpinned or None),
                )
                if v is not None
            ],
        }
    )


def _pins(manifest: Manifest) -> list[dict[str, Any]]:
    pins = manifest.pins
    components = [_repo("target", p) for p in pins.targets] + [
        _repo("base-drafter", p) for p in pins.base_drafters
    ]
    for data in pins.datasets:
        components.append(
            _clean(
                {
                    "type": "data",
                    "bom-ref": f"pin:dataset:{data.repo_id}",
                    "name": data.repo_id,
                    "version": data.revision,
                    "licenses": _license(data.license),
                    "externalReferences": [
                        {"type": "distribution", "url": _hub_url(data.repo_id, "dataset", data.revision)}
                    ],
                    "data": [{"type": "dataset", "name": data.name or data.repo_id}],
                    "properties": [_prop("role", data.role)]
                    + ([_prop("attribution", data.attribution)] if data.attribution else []),
                }
            )
        )
    for engine in pins.engines:
        ref = f"pin:engine:{engine.name}"
        components.append(
            _clean(
                {
                    "type": "application",
                    "bom-ref": ref,
                    "name": engine.name,
                    "version": engine.commit,
                    "externalReferences": [{"type": "vcs", "url": engine.repository}],
                    "components": [_file(f"{ref}:{b.name}", b.name, None, b.sha256) for b in engine.binaries],
                    "properties": [_prop("build_flag", f) for f in engine.build_flags]
                    + ([_prop("built", engine.built)] if engine.built else []),
                }
            )
        )
    for machine in pins.hardware:
        stated = {"accelerator": machine.accelerator, "count": machine.count, "memory": machine.memory}
        components.append(
            {
                "type": "device",
                "bom-ref": f"pin:hardware:{machine.id}",
                "name": machine.name,
                "properties": [_prop(k, v) for k, v in stated.items() if v is not None],
            }
        )
    components += [
        _file(f"pin:external:{f.name}", f.name, None, f.sha256, source=f.source) for f in pins.external_files
    ]
    return components


def _published(manifest: Manifest, skip: set[str]) -> list[dict[str, Any]]:
    files = [
        _file(f"file:{a.path}", a.path, a.size, a.sha256, role=a.role)
        for a in manifest.artifacts
        if a.path not in skip
    ]
    files += [
        _file(f"file:{e.path}", e.path, e.size, e.sha256, role="evaluation")
        for e in manifest.evaluation_files
        if e.path not in skip
    ]
    return files


def _metric(
    kind: str, value: float, where: str, interval: tuple[float, float] | None = None
) -> dict[str, Any]:
    metric: dict[str, Any] = {"type": kind, "value": repr(value), "slice": where}
    if interval is not None:
        metric["confidenceInterval"] = {"lowerBound": repr(interval[0]), "upperBound": repr(interval[1])}
    return metric


def _metrics(manifest: Manifest, root: Path) -> list[dict[str, Any]]:
    from hubrelease.evaluation.load import load_evaluation

    metrics = []
    for entry in manifest.evaluation_files:
        evaluation = load_evaluation(root / entry.path)
        on = f"{entry.path}, {evaluation.run.hardware.name}"
        for cell in evaluation.cells:
            where = f"{on}: {cell.configuration} at concurrency {cell.concurrency}"
            for name in (
                "overall_tok_s",
                "per_user_tok_s",
                "median_ttft_ms",
                "median_tpot_ms",
                "accepted_length",
            ):
                value = getattr(cell, name)
                if value is not None:
                    metrics.append(_metric(name, value, where))
        for comparison in evaluation.comparisons:
            for row in comparison.rows:
                setting = (
                    f" at {comparison.setting_name or 'setting'}={row.setting}"
                    if row.setting is not None
                    else ""
                )
                where = f"{on}: {comparison.id} ({comparison.treatment} vs {comparison.baseline}){setting}, n={row.n}"
                kind = f"{comparison.metric} paired mean difference ({int(row.ci95.level * 100)}% CI)"
                metrics.append(_metric(kind, row.mean_difference, where, (row.ci95.low, row.ci95.high)))
                relative = row.relative_ci95
                metrics.append(
                    _metric(
                        "relative change",
                        row.relative_change,
                        where,
                        (relative.low, relative.high) if relative else None,
                    )
                )
        for sweep in evaluation.sweeps:
            for sweep_row in sweep.rows:
                where = f"{on}: {sweep.id} at {sweep.setting_name}={sweep_row.setting}, runs={sweep_row.runs}"
                metrics.append(_metric("mean_tok_s", sweep_row.mean_tok_s, where))
    return metrics


def _input_component(ref: str, item: Any) -> dict[str, Any]:
    return _file(ref, item.name, item.size, item.sha256, header_sha256=item.header_sha256)


def _formulation(manifest: Manifest, published: set[str]) -> list[dict[str, Any]]:
    components: dict[str, dict[str, Any]] = {}
    workflows = []
    for index, job in enumerate(plan_jobs(manifest), start=1):
        recipe: Recipe = job.recipe
        inputs: list[dict[str, Any]] = []
        for item in recipe.inputs:
            ref = f"file:{item.path}" if item.path in published else f"input:{item.name}"
            if ref not in components and not ref.startswith("file:"):
                components[ref] = _input_component(ref, item)
            inputs.append({"resource": {"ref": ref}})
        parameters = [
            {"name": k, "value": json.dumps(v) if isinstance(v, list) else str(v)}
            for k, v in recipe.options.items()
        ]
        if recipe.source is not None:
            parameters.insert(0, {"name": "source", "value": recipe.source})
        if parameters:
            inputs.append({"parameters": parameters})
        workflows.append(
            _clean(
                {
                    "bom-ref": f"recipe:{index}",
                    "uid": f"recipe-{index}",
                    "name": f"hubrelease build {recipe.builder}",
                    "description": f"writes {job.out}",
                    "taskTypes": ["build"],
                    "inputs": inputs,
                    "outputs": [
                        {"type": "artifact", "resource": {"ref": f"file:{o.path}"}}
                        for o in job.outputs
                        if o.path in published
                    ],
                    "properties": [_prop(f"tool:{k}", v) for k, v in recipe.tools.items()],
                }
            )
        )
    if not workflows:
        return []
    return [{"bom-ref": "formulation", "components": list(components.values()), "workflows": workflows}]


def release_bom(manifest: Manifest, root: Path, *, skip: set[str]) -> dict[str, Any]:
    """The BOM of ``manifest`` (release folder ``root``); files in ``skip`` (the BOM itself) are left out."""
    release = manifest.release
    skip = skip | {manifest.card_output}
    files = _published(manifest, skip)
    published = {f["name"] for f in files}
    datasets = [{"ref": f"pin:dataset:{d.repo_id}"} for d in manifest.pins.datasets if d.role != "evaluation"]
    model_card = _clean(
        {
            "modelParameters": _clean({"task": release.pipeline_tag, "datasets": datasets}),
            "quantitativeAnalysis": _clean({"performanceMetrics": _metrics(manifest, root)}),
        }
    )
    subject = _clean(
        {
            "type": "data" if release.repo_type == "dataset" else "machine-learning-model",
            "bom-ref": "release",
            "name": release.repo_id,
            "version": release.revision,
            "description": release.title,
            "licenses": _license(release.license),
            "externalReferences": [
                {"type": "distribution", "url": _hub_url(release.repo_id, release.repo_type, None)}
            ],
            "components": files,
            "modelCard": model_card if release.repo_type != "dataset" else None,
            "data": [{"type": "dataset", "name": release.repo_id}]
            if release.repo_type == "dataset"
            else None,
            "tags": release.tags,
        }
    )
    pins = _pins(manifest)
    document: dict[str, Any] = _clean(
        {
            "bomFormat": "CycloneDX",
            "specVersion": SPEC_VERSION,
            "version": 1,
            "metadata": {
                "tools": {
                    "components": [{"type": "application", "name": "hubrelease", "version": __version__}]
                },
                "component": subject,
            },
            "components": pins,
            "dependencies": [{"ref": "release", "dependsOn": sorted({c["bom-ref"] for c in pins})}]
            if pins
            else None,
            "formulation": _formulation(manifest, published),
        }
    )
    digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode("utf-8")).hexdigest()
    serial = uuid.uuid5(uuid.NAMESPACE_URL, f"{_PREFIX}{release.repo_id}:{digest}")
    return {"bomFormat": "CycloneDX", "specVersion": SPEC_VERSION, "serialNumber": serial.urn} | document


def bom_text(document: dict[str, Any]) -> str:
    """The file's text: 2-space indent, keys as built, trailing newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
