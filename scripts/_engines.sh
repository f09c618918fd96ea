# Sourced by scripts/conformance.sh, scripts/engines_pack.sh and scripts/engines_device.sh: how the two
# llama-servers (mainline llama.cpp, ik_llama.cpp) are unpacked and built CPU-only, the same way everywhere.

# git_tree_tar GIT_DIR COMMIT: the commit's tree as a tar on stdout. Blobs the repository does not hold
# are left out, named on stderr: a partial mirror keeps no large web-UI sources or vocab GGUFs
# (ik_llama.cpp 8337e4cd: examples/server/public_llamacpp/index_llamacpp.html, models/ggml-vocab-*.gguf),
# and `git archive` stops at the first one; the llama-server target reads none of them.
git_tree_tar() {
  local git=$1 commit=$2 missing
  local -a exclude=()
  missing=$(git --git-dir="$git" ls-tree -r "$commit" | awk '$2 == "blob" { print $3 }' |
    git --git-dir="$git" cat-file --batch-check | awk '$2 == "missing" { print $1 }')
  if [ -n "$missing" ]; then
    mapfile -t exclude < <(git --git-dir="$git" ls-tree -r "$commit" | awk -v m="$missing" '
      BEGIN { n = split(m, ids, "\n"); for (i = 1; i <= n; i++) gone[ids[i]] = 1 }
      $2 == "blob" && ($3 in gone) { sub(/^[^\t]*\t/, ""); print ":(exclude)" $0 }')
    printf 'left out (not in the repository): %s\n' "${exclude[@]#:(exclude)}" >&2
  fi
  git --git-dir="$git" archive "$commit" -- . "${exclude[@]}"
}

# build_llama_server SRC LOG JOBS [CMAKE-ARGS...]: configure SRC/build (CPU only, native, no tests, no
# libcurl) and build the llama-server target alone; LOG-configure.log and LOG-build.log keep the output.
build_llama_server() {
  local src=$1 log=$2 jobs=$3
  shift 3
  cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF "$@" >"$log-configure.log" 2>&1 || {
    tail -20 "$log-configure.log" >&2
    return 1
  }
  nice -n 10 cmake --build "$src/build" --target llama-server -j "$jobs" >"$log-build.log" 2>&1 || {
    tail -20 "$log-build.log" >&2
    return 1
  }
}

# Configure arguments per engine. Mainline's server is a tool (LLAMA_BUILD_TOOLS), its examples are not
# needed; ik's server is one of its examples (examples/server, LLAMA_BUILD_SERVER).
MAINLINE_CMAKE_ARGS=(-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF)
IK_CMAKE_ARGS=()
