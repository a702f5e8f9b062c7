#!/usr/bin/env bash
# The frameworks' settings under EMBER_MANAGE_ALL without ember-run (XLA_PYTHON_CLIENT_PREALLOCATE=false):
# a preloaded shim (LD_PRELOAD, /etc/ld.so.preload) gives them before the program reads its environment,
# keeps the program's own, and gives none without manage-all; one loaded later by dlopen, as a framework
# loads libcuda.so.1 through the loader's path, leaves the environment alone.
set -euo pipefail
shim=$1
source "$(dirname "$0")/lib.sh"
show='echo "${XLA_PYTHON_CLIENT_PREALLOCATE-unset}"'
pre() { env -u XLA_PYTHON_CLIENT_PREALLOCATE -u EMBER_MANAGE_ALL LD_PRELOAD="$shim" "$@"; }

got=$(pre EMBER_MANAGE_ALL=1 sh -c "$show") && [ "$got" = false ] || fail "preloaded under manage-all: '$got'"
out=$(pre EMBER_MANAGE_ALL=1 EMBER_LOG=info sh -c "$show" 2>&1)
grep -q 'info: EMBER_MANAGE_ALL: XLA_PYTHON_CLIENT_PREALLOCATE=false, as ember-run sets it' <<<"$out" ||
  fail "no line saying so: $out"
got=$(pre sh -c "$show") && [ "$got" = unset ] || fail "preloaded without manage-all: '$got'"
got=$(pre EMBER_MANAGE_ALL=1 XLA_PYTHON_CLIENT_PREALLOCATE=true sh -c "$show") && [ "$got" = true ] ||
  fail "the program's own value was replaced: '$got'"
got=$(pre EMBER_MANAGE_ALL=1 EMBER=0 sh -c "$show") && [ "$got" = unset ] || fail "EMBER=0: '$got'"
echo "ok: preloaded"

if [ -n "${EMBER_TEST_NO_DLOPEN:-}" ]; then # the TSan build (tests/CMakeLists.txt)
  echo "not run: loaded later (EMBER_TEST_NO_DLOPEN)"
  echo PASS
  exit 0
fi

got=$(env -u XLA_PYTHON_CLIENT_PREALLOCATE EMBER_MANAGE_ALL=1 python3 -c '
import ctypes, sys
ctypes.CDLL(sys.argv[1])
getenv = ctypes.CDLL(None).getenv
getenv.restype = ctypes.c_char_p
print((getenv(b"XLA_PYTHON_CLIENT_PREALLOCATE") or b"unset").decode())' "$shim")
[ "$got" = unset ] || fail "loaded by dlopen: '$got'"
echo "ok: loaded later"
echo PASS
