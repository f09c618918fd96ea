"""What to hash (``pool``) is separate from how (``digest``); the stat cache skips unchanged files."""

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
