#!/usr/bin/env bash
# The browser tier: the example's and both seed releases' pages, as `hubrelease preview` serves
# them, loaded in Debian's chromium driven by playwright (browser/). Installs what it needs:
# chromium from Debian's packages when /usr/bin/chromium is missing (apt-get, as root or with sudo; it
# prints how long that took), playwright from PyPI into the venv ([browser] extra). playwright never
# downloads a browser of its own here. Screenshots: $HUBRELEASE_BROWSER_ARTIFACTS (browser/artifacts).
# Usage: bash scripts/browser.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh "[dev,browser]"
if [ ! -x "${HUBRELEASE_CHROMIUM:-/usr/bin/chromium}" ]; then
  start=$(date +%s)
  sudo=$([ "$(id -u)" = 0 ] || echo sudo)
  $sudo apt-get update -q >/dev/null
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/dev/null
  echo "browser tier: installed $(chromium --version 2>/dev/null) in $(($(date +%s) - start)) s"
fi
python -m pytest -q -p no:cacheprovider browser "$@"
