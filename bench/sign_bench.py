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

Each figure is best wall-clock and best CPU time (user + system of the process, the steadier one on
a loaded machine). ``--baseline DIR`` runs another source tree's hubrelease on copies of the same
releases in the same rounds (before/after on a busy machine).

Usage: python bench/sign_bench.py [--repeat 5] [--files 2008] [--big-count 0] [--big-gib 1] [--small 1000]
       [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from startup_bench import ENV, machine, make_release, run_once  # bench/ is on sys.path when this script runs
from verify_bench import make_tree

from tests.factories.signing import ec_key_pair

EXAMPLE = Path(__file__).resolve().parents[1] / "manifests" / "example"


def releases(work: Path, args: argparse.Namespace) -> dict[str, Path]:
    """Name -> manifest of each release measured (made under ``work``)."""
    work.mkdir()
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
        # verify_bench's sums file (for `sha256sum -c`) is not published: verify --signature refuses a
        # folder holding it, as `model_signing verify` would.
        (tree / "SHA256SUMS").unlink(missing_ok=True)
    return found


class Measured:
    """One release measured by one hubrelease (this one, or ``--baseline``'s): best wall and CPU seconds."""

    def __init__(self, manifest: Path, work: Path, env: dict[str, str]) -> None:
        bin_dir = Path(sys.executable).parent
        hubrelease, model_signing = str(bin_dir / "hubrelease"), str(bin_dir / "model_signing")
        private, public = ec_key_pair(work, name=f"{manifest.parent.parent.name}-{manifest.parent.name}")
        self.folder, self.env = manifest.parent, env
        self.sign = [hubrelease, "sign", str(manifest), "--key", str(private)]
        self.commands = {
            "import typer": [sys.executable, "-c", "import typer"],
            "--help": [hubrelease, "--help"],
            "verify (warm)": [hubrelease, "verify", str(manifest)],
            "sign (warm: model.sig current)": self.sign,
            "verify --signature (warm)": [hubrelease, "verify", str(manifest), "--signature", "--public-key", str(public)],
            "sign (cold: no cache, no model.sig)": self.sign,
            "model_signing sign key": [
                model_signing, "sign", "key", str(self.folder), "--private_key", str(private),
                "--signature", str(work / f"{self.folder.parent.name}-{self.folder.name}-peer.sig"),
                "--ignore-paths", str(self.folder / ".hubrelease"), "--ignore-paths", str(self.folder / "SHA256SUMS"),
                "--ignore-paths", str(self.folder / "model.sig"),
            ],
        }  # fmt: skip
        self.wall = dict.fromkeys(self.commands, float("inf"))
        self.cpu = dict.fromkeys(self.commands, float("inf"))
        self.warm_up()

    def warm_up(self) -> None:
        """What a user runs before: verify (stat cache, plan), sign (model.sig), verify --signature."""
        for name in ("verify (warm)", "sign (warm: model.sig current)", "verify --signature (warm)"):
            run_once(self.commands[name], self.env)

    def round(self) -> None:
        for name, command in self.commands.items():
            if name.startswith("sign (cold"):
                shutil.rmtree(self.folder / ".hubrelease")
                os.unlink(self.folder / "model.sig")
            wall, cpu = run_once(command, self.env)
            self.wall[name], self.cpu[name] = min(self.wall[name], wall), min(self.cpu[name], cpu)
        self.warm_up()  # the caches the cold sign started without, filled again for the next round


def report(name: str, measured: Measured) -> None:
    print(f"\n{name}: best wall-clock / CPU (user + system) seconds")
    for command in measured.commands:
        print(f"  {command:40s} {measured.wall[command]:7.3f} {measured.cpu[command]:7.3f}")
    for label, best in (("wall", measured.wall), ("CPU", measured.cpu)):
        verify, sign = best["verify (warm)"], best["sign (warm: model.sig current)"]
        print(
            f"  {label:4s} warm verify - --help {verify - best['--help']:+.3f} s (<= +0.1); "
            f"warm sign - warm verify {sign - verify:+.3f} s (<= +0.1); "
            f"warm verify --signature - warm verify {best['verify --signature (warm)'] - verify:+.3f} s (<= +0.1); "
            f"cold sign / model_signing {best['sign (cold: no cache, no model.sig)'] / best['model_signing sign key']:.2f}x (<= 1.0); "
            f"--help / import typer {best['--help'] / best['import typer']:.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="best of N rounds")
    parser.add_argument("--files", type=int, default=2008, help="files of the small-file release")
    parser.add_argument("--big-count", type=int, default=0, help="large files of the third release (0: none)")
    parser.add_argument("--big-gib", type=float, default=1.0)
    parser.add_argument("--small", type=int, default=1000, help="small files beside the large ones")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a source tree of another hubrelease (an older commit, say): its commands run on copies of "
        "the same releases in the same rounds, with PYTHONPATH set to it",
    )
    args = parser.parse_args()
    if shutil.which(str(Path(sys.executable).parent / "model_signing")) is None:
        raise SystemExit("model_signing is not installed next to this Python: pip install 'hubrelease[sign]'")
    print(f"{machine()}; best of {args.repeat} interleaved rounds")
    variants = {"": ENV}
    if args.baseline is not None:
        variants["baseline: "] = {**ENV, "PYTHONPATH": str(args.baseline.resolve())}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        measured = {
            f"{label}{name}": Measured(manifest, work, env)
            for label, env in variants.items()
            for name, manifest in releases(work / (label.rstrip(": ") or "this"), args).items()
        }
        for _ in range(args.repeat):
            for each in measured.values():
                each.round()
        for name, each in measured.items():
            report(name, each)
    print(f"load at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
