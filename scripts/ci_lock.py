"""Write the CI lock of a release repository: hubrelease's wheels and every dependency, pinned by sha256.

    python scripts/ci_lock.py RELEASE_REPO              # the wheel from this checkout's HEAD commit
    python scripts/ci_lock.py RELEASE_REPO --commit REV # ... from another commit of this checkout
    python scripts/ci_lock.py RELEASE_REPO --check      # rebuild the committed wheel and compare bytes

hubrelease is not on PyPI and pip cannot hash a git checkout, so the pinned source is a wheel
built from one commit of this checkout, committed into the release repository next to the lock:
``RELEASE_REPO/.github/hubrelease/hubrelease-<version>+g<commit>-py3-none-any.whl``, the loopback
Hub's beside it (``hubrelease_loopback-...``, from ``loopback-hub/`` at the same commit: ``check``
previews the page on it, and skips that check without it) and
``RELEASE_REPO/.github/hubrelease/requirements.txt`` (the example workflow installs it with
``pip install --require-hashes --only-binary :all: -r``). The dependencies are the wheels pip picks
for the workflow's runner (Linux x86_64, CPython 3.11: ``--platform``/``--python-version``, so the
lock can be made on any machine); each line is ``name==version --hash=sha256:...`` of the file pip
downloaded. Re-run it to upgrade, and review the diff like code.

The wheel is reproducible, so a reviewer can check what the publish job installs: it is built from
``git archive`` of the commit (never the working tree), its local version names the commit
(``0.1.0+g<12 hex>``, so ``pip show hubrelease`` says which), ``SOURCE_DATE_EPOCH`` is the commit
time, the build backend is pinned (``BUILD_BACKEND``), and the archive is then rewritten with
sorted entries (``.dist-info`` last, as PEP 427 recommends), the commit time on every entry, mode
0644 (0755 where git records an executable) and no compression (deflate output differs between
zlib and zlib-ng, which some distributions ship). ``--check`` reads the commit from each committed
wheel's name, rebuilds it and exits 1 naming the first difference; it also exits 1 when a line of
the lock is not pinned by sha256, the lock's hash is not the committed wheel's, or the two wheels
name different commits. A lock written before the loopback wheel was locked (the client's alone)
still checks.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import NoReturn

CHECKOUT = Path(__file__).resolve().parents[1]
LOCK_DIR = Path(".github") / "hubrelease"
# ubuntu-latest (glibc 2.39): pip takes the platform tags listed, no older ones implied.
PLATFORM = [
    *("--platform", "manylinux_2_34_x86_64", "--platform", "manylinux_2_28_x86_64"),
    *("--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64"),
    *("--python-version", "3.11", "--implementation", "cp"),
]
BUILD_BACKEND = "setuptools==80.9.0"
"""The backend every build uses (pip's isolated build env, constrained): METADATA and WHEEL name it."""
PROJECTS = {"hubrelease": "", "hubrelease_loopback": "loopback-hub"}
"""Each locked wheel's name (as in its file name) and the folder of its pyproject.toml in the checkout."""
WHEEL_VERSION = re.compile(r"^(hubrelease|hubrelease_loopback)-[^-]+\+g([0-9a-f]{12})-py3-none-any\.whl$")
ZIP_EPOCH = 315532800  # 1980-01-01: the earliest time a zip entry can hold


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pip(*args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True, env=env)


def fail(message: str) -> NoReturn:
    """Invalid input: one line, exit 2."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(CHECKOUT), *args], capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"git {' '.join(args)}: {(done.stderr.strip().splitlines() or [f'exit {done.returncode}'])[-1]}")
    return done.stdout.strip()


def normalize(wheel: Path, epoch: int, executables: frozenset[str]) -> None:
    """Rewrite ``wheel`` in place: sorted entries, .dist-info last, one timestamp, fixed modes, stored."""
    with zipfile.ZipFile(wheel) as source:
        entries = {info.filename: source.read(info) for info in source.infolist() if not info.is_dir()}
    stamp = time.gmtime(max(epoch, ZIP_EPOCH))[:6]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as target:
        for name in sorted(entries, key=lambda n: (".dist-info/" in n, n.endswith("/RECORD"), n)):
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.create_system = 3  # Unix, so the mode below is what an installer reads
            info.external_attr = (0o100755 if name in executables else 0o100644) << 16
            target.writestr(info, entries[name])
    wheel.write_bytes(buffer.getvalue())


def build_wheel(commit: str, dest: Path, name: str = "hubrelease") -> Path:
    """The wheel ``name`` (a key of ``PROJECTS``) of ``commit`` (any revision of this checkout) in
    ``dest``, byte-identical on every run."""
    folder = PROJECTS[name]
    full = git("rev-parse", "--verify", f"{commit}^{{commit}}")
    epoch = int(git("show", "-s", "--format=%ct", full))
    listing = git("ls-tree", "-r", full).splitlines()
    executables = frozenset(line.split("\t", 1)[1] for line in listing if line.startswith("100755 "))
    with tempfile.TemporaryDirectory(prefix="ci-lock-build-") as tmp:
        source = Path(tmp) / "src"
        archive = subprocess.run(
            ["git", "-C", str(CHECKOUT), "archive", "--format=tar", full], check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(source, filter="data")
        project = source / folder / "pyproject.toml"
        text, count = re.subn(
            r'^version = "([^"+]+)"$',
            rf'version = "\1+g{full[:12]}"',
            project.read_text(),
            count=1,
            flags=re.M,
        )
        if count != 1:
            fail(f"{full[:12]}: {folder or '.'}/pyproject.toml has no static 'version = \"...\"' line")
        project.write_text(text)
        constraint = Path(tmp) / "build-constraint.txt"
        constraint.write_text(BUILD_BACKEND + "\n")
        env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}
        out = Path(tmp) / "out"
        build = ("--build-constraint", str(constraint))  # pip >= 25.3; PIP_CONSTRAINT no longer reaches it
        pip("wheel", "--quiet", "--no-deps", *build, "--wheel-dir", str(out), str(source / folder), env=env)
        [built] = out.glob(f"{name}-*.whl")
        package = f"{folder}/{name}/" if folder else f"{name}/"
        packaged = frozenset(
            path.removeprefix(f"{folder}/") for path in executables if path.startswith(package)
        )
        normalize(built, epoch, packaged)
        dest.mkdir(parents=True, exist_ok=True)
        os.replace(built, dest / built.name)
    return dest / built.name


def differences(committed: Path, rebuilt: Path) -> list[str]:
    """What tells two wheels apart, entry by entry (name, content, time, mode, order), first first."""
    with zipfile.ZipFile(committed) as old, zipfile.ZipFile(rebuilt) as new:
        olds, news = old.infolist(), new.infolist()
        found = [
            f"{name}: only in the committed wheel"
            for name in {i.filename for i in olds} - set(new.namelist())
        ]
        found += [f"{name}: only in the rebuild" for name in {i.filename for i in news} - set(old.namelist())]
        for a, b in zip(olds, news, strict=False):  # a missing entry is reported above
            if a.filename != b.filename:
                found.append(f"entry order: {a.filename} where the rebuild has {b.filename}")
                break
            if old.read(a) != new.read(b):
                found.append(f"{a.filename}: content")
            for field in ("date_time", "external_attr", "compress_type", "create_system", "extra", "comment"):
                if getattr(a, field) != getattr(b, field):
                    found.append(f"{a.filename}: {field} {getattr(a, field)!r} != {getattr(b, field)!r}")
    if not found and committed.read_bytes() != rebuilt.read_bytes():
        found.append("the archive's own bytes (headers or central directory)")
    return found


def check(target: Path) -> list[str]:
    """Problems of the lock in ``target`` (empty: every line pinned, each wheel rebuilt byte for byte)."""
    lock = target / "requirements.txt"
    lines = [
        line for line in lock.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")
    ]
    problems = [f"{lock}: not pinned by sha256: {line}" for line in lines if " --hash=sha256:" not in line]
    committed: dict[str, tuple[Path, str]] = {}  # name -> (the wheel, the commit its version names)
    for name in PROJECTS:
        wheels = [line for line in lines if line.startswith(f"./{LOCK_DIR.as_posix()}/{name}-")]
        if name != "hubrelease" and not wheels:
            continue  # a lock of the client alone: check skips its page check
        if len(wheels) != 1:
            return [*problems, f"{lock}: expected one line for {name}'s committed wheel, found {len(wheels)}"]
        path, _, pinned = wheels[0].partition(" --hash=sha256:")
        wheel = target.parents[1] / re.sub(r"\[[^]]*\]$", "", path)
        found = WHEEL_VERSION.match(wheel.name)
        if found is None:
            return [
                *problems,
                f"{wheel.name}: no commit in its version (written before ci_lock.py stamped one)",
            ]
        if not wheel.is_file():
            return [*problems, f"{wheel}: the lock names it, it is not there"]
        if sha256(wheel) != pinned.strip():
            problems.append(f"{lock}: the hash pinned for {wheel.name} is not the committed wheel's")
        committed[name] = (wheel, found.group(2))
    if len({commit for _, commit in committed.values()}) > 1:  # the loopback Hub built for another client
        names = ", ".join(wheel.name for wheel, _ in committed.values())
        return [*problems, f"{lock}: the wheels are built from different commits: {names}"]
    for name, (wheel, commit) in committed.items():
        with tempfile.TemporaryDirectory(prefix="ci-lock-check-") as tmp:
            rebuilt = build_wheel(commit, Path(tmp), name)
            if rebuilt.name != wheel.name:
                problems.append(f"the rebuild is {rebuilt.name}, the lock's {wheel.name}")
            else:
                problems += [
                    f"{wheel.name} differs from its rebuild: {d}" for d in differences(wheel, rebuilt)
                ]
    return problems


def write_lock(release_repo: Path, commit: str, extras: str) -> None:
    target = release_repo / LOCK_DIR
    for name in PROJECTS:
        for old in target.glob(f"{name}-*.whl"):
            old.unlink()
    wheels = {name: build_wheel(commit, target, name) for name in PROJECTS}
    client, loopback = wheels["hubrelease"], wheels["hubrelease_loopback"]
    with tempfile.TemporaryDirectory(prefix="ci-lock-") as tmp:
        # Both by URL, so the loopback wheel's requirement on hubrelease is the client's wheel here.
        specs = [
            f"hubrelease{f'[{extras}]' if extras else ''} @ {client.resolve().as_uri()}",
            f"hubrelease-loopback @ {loopback.resolve().as_uri()}",
        ]
        pip("download", "--quiet", "--only-binary", ":all:", *PLATFORM, "--dest", tmp, *specs)
        lines = []
        for path in sorted(Path(tmp).glob("*.whl"), key=lambda p: p.name.lower()):
            name, version = path.name.split("-")[:2]
            if name.lower() not in PROJECTS:
                lines.append(f"{name.replace('_', '-').lower()}=={version} --hash=sha256:{sha256(path)}")
    suffix = f"[{extras}]" if extras else ""
    lines.append(f"./{(LOCK_DIR / client.name).as_posix()}{suffix} --hash=sha256:{sha256(client)}")
    lines.append(f"./{(LOCK_DIR / loopback.name).as_posix()} --hash=sha256:{sha256(loopback)}")
    header = (
        "# Written by hubrelease's scripts/ci_lock.py: hubrelease and its loopback Hub (the wheels beside\n"
        "# this file, built reproducibly from the commit their version names) and every dependency,\n"
        "# pinned by sha256, for Linux x86_64 / CPython 3.11. Install with\n"
        "# pip install --require-hashes --only-binary :all: -r .github/hubrelease/requirements.txt\n"
        "# Check the wheels: python scripts/ci_lock.py THIS_REPO --check (from a hubrelease checkout)\n"
    )
    (target / "requirements.txt").write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{target / 'requirements.txt'}: {len(lines)} pinned files, {client.name}, {loopback.name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release_repo", type=Path)
    parser.add_argument(
        "--extras", default="sign,bom", help="hubrelease extras to lock (the example workflow uses sign, bom)"
    )
    parser.add_argument("--commit", default="HEAD", help="the hubrelease commit to build (default HEAD)")
    parser.add_argument("--check", action="store_true", help="rebuild the committed wheel and compare")
    options = parser.parse_args()
    if not options.check:
        write_lock(options.release_repo, options.commit, options.extras)
        return
    target = options.release_repo / LOCK_DIR
    if not (target / "requirements.txt").is_file():
        fail(f"{target / 'requirements.txt'}: no lock to check")
    problems = check(target)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        raise SystemExit(1)
    print(f"{target / 'requirements.txt'}: every line pinned by sha256; each wheel rebuilds byte for byte")


if __name__ == "__main__":
    main()
