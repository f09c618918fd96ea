#!/usr/bin/env bash
# The main job on the built-in example release, offline and without a token.
# Works on a copy of manifests/example/ in a temporary folder; prints each command it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${HUBRELEASE_VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null
"$VENV/bin/python" -m pip install --quiet -e . >"$VENV/hubrelease-install.log" 2>&1 || { cat "$VENV/hubrelease-install.log"; exit 1; }
export PATH="$VENV/bin:$PATH" HF_HUB_DISABLE_XET=1

work=$(mktemp -d "${TMPDIR:-/tmp}/hubrelease-demo.XXXXXX")
cp -R manifests/example "$work/example"
release="$work/example"
run() { printf '\n$ %s\n' "$*"; "$@"; }

run hubrelease verify "$release/hubrelease.yaml"
run hubrelease checksums "$release/hubrelease.yaml" --out "$release/SHA256SUMS"
(cd "$release" && run sha256sum -c SHA256SUMS)
rm "$release/SHA256SUMS"
printf '\ndemo release left in %s\n' "$release"
