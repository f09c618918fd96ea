#!/usr/bin/env bash
# The conformance tier: run the example release and the test factories' drafters through the real
# consumers (SGLang, z-lab DFlashDraftModel, llama.cpp mainline, ik_llama.cpp, the engines' converters).
# Not part of scripts/check.sh: a first run installs ~4 GB (two venvs) and builds llama.cpp (tens of minutes on
# 2 cores); everything is cached under $CACHE, so a re-run takes seconds plus the checks themselves.
#
# Usage: bash scripts/conformance.sh [--only CONSUMER,...] [--results conformance/RESULTS.md]
#
# Consumers that come from a package registry are installed or built here:
#   SGLang 0.5.23 (PyPI wheel, CPU: --no-deps plus what the imported modules need, torch 2.13.0 CPU)
#   speculators 0.9.0 (PyPI, torch 2.13.0 CPU; loads hubrelease's speculators drafters, runs its converter)
#   llama.cpp mainline 0c1e57098: the llama-cpp-python 0.3.36 sdist (PyPI) vendors it; built CPU-only
#   (the sdist also carries convert_hf_to_gguf.py and gguf-py). Its CMakeLists.txt:195 ignores LLAMA_CURL:
#   downloads (-hf) go through cpp-httplib, plain http included, so the `hf` step's `llama-server -hf`
#   reaches the loopback Hub with this build (common/http.h:100, common/hf-cache.cpp)
# Consumers that only exist as public repositories are not fetched by this script; point it at your own
# checkout/build, or the consumer is reported "not run":
#   IK_LLAMA_GIT=/path/to/ik_llama.cpp.git  a clone or bare mirror: its IK_LLAMA_REF (default HEAD) is
#                                           archived into $CACHE/engines/ik-COMMIT and llama-server built
#                                           there CPU-only, once (tens of minutes on 2 cores)
#   IK_LLAMA_SERVER=/path/to/ik_llama.cpp/build/bin/llama-server   (or your own ik_llama.cpp CPU build)
#   IK_LLAMA_SRC=/path/to/ik_llama.cpp                              (its convert_hf_to_gguf.py + gguf-py)
#   ZLAB_DFLASH_SRC=/path/to/z-lab/dflash                           (the dflash package: dflash/model.py)
# IK_LLAMA_COMMIT / ZLAB_DFLASH_COMMIT / LLAMA_COMMIT: the commits to record in RESULTS.md.
# LLAMA_SERVER / LLAMA_SRC override the mainline build. CONFORMANCE_CACHE moves the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${CONFORMANCE_CACHE:-$HOME/.cache/hubrelease}
ENGINES=$CACHE/engines
mkdir -p "$ENGINES"
# Never let a dependency replace the CPU torch with a CUDA build (/etc/xdg/pip holds this machine's cap).
# torch==2.13.0 resolves to the CPU wheel this machine keeps in pip's find-links (/opt/wheels); elsewhere
# point PIP_FIND_LINKS at a CPU wheel of torch 2.13.0 first, or PyPI's CUDA build is installed.
CONSTRAINTS=$CACHE/conformance-constraints.txt
echo "torch==2.13.0" >"$CONSTRAINTS"
export PIP_CONSTRAINT="$CONSTRAINTS${PIP_CONSTRAINT:+ $PIP_CONSTRAINT}"
[ -f /etc/xdg/pip/constraints.txt ] && PIP_CONSTRAINT="$PIP_CONSTRAINT /etc/xdg/pip/constraints.txt"

log() { printf '[conformance] %s\n' "$*" >&2; }
# shellcheck source=scripts/_engines.sh
. scripts/_engines.sh

