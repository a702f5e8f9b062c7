#!/usr/bin/env bash
# Before carrying build/ to a lent GPU machine: copy the shared libraries that
# the unit tests (Criterion), Ember's programs (ncurses, libelf) and its
# libraries need and the GPU image lacks into build/devlibs; device-run.sh
# puts that folder on LD_LIBRARY_PATH. The C and C++ runtimes stay the
# image's own: PyTorch there needs its libstdc++.
set -euo pipefail
build=${1:-$(cd "$(dirname "$0")/../.." && pwd)/build}
mkdir -p "$build/devlibs"
for bin in "$build"/bin/test_* "$build"/bin/ember-* "$build"/lib/*.so; do
  [ -x "$bin" ] || continue
  { ldd "$bin" 2>/dev/null || true; } | awk '/=> \// {print $3}' | { grep -vE '/(libc|libm|libpthread|libdl|ld-linux|libcuda|libstdc\+\+|libgcc_s)[.-]' || true; } |
    while read -r lib; do cp -L "$lib" "$build/devlibs/"; done
done
echo "devlibs: $(ls "$build/devlibs" | wc -l) libraries in $build/devlibs"
