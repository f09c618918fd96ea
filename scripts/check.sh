#!/usr/bin/env bash
# The test command: set up a virtualenv (once), then lint, type-check, check the import contracts
# (pyproject [tool.importlinter]) and run the test suite.
# Usage: bash scripts/check.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh "[dev]"
ruff check .
ruff format --check .
mypy
lint-imports --no-cache
python -m pytest -q "$@"
