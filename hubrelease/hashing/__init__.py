"""What to hash (``pool``) is separate from how (``digest``); the stat cache skips unchanged files.

Exports load lazily (``hubrelease.lazy``): a warm verify imports neither hashlib nor the pool.
"""

from typing import TYPE_CHECKING

from hubrelease.lazy import exports

if TYPE_CHECKING:
    from hubrelease.hashing.digest import sha256_file
    from hubrelease.hashing.pool import HashJob, HashResult, default_jobs, hash_files
    from hubrelease.hashing.statcache import StatCache, StatKey
    from hubrelease.hashing.sumfile import SumEntry, format_sums, looks_like_sums, parse_sums

__all__ = [
    "HashJob",
    "HashResult",
    "StatCache",
    "StatKey",
    "SumEntry",
    "default_jobs",
    "format_sums",
    "hash_files",
    "looks_like_sums",
    "parse_sums",
    "sha256_file",
]

__getattr__ = exports(
    __name__,
    {
        "sha256_file": "digest",
        "HashJob": "pool",
        "HashResult": "pool",
        "default_jobs": "pool",
        "hash_files": "pool",
        "StatCache": "statcache",
        "StatKey": "statcache",
        "SumEntry": "sumfile",
        "format_sums": "sumfile",
        "looks_like_sums": "sumfile",
        "parse_sums": "sumfile",
    },
)