# venv DIR STAMP PIP-ARGS...: create DIR once and install; STAMP records what was installed, so a
# re-run with the same package list installs nothing.
venv() {
  local dir=$1 stamp=$2
  shift 2
  if [ -f "$dir/.conformance-stamp" ] && [ "$(cat "$dir/.conformance-stamp")" = "$stamp" ]; then
    return
  fi
  log "installing into $dir (log: $dir.log)"
  [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --upgrade pip >"$dir.log" 2>&1
  "$dir/bin/python" -m pip install --quiet torch==2.13.0 >>"$dir.log" 2>&1
  local group
  for group in "$@"; do
    # shellcheck disable=SC2086  # each group is a pip argument list
    "$dir/bin/python" -m pip install --quiet $group >>"$dir.log" 2>&1 || {
      tail -20 "$dir.log"
      exit 1
    }
  done
  echo "$stamp" >"$dir/.conformance-stamp"
}

# SGLang: its wheel pins a CUDA stack (flashinfer, sgl-kernel, torch 2.14.1 ...), so it goes in with
# --no-deps, followed by exactly what `import sglang.srt.models.dflash` and its weight loader import
# on the CPU engine (SGLANG_USE_CPU_ENGINE=1).
SGLANG_VENV=$CACHE/conformance-venv
SGLANG_DEPS="transformers==5.19.0 tokenizers==0.23.2 safetensors msgspec orjson psutil pybase64 requests triton
  apache-tvm-ffi==0.1.11 pillow starlette pyzmq ipython aiohttp dill sentencepiece==0.2.1 gguf einops
  openai==2.8.0 partial_json_parser numpy loguru"
venv "$SGLANG_VENV" "sglang==0.5.23 $SGLANG_DEPS compressed-tensors==0.18.0" \
  "--no-deps sglang==0.5.23" "$SGLANG_DEPS" "--no-deps compressed-tensors==0.18.0"

# z-lab's model is written against transformers 4.57.1 (its pyproject's [transformers] extra).
ZLAB_VENV=$CACHE/conformance-zlab-venv
venv "$ZLAB_VENV" "transformers==4.57.1 safetensors numpy" "transformers==4.57.1 safetensors numpy"

# speculators 0.9.0 (vLLM's speculator format): its own config, model classes and DFlash converter.
# It declares torchvision and torchaudio; PyPI's builds of them for torch 2.13 are CUDA builds whose
# ops do not load against the CPU torch ("operator torchvision::nms does not exist", and transformers
# then cannot import PreTrainedModel), and nothing speculators' DFlash model, config and converter
# import uses them, so they are removed after the install.
SPECULATORS_VENV=$CACHE/conformance-speculators-venv
venv "$SPECULATORS_VENV" "speculators==0.9.0 -torchvision -torchaudio" "speculators==0.9.0"
if "$SPECULATORS_VENV/bin/python" -m pip show --quiet torchvision torchaudio >/dev/null 2>&1; then
  "$SPECULATORS_VENV/bin/python" -m pip uninstall --quiet --yes torchvision torchaudio >>"$SPECULATORS_VENV.log" 2>&1
fi

# The converters need torch, transformers and the tokenizer libraries; the SGLang venv has them.
CONVERT_PYTHON=$SGLANG_VENV/bin/python

# llama.cpp mainline from the llama-cpp-python 0.3.36 sdist (PyPI).
MAINLINE=$ENGINES/mainline-0.3.36
if [ -z "${LLAMA_SRC:-}" ]; then
  LLAMA_SRC=$MAINLINE/vendor/llama.cpp
  if [ ! -f "$LLAMA_SRC/CMakeLists.txt" ]; then
    log "downloading the llama-cpp-python 0.3.36 sdist"
    mkdir -p "$ENGINES/src"
    python3 -m pip download --quiet --no-deps --no-binary :all: llama-cpp-python==0.3.36 -d "$ENGINES/src"
    rm -rf "$MAINLINE" && mkdir -p "$MAINLINE"
    tar -xzf "$ENGINES/src/llama_cpp_python-0.3.36.tar.gz" -C "$MAINLINE" --strip-components=1
  fi
fi
if [ -z "${LLAMA_SERVER:-}" ]; then
  LLAMA_SERVER=$LLAMA_SRC/build/bin/llama-server
  if [ ! -x "$LLAMA_SERVER" ]; then
    log "building llama-server (CPU) in $LLAMA_SRC/build (log: $ENGINES/mainline-build.log)"
    build_llama_server "$LLAMA_SRC" "$ENGINES/mainline" "$(nproc)" "${MAINLINE_CMAKE_ARGS[@]}"
  fi
fi

# ik_llama.cpp from a local git directory (IK_LLAMA_GIT), when no IK_LLAMA_SERVER is given.
if [ -z "${IK_LLAMA_SERVER:-}" ] && [ -n "${IK_LLAMA_GIT:-}" ]; then
  ik_commit=$(git --git-dir="$IK_LLAMA_GIT" rev-parse "${IK_LLAMA_REF:-HEAD}^{commit}")
  IK_DIR=$ENGINES/ik-${ik_commit:0:8}
  if [ ! -f "$IK_DIR/CMakeLists.txt" ]; then
    log "archiving ik_llama.cpp $ik_commit into $IK_DIR"
    rm -rf "$IK_DIR" && mkdir -p "$IK_DIR"
    git_tree_tar "$IK_LLAMA_GIT" "$ik_commit" | tar -x -C "$IK_DIR"
  fi
  if [ ! -x "$IK_DIR/build/bin/llama-server" ]; then
    log "building ik_llama.cpp llama-server (CPU) in $IK_DIR/build (log: $ENGINES/ik-build.log)"
    build_llama_server "$IK_DIR" "$ENGINES/ik" "$(nproc)" "${IK_CMAKE_ARGS[@]}"
  fi
  IK_LLAMA_SERVER=$IK_DIR/build/bin/llama-server
  : "${IK_LLAMA_SRC:=$IK_DIR}" "${IK_LLAMA_COMMIT:=${ik_commit:0:8}}"
fi

. scripts/_venv.sh ""
export SGLANG_PYTHON=$SGLANG_VENV/bin/python ZLAB_PYTHON=$ZLAB_VENV/bin/python CONVERT_PYTHON
export SPECULATORS_PYTHON=$SPECULATORS_VENV/bin/python
# Builds from an sdist or an archive have no git metadata: record the commits (the sdist's CHANGELOG names it).
[ "$LLAMA_SRC" = "$MAINLINE/vendor/llama.cpp" ] && : "${LLAMA_COMMIT:=0c1e57098 (llama-cpp-python 0.3.36 CHANGELOG)}"
export LLAMA_COMMIT=${LLAMA_COMMIT:-} IK_LLAMA_COMMIT=${IK_LLAMA_COMMIT:-} ZLAB_DFLASH_COMMIT=${ZLAB_DFLASH_COMMIT:-}
export LLAMA_SERVER LLAMA_SRC IK_LLAMA_SERVER=${IK_LLAMA_SERVER:-} IK_LLAMA_SRC=${IK_LLAMA_SRC:-}
export ZLAB_DFLASH_SRC=${ZLAB_DFLASH_SRC:-} CONFORMANCE_WORK=${CONFORMANCE_WORK:-$CACHE/conformance-work}
python -m conformance.run "$@"
