#!/usr/bin/env bash
# The test command under load: a fresh clone of HEAD runs `bash scripts/check.sh` RUNS times in a row
# (default 3) while BUSY processes (default: one per core) spin, as a CI runner shared with another job
# would. Prints each run's exit code and wall time (the first includes creating the virtualenv);
# record them in bench/RESULTS.md. Usage: bash scripts/loaded_check.sh [FOLDER]   (default: a temp dir)
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$(mktemp -d)}
git clone -q "$repo" "$dir/clone" || exit 2
cd "$dir/clone" || exit 2
echo "loaded-check: $(git rev-parse --short HEAD), $(nproc) cores, ${BUSY:-$(nproc)} busy loops, logs in $dir"
busy=()
for _ in $(seq 1 "${BUSY:-$(nproc)}"); do
  python3 -c 'while 1: pass' &
  busy+=($!)
done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT
status=0
for run in $(seq 1 "${RUNS:-3}"); do
  start=$(date +%s)
  bash scripts/check.sh -p no:cacheprovider >"$dir/run$run.log" 2>&1
  code=$?
  [ $code -eq 0 ] || status=1
  echo "run $run: exit $code in $(($(date +%s) - start)) s: $(tail -1 "$dir/run$run.log")"
done
exit $status
