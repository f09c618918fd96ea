"""``python scripts/deps_matrix.py PACKAGE oldest|newest``: print ``PACKAGE==VERSION``, the oldest or
newest release on the index that hubrelease's requirement for PACKAGE allows (for deps_matrix.sh); the
requirement is read from the installed project's metadata, i.e. from pyproject.toml."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import requires

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version


def allowed_end(package: str, end: str) -> str:
    [requirement] = [
        r
        for r in map(Requirement, requires("hubrelease") or [])
        if canonicalize_name(r.name) == canonicalize_name(package) and r.marker is None
    ]
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", package],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(r"^Available versions: (.+)$", listing, flags=re.M)
    if found is None:
        raise SystemExit(f"deps_matrix: pip lists no versions of {package}")
    versions = sorted(v for v in map(Version, found.group(1).split(", ")) if v in requirement.specifier)
    if not versions:
        raise SystemExit(f"deps_matrix: no release of {package} matches {requirement.specifier}")
    return f"{package}=={versions[0] if end == 'oldest' else versions[-1]}"


if __name__ == "__main__":
    print(allowed_end(sys.argv[1], sys.argv[2]))
