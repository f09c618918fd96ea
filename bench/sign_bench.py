"""`hubrelease sign` against a warm verify and against model-signing's own `sign`, on one large tree.

Signing builds the OMS statement from the manifest's digests, verified through the
stat cache, so signing a large release should cost about a warm verify plus the signature itself,
not a second pass over the bytes. The peer is `model_signing sign key` (model-signing 1.1.1), which
hashes every file of the folder to build the same kind of statement.

Generates the tree of bench/verify_bench.py (default 4 x 1 GiB shards + 1,000 small files), an EC
P-256 key, then times (whole processes, best of --repeat):
  - `hubrelease verify` warm (unchanged tree, stat cache),
  - `hubrelease sign --key` (its preflight verify is warm too),
  - `model_signing sign key` of the same folder (ignoring .hubrelease, SHA256SUMS and model.sig).
Prints seconds and the ratios. The files sit in the page cache after the first pass, so the peer is
measured hashing from memory: this compares work, not disks.

Usage: python bench/sign_bench.py [--big-gib 1] [--big-count 4] [--small 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from verify_bench import make_tree, timed, tree_options  # bench/ is on sys.path when this script runs

from tests.factories.signing import ec_key_pair


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    tree_options(parser)
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    hubrelease, model_signing = str(bin_dir / "hubrelease"), str(bin_dir / "model_signing")
    if shutil.which(model_signing) is None:
        raise SystemExit("model_signing is not installed next to this Python: pip install 'hubrelease[sign]'")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tree = work / "release"
        tree.mkdir()
        manifest = make_tree(tree, args.big_count, args.big_gib, args.small)
        private, public = ec_key_pair(work)
        total = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
        print(
            f"tree: {args.big_count} x {args.big_gib:g} GiB + {args.small} small files ({total / 2**30:.2f} GiB)"
        )
        first = timed([hubrelease, "verify", str(manifest)], tree)
        print(f"cold verify (fills the stat cache): {first:.3f} s")

        def best(command: list[str]) -> float:
            return min(timed(command, tree) for _ in range(args.repeat))

        warm = best([hubrelease, "verify", str(manifest)])
        sign = best([hubrelease, "sign", str(manifest), "--key", str(private)])
        timed([hubrelease, "verify", str(manifest), "--signature", "--public-key", str(public)], tree)
        peer = best(
            [
                model_signing, "sign", "key", str(tree), "--private_key", str(private),
                "--signature", str(work / "peer.sig"),
                "--ignore-paths", str(tree / ".hubrelease"), "--ignore-paths", str(tree / "SHA256SUMS"),
                "--ignore-paths", str(tree / "model.sig"),
            ]
        )  # fmt: skip
        print(f"hubrelease verify, warm:        {warm:.3f} s")
        print(
            f"hubrelease sign --key:          {sign:.3f} s  ({sign / warm:.2f}x the warm verify, +{sign - warm:.3f} s)"
        )
        print(f"model_signing sign key (peer):  {peer:.3f} s  ({peer / sign:.1f}x hubrelease sign)")


if __name__ == "__main__":
    main()
