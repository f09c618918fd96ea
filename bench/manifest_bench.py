"""Loading a release-scale manifest against ``yaml.load(CSafeLoader)`` on the same file, in one run.

Writes a manifest of N artifacts (default 25,000, with pins and a card block, as ``init`` would)
and times, best of R, in this process:
  - the peer: ``yaml.load(text, Loader=yaml.CSafeLoader)`` (parse only, no validation),
  - ``load_manifest`` (parse + validate) and the plans built from it: verify's expected files (no
    I/O) and push's release files (each path resolved inside the release folder: one realpath each),
  - the failure path: the same file with one bad sha256 near the end (the error names its line),
  - edits (``manifest.editor``: one libyaml parse, only the edited lines re-emitted by ruamel):
    ``rm`` of one artifact, ``add`` of one file, and ``lock`` of a branch pin against the loopback
    Hub (its requests included).
Prints seconds and each figure as a ratio of the peer.

Usage: python bench/manifest_bench.py [--artifacts 25000] [--repeat 3] [--skip-edits]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from huggingface_hub import HfApi

from hubrelease.errors import ManifestError
from hubrelease.hub.lock import lock_manifest
from hubrelease.manifest import load_manifest
from hubrelease.onboarding.edit import add_files, remove_paths
from hubrelease.release_files import release_files
from hubrelease.verify.local import plan_manifest
from hubrelease_loopback import LoopbackHub


def make_manifest(root: Path, count: int) -> Path:
    artifacts = [
        {
            "path": f"shards/part-{index:05d}-of-{count:05d}.safetensors",
            "size": 1000 + index,
            "sha256": hashlib.sha256(str(index).encode()).hexdigest(),
            "role": "recommended",
        }
        for index in range(count)
    ]
    manifest = {
        "schema_version": 1,
        "release": {"repo_id": "bench/big-release", "license": "apache-2.0"},
        "pins": {
            "targets": [
                {
                    "repo_id": "acme/target",
                    "revision": "main",
                    "unpinned": True,
                    "files": [{"path": "config.json"}],
                }
            ]
        },
        "artifacts": artifacts,
    }
    path = root / "hubrelease.yaml"
    path.write_text("# a release-scale manifest\n" + yaml.safe_dump(manifest, sort_keys=False))
    return path


def best(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--artifacts", type=int, default=25_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-edits", action="store_true", help="skip the edits (add, rm, lock)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="manifest-bench-"))
    try:
        path = make_manifest(base, args.artifacts)
        text = path.read_text()
        bad = base / "bad.yaml"
        cut = text.rindex("sha256: ") + len("sha256: ")
        bad.write_text(text[:cut] + "not-a-digest" + text[cut + 64 :])
        results: dict[str, float] = {}
        results["peer: yaml.load(CSafeLoader)"] = best(
            args.repeat, lambda: yaml.load(text, Loader=yaml.CSafeLoader)
        )
        results["load_manifest (parse + validate)"] = best(args.repeat, lambda: load_manifest(path))

        results["load + validate + plan (verify's expected files)"] = best(
            args.repeat, lambda: plan_manifest(load_manifest(path), path)
        )
        results["load + validate + plan (push's release files)"] = best(
            args.repeat, lambda: release_files(load_manifest(path), path, base)
        )

        def invalid() -> None:
            try:
                load_manifest(bad)
            except ManifestError as exc:
                assert exc.line is not None and exc.line > args.artifacts, exc
            else:
                raise AssertionError("the bad manifest loaded")

        results["invalid manifest -> FILE:LINE: field error"] = best(args.repeat, invalid)
        if not args.skip_edits:
            extra = base / "extra.json"
            extra.write_text("{}\n")
            os.utime(extra, ns=(10**18, 10**18))
            original = path.read_bytes()

            def rm_one() -> None:
                path.write_bytes(original)
                remove_paths(path, [f"shards/part-00000-of-{args.artifacts:05d}.safetensors"])

            def add_one() -> None:
                path.write_bytes(original)
                add_files(path, [extra], role="doc")

            results["edit: rm one artifact"] = best(args.repeat, rm_one)
            results["edit: add one file"] = best(args.repeat, add_one)
            with LoopbackHub(base / "hub") as hub:
                api = HfApi(endpoint=hub.url, token=hub.owner_token)
                api.create_repo("acme/target")
                api.upload_file(path_or_fileobj=b"{}\n", path_in_repo="config.json", repo_id="acme/target")

                def lock_one() -> None:
                    path.write_bytes(original)
                    assert lock_manifest(path, api, pin=["acme/target"]).written  # marked unpinned: true

                results["edit: lock one branch pin (loopback Hub)"] = best(args.repeat, lock_one)
    finally:
        shutil.rmtree(base)
    peer = results["peer: yaml.load(CSafeLoader)"]
    print(
        f"\n{args.artifacts:,} artifacts ({len(text) / 1e6:.1f} MB); {os.cpu_count()} cpus, "
        f"load {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}, PyYAML {yaml.__version__}; best of {args.repeat}"
    )
    for name, seconds in results.items():
        print(f"{name:48s} {seconds:8.3f} s  {seconds / peer:6.2f}x peer")
    for kind in ("verify's expected files", "push's release files"):
        plan = results[f"load + validate + plan ({kind})"]
        print(
            f"target: load + validate + plan ({kind}) < 1 s: {plan:.2f} s ({plan / peer:.2f}x the C loader)"
        )
    if not args.skip_edits:
        edits = max(seconds for name, seconds in results.items() if name.startswith("edit: "))
        load = results["load_manifest (parse + validate)"]
        print(
            f"target: round-trip edits < 2 s: slowest {edits:.2f} s ({edits / peer:.2f}x the C loader, "
            f"{edits / load:.2f}x load_manifest)"
        )


if __name__ == "__main__":
    main()
