#!/usr/bin/env bash
# Sourced by demo.sh and test.sh: install what is missing, then build.
# Needs the CUDA toolkit (headers and stub libcuda), which CMake finds itself.
set -euo pipefail
EMBER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EMBER_BUILD=${EMBER_BUILD:-$EMBER_ROOT/build}

ember_install_deps() {
  local need=()
  command -v cmake >/dev/null || need+=(cmake)
  command -v cc >/dev/null || need+=(gcc)
  command -v g++ >/dev/null || need+=(g++)   # nvcc's host compiler, for the CUDA test programs
  command -v pkg-config >/dev/null || need+=(pkg-config)
  pkg-config --exists criterion 2>/dev/null || need+=(libcriterion-dev)
  pkg-config --exists libelf 2>/dev/null || need+=(libelf-dev)
  pkg-config --exists ncurses 2>/dev/null || need+=(libncurses-dev)
  pkg-config --exists zlib 2>/dev/null || need+=(zlib1g-dev)
  if [ ${#need[@]} -gt 0 ]; then
    echo "ember: installing ${need[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
  fi
}

# EMBER_SANITIZE=address,undefined builds everything with those sanitizers (CI runs the suite so too).
ember_build() {
  local flags=()
  if [ -n "${EMBER_SANITIZE:-}" ]; then
    local f="-fsanitize=$EMBER_SANITIZE -fno-omit-frame-pointer -fno-sanitize-recover=all"
    # and the lock order checked at every lock (shim/abi/locks.h)
    flags=(-DCMAKE_C_FLAGS="$f" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$EMBER_SANITIZE"
           -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=$EMBER_SANITIZE" -DEMBER_LOCK_CHECK=ON)
    # the generator and the library keep their tables until exit by design: leaks are not errors here
    # ember-run preloads the (instrumented) library ahead of the program's own runtime: allowed here
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:verify_asan_link_order=0}
  fi
  echo "ember: building in $EMBER_BUILD${EMBER_SANITIZE:+ with -fsanitize=$EMBER_SANITIZE}"
  mkdir -p "$EMBER_BUILD"
  local log="$EMBER_BUILD/build.log"
  if ! cmake -S "$EMBER_ROOT" -B "$EMBER_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${flags[@]}" >"$log" 2>&1 ||
     ! cmake --build "$EMBER_BUILD" -j "$(nproc)" 2>&1 | tee -a "$log" | ember_progress; then
    echo "ember: the build failed; the end of $log:" >&2
    tail -n 40 "$log" >&2
    return 1
  fi
}

# The build's progress from CMake's "[ 42%]" lines: a line each tenth, so a
# first build (minutes on two cores) shows it is moving, in a terminal and a CI log alike.
ember_progress() {
  awk '/^\[ *[0-9]+%\]/ { p = substr($0, 2, index($0, "%") - 2) + 0; if (int(p / 10) > shown) {
         shown = int(p / 10); printf "ember: building, %d%%\n", p; fflush() } }
       BEGIN { shown = -1 }'
}

# EMBER_PREBUILT=1: use the build as it is (a GPU machine that got it carried over).
if [ "${EMBER_PREBUILT:-0}" != 1 ]; then
  ember_install_deps
  ember_build
fi
