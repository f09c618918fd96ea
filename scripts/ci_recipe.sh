#!/usr/bin/env bash
# The CI rehearsal: the example workflow's jobs, each in a fresh venv from the lock, through six scenarios
# (scripts/ci_recipe.py). Every job installs the whole hash-pinned lock, so minutes: not in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh "[dev]"
python scripts/ci_recipe.py
