"""Verify a release: observed file facts vs what the manifest pins. Drift is returned, not raised.

Exports load lazily (``hubrelease.lazy``), so ``hubrelease.verify.plan_cache`` costs only what a warm verify uses.
"""

from typing import TYPE_CHECKING

from hubrelease.lazy import exports

if TYPE_CHECKING:
    from hubrelease.verify.compare import ExpectedFile, Observed
    from hubrelease.verify.expected import Expectations, expectations
    from hubrelease.verify.local import VerifyOptions, verify_manifest, verify_sums_file, verify_tree
    from hubrelease.verify.plan_cache import verify_manifest_file

__all__ = [
    "Expectations",
    "ExpectedFile",
    "Observed",
    "VerifyOptions",
    "expectations",
    "verify_manifest",
    "verify_manifest_file",
    "verify_sums_file",
    "verify_tree",
]

__getattr__ = exports(
    __name__,
    {
        "ExpectedFile": "compare",
        "Observed": "compare",
        "Expectations": "expected",
        "expectations": "expected",
        "VerifyOptions": "local",
        "verify_manifest": "local",
        "verify_sums_file": "local",
        "verify_tree": "local",
        "verify_manifest_file": "plan_cache",
    },
)
