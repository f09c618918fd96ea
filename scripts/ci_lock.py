"""Write the CI lock of a release repository: hubrelease's wheel and every dependency, pinned by sha256.

    python scripts/ci_lock.py RELEASE_REPO      # from a hubrelease checkout at the commit to use

hubrelease is not on PyPI and pip cannot hash a git checkout, so the pinned source is a wheel
built from this checkout, committed into the release repository next to the lock:
``RELEASE_REPO/.github/hubrelease/hubrelease-<version>-py3-none-any.whl`` and
``RELEASE_REPO/.github/hubrelease/requirements.txt`` (the example workflow installs it with
``pip install --require-hashes --only-binary :all: -r``). The dependencies are the wheels pip picks
for the workflow's runner (Linux x86_64, CPython 3.11: ``--platform``/``--python-version``, so the
lock can be made on any machine); each line is ``name==version --hash=sha256:...`` of the file pip
downloaded. Re-run it to upgrade, and review the diff like code.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
LOCK_DIR = Path(".github") / "hubrelease"
# ubuntu-latest (glibc 2.39): pip takes the platform tags listed, no older ones implied.
PLATFORM = [
    *("--platform", "manylinux_2_34_x86_64", "--platform", "manylinux_2_28_x86_64"),
    *("--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64"),
    *("--python-version", "3.11", "--implementation", "cp"),
]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release_repo", type=Path)
    parser.add_argument(
        "--extras", default="sign,bom", help="hubrelease extras to lock (the example workflow uses sign, bom)"
    )
    options = parser.parse_args()
    target = options.release_repo / LOCK_DIR
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("hubrelease-*.whl"):
        old.unlink()
    pip("wheel", "--quiet", "--no-deps", "--wheel-dir", str(target), str(CHECKOUT))
    [wheel] = target.glob("hubrelease-*.whl")
    with tempfile.TemporaryDirectory(prefix="ci-lock-") as tmp:
        spec = f"hubrelease[{options.extras}] @ {wheel.resolve().as_uri()}" if options.extras else str(wheel)
        pip("download", "--quiet", "--only-binary", ":all:", *PLATFORM, "--dest", tmp, spec)
        lines = []
        for path in sorted(Path(tmp).glob("*.whl"), key=lambda p: p.name.lower()):
            name, version = path.name.split("-")[:2]
            if name.lower() != "hubrelease":
                lines.append(f"{name.replace('_', '-').lower()}=={version} --hash=sha256:{sha256(path)}")
    extras = f"[{options.extras}]" if options.extras else ""
    lines.append(f"./{(LOCK_DIR / wheel.name).as_posix()}{extras} --hash=sha256:{sha256(wheel)}")
    header = (
        "# Written by hubrelease's scripts/ci_lock.py: hubrelease (the wheel beside this file) and every\n"
        "# dependency, pinned by sha256, for Linux x86_64 / CPython 3.11. Install with\n"
        "# pip install --require-hashes --only-binary :all: -r .github/hubrelease/requirements.txt\n"
    )
    (target / "requirements.txt").write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{target / 'requirements.txt'}: {len(lines)} pinned files, hubrelease {wheel.name}")


if __name__ == "__main__":
    main()
