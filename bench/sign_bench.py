"""`hubrelease sign` and `verify --signature` against a warm verify, `--help`, `import typer` and
`model_signing sign key`, on three releases, in one run.

The goal: sign in the time of a warm verify. A `sign` that finds `model.sig` current, and a
`verify --signature` of an unchanged release, take the plan from verify's plan cache (no card
render) and the statement from the verified-signature cache (no model-signing import), so each
should cost a warm verify + at most 0.1 s; a warm verify of the example at most `--help` + 0.1 s;
a cold `sign` (no cache, no signature) at most 1.0x `model_signing sign key` of the same folder,
which hashes every file to build the same kind of statement.

Releases (each a fresh copy in a temp folder):
  - the example (manifests/example, without its build inputs checkpoint/, which model_signing would hash),
  - N small files (bench/startup_bench.py's release; default 2,008),
  - with --big-count > 0: bench/verify_bench.py's tree (--big-count x --big-gib GiB + --small files).
For each, whole processes, rounds interleaved so machine load hits every command alike, best of
--repeat: `python -c "import typer"`, `hubrelease --help`, warm `verify`, warm `sign --key`, warm
`verify --signature --public-key`, cold `sign` (caches and model.sig removed before each) and
`model_signing sign key` (ignoring .hubrelease, SHA256SUMS and model.sig). The files sit in the page
cache after the first pass: this compares work, not disks. Prints seconds and the targets' ratios.

Usage: python bench/sign_bench.py [--repeat 5] [--files 2008] [--big-count 0] [--big-gib 1] [--small 1000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from startup_bench import ENV, machine, make_release  # bench/ is on sys.path when this script runs
from verify_bench import make_tree, timed

from tests.factories.signing import ec_key_pair

EXAMPLE = Path(__file__).resolve().parents[1] / "manifests" / "example"


def releases(work: Path, args: argparse.Namespace) -> dict[str, Path]:
    """Name -> manifest of each release measured."""
    example = work / "example"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("checkpoint", ".hubrelease", "model.sig"))
    small = work / "small"
    small.mkdir()
    found = {"example": example / "hubrelease.yaml", f"{args.files} files": make_release(small, args.files)}
    if args.big_count:
        tree = work / "tree"
        tree.mkdir()
        found[f"{args.big_count} x {args.big_gib:g} GiB + {args.small}"] = make_tree(
            tree, args.big_count, args.big_gib, args.small
        )
    return found


def measure(manifest: Path, work: Path, repeat: int) -> dict[str, float]:
    """Best seconds per command on the release of ``manifest``."""
    bin_dir = Path(sys.executable).parent
    hubrelease, model_signing = str(bin_dir / "hubrelease"), str(bin_dir / "model_signing")
    private, public = ec_key_pair(work, name=manifest.parent.name)
    folder = manifest.parent
    sign = [hubrelease, "sign", str(manifest), "--key", str(private)]
    commands = {
        "import typer": [sys.executable, "-c", "import typer"],
        "--help": [hubrelease, "--help"],
        "verify (warm)": [hubrelease, "verify", str(manifest)],
        "sign (warm: model.sig current)": sign,
        "verify --signature (warm)": [*[hubrelease, "verify", str(manifest)], "--signature", "--public-key", str(public)],
        "sign (cold: no cache, no model.sig)": sign,
        "model_signing sign key": [
            model_signing, "sign", "key", str(folder), "--private_key", str(private),
            "--signature", str(work / f"{folder.name}-peer.sig"),
            "--ignore-paths", str(folder / ".hubrelease"), "--ignore-paths", str(folder / "SHA256SUMS"),
            "--ignore-paths", str(folder / "model.sig"),
        ],
    }  # fmt: skip
    verify = commands["verify (warm)"]

    def warm_up() -> None:
        """What a user runs before: verify (stat cache, plan), sign (model.sig), verify --signature."""
        for command in (verify, sign, commands["verify --signature (warm)"]):
            timed(command, folder, ENV)

    warm_up()
    best = dict.fromkeys(commands, float("inf"))
    for _ in range(repeat):
        for name, command in commands.items():
            if name.startswith("sign (cold"):
                shutil.rmtree(folder / ".hubrelease")
                os.unlink(folder / "model.sig")
            best[name] = min(best[name], timed(command, folder, ENV))
        warm_up()  # the caches the cold sign started without, filled again for the next round
    return best


def report(name: str, best: dict[str, float]) -> None:
    print(f"\n{name}")
    for command, seconds in best.items():
        print(f"  {command:40s} {seconds:7.3f} s")
    verify, sign = best["verify (warm)"], best["sign (warm: model.sig current)"]
    print(f"  warm verify - --help:                  {verify - best['--help']:+.3f} s (target <= +0.1)")
    print(f"  warm sign - warm verify:               {sign - verify:+.3f} s (target <= +0.1)")
    print(
        f"  warm verify --signature - warm verify: {best['verify --signature (warm)'] - verify:+.3f} s (target <= +0.1)"
    )
    print(
        f"  cold sign / model_signing sign key:    {best['sign (cold: no cache, no model.sig)'] / best['model_signing sign key']:.2f}x (target <= 1.0)"
    )
    print(f"  --help / import typer:                 {best['--help'] / best['import typer']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="best of N rounds")
    parser.add_argument("--files", type=int, default=2008, help="files of the small-file release")
    parser.add_argument("--big-count", type=int, default=0, help="large files of the third release (0: none)")
    parser.add_argument("--big-gib", type=float, default=1.0)
    parser.add_argument("--small", type=int, default=1000, help="small files beside the large ones")
    args = parser.parse_args()
    if shutil.which(str(Path(sys.executable).parent / "model_signing")) is None:
        raise SystemExit("model_signing is not installed next to this Python: pip install 'hubrelease[sign]'")
    print(f"{machine()}; best of {args.repeat} interleaved rounds")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, manifest in releases(work, args).items():
            report(name, measure(manifest, work, args.repeat))
    print(f"load at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
