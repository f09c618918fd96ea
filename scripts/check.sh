#!/usr/bin/env bash
# The test command: set up a virtualenv (once), then lint, type-check and run the test suite.
# Usage: bash scripts/check.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh "[dev]"
ruff check .
ruff format --check .
mypy
python -m pytest -q "$@"
