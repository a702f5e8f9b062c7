#!/usr/bin/env bash
# Before a lent GPU machine's call: make what travels with the working tree.
#   build-gpu/  a copy of build/ without objects, archives or logs, its
#               programs and libraries stripped of debug sections, and the
#               libraries the tests need beside them (devlibs.sh); with
#               EMBER_PACK_TESTS=0, for a call that runs no unit tests,
#               without the tests or the libraries only they need
#   .llama/     with LLAMA_BUILD (a llama.cpp build folder, DESIGN.md): its
#               llama-bench stripped and xz-compressed, and llama.cpp's gguf-py
#   build-gpu/lib-NAME.so  for each NAME=REV of EMBER_PACK_LIBS (such as
#               "base=7af7afe"): libember.so built at REV in a worktree of its
#               own and stripped, for device-call.sh's `use NAME`
# Both belong in .git/info/exclude and in the call's carry list. It then
# checks the total against the 64 MiB a call may carry (tracked files,
# untracked files git does not ignore, ../shared and the carried folders).
# On the GPU machine, device-unpack.sh puts them back in place.
#   EMBER_PACK_KEEP="PROG ..."  with EMBER_PACK_TESTS=gpu, these of build/bin kept
#               all the same (such as ember-suite, ember-vmm-host-probe)
#   [EMBER_PACK_LIBS="NAME=REV ..."] [EMBER_PACK_TESTS=0|gpu] [EMBER_PACK_KEEP="PROG ..."] device-pack.sh [LLAMA_BUILD]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ -x build/bin/ember-run ] || { echo "device-pack: no build/ here: run ./tools/test.sh or ./tools/demo.sh first" >&2; exit 1; }
for lib in ${EMBER_PACK_LIBS:-}; do
  [[ $lib =~ ^[a-z0-9-]+=[^=]+$ ]] && git rev-parse -q --verify "${lib#*=}^{commit}" >/dev/null ||
    { echo "device-pack: EMBER_PACK_LIBS takes NAME=REV with REV a commit here, got '$lib'" >&2; exit 1; }
done
rm -rf build-gpu
cp -a build build-gpu
find build-gpu \( -name '*.o' -o -name '*.a' -o -name '*.log' \) -delete
find build-gpu -type d -name CMakeFiles -prune -exec rm -rf {} +
[ "${EMBER_PACK_TESTS:-1}" = 0 ] && rm -f build-gpu/bin/test_* && rm -rf build-gpu/tests
# the GPU tests alone: their ctest files and programs, not the unit tests, probes and benchmarks
[ "${EMBER_PACK_TESTS:-1}" = gpu ] && find build-gpu/bin -maxdepth 1 -type f \( -name 'test_*' -o \
  \( -name 'ember-*-probe' ! -name ember-capture-probe \) -o -name ember-uvm-bench -o -name ember-suite -o \
  -name ember-torture -o -name ember-callbench -o -name ember-launch-overhead -o -name ember-sim-calibrate \) -delete
for keep in ${EMBER_PACK_KEEP:-}; do # programs a GPU-tests pack would leave out, kept all the same
  [ -x "build/bin/$keep" ] || { echo "device-pack: EMBER_PACK_KEEP names $keep, which build/bin lacks" >&2; exit 1; }
  cp "build/bin/$keep" build-gpu/bin/
done
find build-gpu/bin build-gpu/lib -type f -exec strip --strip-debug {} + 2>/dev/null || true
bash tools/bench/devlibs.sh "$root/build-gpu" >/dev/null
for lib in ${EMBER_PACK_LIBS:-}; do
  name=${lib%%=*} rev=${lib#*=}
  wt=$(mktemp -d /tmp/ember-pack-XXXXXX)
  git worktree add -q --detach "$wt" "$rev"
  echo "device-pack: building lib-$name.so at $(git -C "$wt" rev-parse --short HEAD)"
  cmake -S "$wt" -B "$wt/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$wt/build" --target ember -j"$(nproc)" >/dev/null
  strip --strip-debug -o "build-gpu/lib-$name.so" "$wt/build/lib/libember.so"
  git worktree remove --force "$wt"
done
carried=(build-gpu)
if [ $# -gt 0 ]; then
  llama=$1
  src=$(cd "$llama/.." && pwd)
  [ -x "$llama/bin/llama-bench" ] && [ -d "$src/gguf-py" ] ||
    { echo "device-pack: $llama has no bin/llama-bench, or $src no gguf-py" >&2; exit 1; }
  rm -rf .llama && mkdir -p .llama/bin
  strip -o .llama/bin/llama-bench "$llama/bin/llama-bench"
  xz -T0 -6 .llama/bin/llama-bench
  cp -r "$src/gguf-py" .llama/
  carried+=(.llama)
fi
for path in "${carried[@]}"; do
  git check-ignore -q "$path" || echo "device-pack: $path is not ignored: add /$path/ to .git/info/exclude" >&2
done
tree=$(git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
shared=$( [ -d ../shared ] && du -sb ../shared | cut -f1 || echo 0)
extra=$(du -sbc "${carried[@]}" | tail -1 | cut -f1)
total=$((tree + shared + extra))
# The device tool counts more than these sums: a call it refused at 59 MiB by them (ab-48's call 11),
# one at 58 went. Keep under 58.
printf 'device-pack: carry %s; %d MiB of 58 (tree %d, shared %d, carried %d)\n' "${carried[*]}" \
  $((total >> 20)) $((tree >> 20)) $((shared >> 20)) $((extra >> 20))
[ "$total" -le $((58 << 20)) ] ||
  { echo "device-pack: over the 58 MiB a call carries for certain (EMBER_PACK_TESTS=gpu drops the unit tests)" >&2; exit 1; }
