#!/usr/bin/env bash
# The test command: set up a virtualenv (once), then lint, type-check and run the test suite.
# Usage: bash scripts/check.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${HUBRELEASE_VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null
"$VENV/bin/python" -m pip install --quiet -e ".[dev]" >"$VENV/hubrelease-install.log" 2>&1 || { cat "$VENV/hubrelease-install.log"; exit 1; }
export HF_HUB_DISABLE_XET=1 HF_HUB_DISABLE_TELEMETRY=1
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
"$VENV/bin/mypy"
"$VENV/bin/python" -m pytest -q "$@"
