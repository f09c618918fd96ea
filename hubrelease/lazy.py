"""Lazy package exports (PEP 562): a package names what it offers; each submodule loads on first use.

A warm ``verify`` needs two of ``hashing``'s four modules; importing the others (the checksum-file
regexes, hashlib, the thread pool) on every run cost more than its per-file work did
(bench/startup_bench.py). The package keeps ``if TYPE_CHECKING:`` imports of the same names for mypy.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def exports(package: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``names`` maps each export to its submodule.

    An export may not share its submodule's name (``card.render.render``): importing the submodule sets
    the package attribute to the module, so the export would name the module from then on.
    """
    clash = set(names) & set(names.values())
    if clash:
        raise ValueError(f"{package}: exports named like their submodule: {sorted(clash)}")

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        qualified = f"{package}.{module}"
        __import__(qualified)  # not importlib.import_module: `python -X importtime` does not see those
        value = getattr(sys.modules[qualified], name)
        setattr(sys.modules[package], name, value)  # later lookups are plain attribute reads
        return value

    return __getattr__
