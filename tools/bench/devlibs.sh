#!/usr/bin/env bash
# Before carrying build/ to a lent GPU machine: copy the shared libraries that
# the unit tests (Criterion) and ember-top (ncurses) need and the GPU image
# lacks into build/devlibs; device-run.sh puts that folder on LD_LIBRARY_PATH.
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
mkdir -p "$build/devlibs"
for bin in "$build"/bin/test_* "$build/bin/ember-top"; do
  [ -x "$bin" ] || continue
  ldd "$bin" | awk '/=>/ {print $3}' | grep -vE '/(libc|libm|libpthread|libdl|ld-linux)[.-]' |
    while read -r lib; do cp -L "$lib" "$build/devlibs/"; done
done
echo "devlibs: $(ls "$build/devlibs" | wc -l) libraries in $build/devlibs"
