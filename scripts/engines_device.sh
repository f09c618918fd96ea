#!/usr/bin/env bash
# Both llama-servers on a many-core machine without network: build them from the source pack
# (scripts/engines_pack.sh wrote .device/mainline-src.tar.gz and .device/ik-src.tar.gz), then run
# conformance/engines_device.py: a loopback Hub with the example and the seed-shaped releases,
# `hubrelease pull` for llama.cpp and ik, each llama-server started with the command pull prints
# (mainline also with -hf/-hfd against the Hub), draft_n / draft_n_accepted and timings recorded in
# $OUT/engines-device.{json,md}.
#
# Needs: cmake, ninja, gcc, Python 3 with our wheels in .whl/ (hubrelease, hubrelease-loopback and
# their dependencies; installed below with --no-index --no-deps into /tmp/site unless it exists). The
# run step imports (measured): huggingface_hub, hf_xet, httpx2, httpcore2, h11, anyio, idna, truststore,
# filelock, tqdm, packaging, pydantic, pydantic_core, annotated_types, typing_inspection,
# typing_extensions, typer, annotated_doc, shellingham, rich, markdown_it, mdurl, safetensors, gguf,
# numpy, tokenizers, jinja2, markupsafe, ruamel.yaml, pyyaml, pathspec, nh3, blake3, lz4, matplotlib
# (with pillow, fonttools, kiwisolver, cycler, pyparsing, python-dateutil): render-card draws the
# seeds' charts. Not datasets or pyarrow.
#
# Usage: bash scripts/engines_device.sh [build|run|all]   (default all)
#   build: unpack and build both servers into .device-build (ignored, and apart from the carried .device/:
#          kept between calls on a warm machine, so a later call resumes or skips it); ninja -j$JOBS
#          (default: all cores), both at once
#   run:   the Hub, the pulls and the servers (results in $OUT, default .device/out)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=scripts/_engines.sh
. scripts/_engines.sh
step=${1:-all}
OUT=${OUT:-$ROOT/.device/out}
BUILD=${ENGINES_BUILD:-$ROOT/.device-build}
JOBS=${JOBS:-$(nproc)}
log() { printf '[engines-device] %s\n' "$*" >&2; }

# build_one NAME EXTRA-CMAKE-ARGS...: .device/NAME-src.tar.gz unpacked into $BUILD/NAME and built once.
build_one() {
  local name=$1 src=$BUILD/$1
  shift
  if [ -x "$src/build/bin/llama-server" ]; then
    log "$name: $src/build/bin/llama-server is there"
    return
  fi
  if [ ! -f "$src/CMakeLists.txt" ]; then # a build a call's time limit cut short goes on where it stopped
    mkdir -p "$src"
    tar -xzf "$ROOT/.device/$name-src.tar.gz" -C "$src"
  fi
  log "$name: building llama-server with ninja -j$JOBS (log: $BUILD/$name-build.log)"
  build_llama_server "$src" "$BUILD/$name" "$JOBS" -G Ninja "$@"
}

if [ "$step" = build ] || [ "$step" = all ]; then
  mkdir -p "$BUILD"
  start=$SECONDS
  build_one mainline "${MAINLINE_CMAKE_ARGS[@]}" &
  mainline_pid=$!
  build_one ik "${IK_CMAKE_ARGS[@]}" &
  ik_pid=$!
  wait "$mainline_pid"
  wait "$ik_pid"
  log "both built in $((SECONDS - start)) s"
fi

if [ "$step" = run ] || [ "$step" = all ]; then
  if [ ! -d /tmp/site ]; then
    python3 -m pip install --quiet --no-index --no-deps --target /tmp/site "$ROOT"/.whl/*.whl
  fi
  export PYTHONPATH=/tmp/site:$ROOT${PYTHONPATH:+:$PYTHONPATH}
  start=$SECONDS
  python3 -m conformance.engines_device --mainline "$BUILD/mainline/build/bin/llama-server" \
    --ik "$BUILD/ik/build/bin/llama-server" --out "$OUT"
  log "run took $((SECONDS - start)) s"
fi
