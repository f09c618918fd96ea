#!/usr/bin/env bash
# The CI recipe's tier: the example workflow's steps, as written, in a scratch release repository
# (scripts/ci_recipe.py). Downloads and installs the whole hash-pinned lock, so minutes: not in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh "[dev]"
python scripts/ci_recipe.py
