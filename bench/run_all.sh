#!/usr/bin/env bash
# Every speed figure of bench/RESULTS.md, side by side with its peers, in one run on one machine.
# Run from the repository root in an environment where `pip install ".[sign]" ./loopback-hub` is done
# (hubrelease, hf, model_signing beside the Python that runs this). Sizes default to a 16-core machine;
# SCALE=small runs the same benches at 2-core sizes. Each bench's output is teed to $LOGDIR (default: bench-logs/).
# Arguments name the benches to run (verify startup sign ingest push push_resume; default: all), so a machine lent
# for ten minutes a call can take them in two calls.
set -uo pipefail
cd "$(dirname "$0")/.."
LOGDIR=${LOGDIR:-bench-logs}
mkdir -p "$LOGDIR"
PY=${PYTHON:-python3}
WANTED=("$@")
machine() {
  echo "date: $(date -u +%FT%TZ)"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) logical CPUs"
  echo "memory: $(free -g | awk '/^Mem:/{print $2}') GiB; python: $($PY -V 2>&1)"
  $PY -m pip list 2>/dev/null | grep -i -E '^(huggingface.hub|hf.xet|typer|model.signing|pydantic) ' | tr -s ' ' | paste -sd';'
  openssl version
}
run() {
  local name=$1
  shift
  if [ ${#WANTED[@]} -gt 0 ] && [[ ! " ${WANTED[*]} " =~ " $name " ]]; then return; fi
  echo "=== $name: $*"
  "$PY" "$@" 2>&1 | tee "$LOGDIR/$name.log"
}
machine | tee "$LOGDIR/machine.log"
if [ "${SCALE:-large}" = small ]; then
  run verify bench/verify_bench.py --big-count 2 --big-gib 0.5 --small 200 --repeat 3
  run startup bench/startup_bench.py --repeat 7 --files 500
  run sign bench/sign_bench.py --repeat 3 --files 500
  run ingest bench/hub_ingest_bench.py --mib 256 --repeat 3
  run push bench/push_bench.py --files 2 --mib 128 --no-resume
  run push_resume bench/push_bench.py --files 12 --mib 32 --no-speed --kill-at 0.5,0.54
else
  run verify bench/verify_bench.py --big-count 16 --big-gib 1 --small 1992 --repeat 2
  run startup bench/startup_bench.py --repeat 15 --files 2000
  run sign bench/sign_bench.py --repeat 3 --files 2008 --big-count 4 --big-gib 4
  run ingest bench/hub_ingest_bench.py --mib 2048 --repeat 3
  run push bench/push_bench.py --files 2 --mib 2048 --runs 3 --no-resume
  run push_resume bench/push_bench.py --files 12 --mib 256 --no-speed --kill-at 0.5,0.54
fi
