# Sourced by check.sh and demo.sh: create the virtualenv once, install hubrelease (extras as "$1",
# e.g. "[dev]") and the loopback Hub, its own distribution in loopback-hub/, into it, and put it
# first on PATH. HUBRELEASE_VENV picks another folder.
VENV=${HUBRELEASE_VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null
"$VENV/bin/python" -m pip install --quiet -e ".${1:-}" -e ./loopback-hub >"$VENV/hubrelease-install.log" 2>&1 || {
  cat "$VENV/hubrelease-install.log"
  exit 1
}
export PATH="$VENV/bin:$PATH" HF_HUB_DISABLE_TELEMETRY=1
