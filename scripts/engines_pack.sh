#!/usr/bin/env bash
# The source pack scripts/engines_device.sh builds from, for a machine without network: trimmed source
# tarballs of both llama-servers in .device/ (ignored), each under 10 MB.
#   .device/mainline-src.tar.gz  llama.cpp 0c1e57098 as the llama-cpp-python 0.3.36 sdist vendors it
#                                (the sdist conformance.sh downloads into $CACHE/engines/src)
#   .device/ik-src.tar.gz        ik_llama.cpp from a local git directory: IK_LLAMA_GIT (a clone or bare
#                                mirror) at IK_LLAMA_REF (default HEAD)
#   .device/PACK                 what was packed (commits, sizes)
# Dropped from both (the CPU llama-server target reads none of it): docs, models, tests, benchmarks,
# media, CI files, the Python converters, the web UI's sources (the server embeds its prebuilt pages,
# or none: mainline's UI is left unbuilt, LLAMA_USE_PREBUILT_UI=OFF in scripts/_engines.sh) and every
# ggml backend but the CPU one (each is added only when its GGML_<BACKEND> option is on).
#
# Usage: IK_LLAMA_GIT=/path/to/ik_llama.cpp.git bash scripts/engines_pack.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_engines.sh
CACHE=${CONFORMANCE_CACHE:-$HOME/.cache/hubrelease}
SDIST=$CACHE/engines/src/llama_cpp_python-0.3.36.tar.gz
: "${IK_LLAMA_GIT:?set IK_LLAMA_GIT to an ik_llama.cpp git directory (clone or bare mirror)}"
LIMIT=$((10 * 1024 * 1024))
mkdir -p .device
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if [ ! -f "$SDIST" ]; then
  mkdir -p "$(dirname "$SDIST")"
  python3 -m pip download --quiet --no-deps --no-binary :all: llama-cpp-python==0.3.36 -d "$(dirname "$SDIST")"
fi

# Paths under the source root that are dropped (globs); ggml/src/ggml-* backends are handled apart.
COMMON_DROP=(docs models tests benches media ci .github .devops gguf-py requirements 'convert_*.py'
  'github-data' 'examples/llama.android' 'examples/llama.swiftui' 'examples/server/webui'
  'examples/server/tests' 'examples/server/themes' 'tools/server/tests' 'tools/server/webui' 'tools/ui/src'
  'tools/ui/tests' 'tools/ui/package-lock.json' 'ggml/src/vulkan-shaders' 'ggml/src/ggml-metal.metal'
  'ggml/src/ggml-vulkan.cpp' 'ggml/src/ggml-sycl' 'ggml/src/ggml-cuda' 'ggml/src/ggml-cuda.cu')

# trim ROOT: drop COMMON_DROP and every non-CPU backend folder (ggml/src/ggml-NAME/, NAME != cpu).
trim() {
  local root=$1 path
  for path in "${COMMON_DROP[@]}"; do
    # shellcheck disable=SC2086  # the entries are globs
    (cd "$root" && rm -rf $path)
  done
  for path in "$root"/ggml/src/ggml-*/; do
    case $(basename "$path") in ggml-cpu) ;; *) rm -rf "$path" ;; esac
  done
}

# pack NAME ROOT: .device/NAME-src.tar.gz of ROOT's contents, refused over LIMIT.
pack() {
  local name=$1 root=$2 size
  tar -czf ".device/$name-src.tar.gz" -C "$root" .
  size=$(stat -c %s ".device/$name-src.tar.gz")
  if [ "$size" -gt "$LIMIT" ]; then
    echo "error: .device/$name-src.tar.gz is $size bytes, over $LIMIT" >&2
    exit 1
  fi
  echo "$name-src.tar.gz $size bytes" >>.device/PACK
}

: >.device/PACK
mkdir -p "$scratch/mainline"
tar -xzf "$SDIST" -C "$scratch"
mv "$scratch"/llama_cpp_python-0.3.36/vendor/llama.cpp/* "$scratch/mainline/"
trim "$scratch/mainline"
echo "mainline llama.cpp 0c1e57098 (llama-cpp-python 0.3.36 sdist, sha256 $(sha256sum "$SDIST" | cut -c1-16))" >>.device/PACK
pack mainline "$scratch/mainline"

ik_commit=$(git --git-dir="$IK_LLAMA_GIT" rev-parse "${IK_LLAMA_REF:-HEAD}^{commit}")
mkdir -p "$scratch/ik"
git_tree_tar "$IK_LLAMA_GIT" "$ik_commit" | tar -x -C "$scratch/ik"
trim "$scratch/ik"
echo "$ik_commit" >"$scratch/ik/IK_COMMIT"
echo "ik_llama.cpp $ik_commit" >>.device/PACK
pack ik "$scratch/ik"
cat .device/PACK
