#!/usr/bin/env bash
# The dependency matrix: run the whole gate (scripts/check.sh) with each dependency we reach into
# beyond its documented API at the OLDEST and at the NEWEST version pyproject.toml allows.
# Those are typer (cli/params.py converts values on the TyperOption/TyperArgument objects typer builds,
# with typer 0.29's messages), huggingface_hub (hub/bounds.py builds on its unexported default_client_factory; the
# widest surface we use) and httpx2/httpcore2 (hub/bounds.py puts a deadline on every socket read
# through their transports' and connection pools' private attributes).
#
# Usage: bash scripts/deps_matrix.sh [oldest|newest ...] [-- extra pytest args]
# Each end gets its own virtualenv (HUBRELEASE_DEPS_DIR, default ~/.cache/hubrelease/deps-matrix)
# and prints "deps-matrix END: PKG==VERSION ... -> ok|FAILED"; the exit code is 1 if any end failed.
# Versions come from the package index through pip (`pip index versions`), filtered by the
# specifier in pyproject.toml; record a run's outcome in bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGES=(typer huggingface_hub httpx2 httpcore2)
ENDS=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do ENDS+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#ENDS[@]} -eq 0 ] && ENDS=(oldest newest)
ROOT=${HUBRELEASE_DEPS_DIR:-$HOME/.cache/hubrelease/deps-matrix}
status=0
for end in "${ENDS[@]}"; do
  venv="$ROOT/$end"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  HUBRELEASE_VENV="$venv" bash -c '. scripts/_venv.sh "[dev]"'
  pins=()
  for package in "${PACKAGES[@]}"; do
    pins+=("$("$venv/bin/python" scripts/deps_matrix.py "$package" "$end")")
  done
  "$venv/bin/python" -m pip install --quiet "${pins[@]}"
  if HUBRELEASE_VENV="$venv" bash scripts/check.sh "$@"; then
    echo "deps-matrix $end: ${pins[*]} -> ok"
  else
    echo "deps-matrix $end: ${pins[*]} -> FAILED"
    status=1
  fi
done
exit $status
