#!/usr/bin/env bash
# ember-run end to end: help, option checking, and the bundled demo on the simulated driver.
set -euo pipefail
run=$1 demo=$2
source "$(dirname "$0")/lib.sh"

help=$("$run" --help)
grep -q -- '--driver auto|real|sim' <<<"$help" || fail "--help lacks --driver"
grep -q 'EMBER_LOG' <<<"$help" || fail "--help lacks the variable table"
grep -q 'EMBER_BUDGET_<n>' <<<"$help" || fail "--help lacks the per-GPU variables"

out=$("$run" --log loud -- true 2>&1) && fail "a bad --log value was accepted"
grep -q 'EMBER_LOG=loud is not valid: expected off, error, warn, info or debug' <<<"$out" \
  || fail "bad --log message: $out"
out=$("$run" --bogus 1 -- true 2>&1) && fail "an unknown option was accepted"
grep -q 'unknown option --bogus' <<<"$out" || fail "unknown option message: $out"
out=$("$run" 2>&1) && fail "no program was accepted"

env=$("$run" --driver sim --log debug --set EMBER_SIM_MEMORY=16G --dry-run -- prog arg)
grep -q '^EMBER_LOG=debug$' <<<"$env" || fail "dry run: $env"
grep -q '^EMBER_SIM_MEMORY=16G$' <<<"$env" || fail "dry run: $env"
grep -q '^EMBER_REAL_LIBCUDA=/.*libember-sim.so$' <<<"$env" || fail "dry run: $env"
grep -q '^LD_PRELOAD=/.*libember.so' <<<"$env" || fail "dry run: $env"
grep -q '^prog arg$' <<<"$env" || fail "dry run: $env"

# under manage-all, JAX's preallocation (larger than any budget) is turned off unless the program chose
env=$("$run" --driver sim --manage-all 1 --dry-run -- prog)
grep -q '^XLA_PYTHON_CLIENT_PREALLOCATE=false$' <<<"$env" || fail "manage-all dry run lacks JAX's preallocation: $env"
got=$("$run" --driver sim --manage-all 1 -- sh -c 'echo "$XLA_PYTHON_CLIENT_PREALLOCATE"')
[ "$got" = false ] || fail "manage-all: XLA_PYTHON_CLIENT_PREALLOCATE is '$got'"
got=$(XLA_PYTHON_CLIENT_PREALLOCATE=true "$run" --driver sim --manage-all 1 -- sh -c 'echo "$XLA_PYTHON_CLIENT_PREALLOCATE"')
[ "$got" = true ] || fail "the program's own XLA_PYTHON_CLIENT_PREALLOCATE was replaced: '$got'"
got=$(env -u XLA_PYTHON_CLIENT_PREALLOCATE "$run" --driver sim -- sh -c 'echo "${XLA_PYTHON_CLIENT_PREALLOCATE-unset}"')
[ "$got" = unset ] || fail "without manage-all, XLA_PYTHON_CLIENT_PREALLOCATE is '$got'"

out=$("$run" --driver sim --log info -- "$demo" 16 3 2>&1) || fail "demo failed: $out"
grep -q 'verified' <<<"$out" || fail "demo did not verify: $out"
grep -q 'Ember .* (active), forwarding to .*libember-sim.so' <<<"$out" || fail "demo not under Ember: $out"
grep -q 'ember\[[0-9]*\] info: forwarding to the real driver' <<<"$out" || fail "no info line: $out"

out=$("$run" --driver sim --off -- "$demo" 16 1 2>&1) || fail "demo --off failed: $out"
grep -q '(pass-through)' <<<"$out" || fail "--off did not pass through: $out"
# ember-top draws a live file
top=$(dirname "$run")/ember-top
if [ -x "$top" ]; then
  live=$(mktemp /tmp/ember-test-XXXXXX.live)
  printf 'ember-live 1\npid 42\nmode static\ndevice 0 budget 17179869184 high 15461882265 low 14602888806 resident 8589934592 other 0 peak 8589934592 promotions 4 demotions 0\nalloc 0 0x7f0000000000 25769803776 managed ####....\n' >"$live"
  out=$("$top" --once --file "$live") || fail "ember-top failed: $out"
  rm -f "$live"
  grep -q 'pid 42  mode static' <<<"$out" || fail "ember-top header: $out"
  grep -q 'GPU 0 \[#*\.*|*\.*\] 8.00 of 16.00 GiB' <<<"$out" || fail "ember-top budget line: $out"
  grep -q 'managed    ####....' <<<"$out" || fail "ember-top region map: $out"
  out=$("$top" --once --file /nonexistent 2>&1) && fail "ember-top accepted a missing file"
fi
echo "ember-run: 1 passed, 0 failed"

# the demo past 4 GiB an array (its element count once wrapped at 2^32 bytes), and its limit
out=$("$run" --driver sim --set EMBER_SIM_MEMORY=64G -- "$demo" 4100 1 2>&1) || fail "demo at 4100 MiB failed: $out"
grep -q '2 x 4100 MiB .* verified' <<<"$out" || fail "demo at 4100 MiB: $out"
out=$("$run" --driver sim -- "$demo" 16384 1 2>&1) && fail "a 16384 MiB demo was accepted"
grep -q '1 to 16383' <<<"$out" || fail "demo limit message: $out"
echo "demo past 4 GiB: ok"

# a misspelt variable is named, with the one meant, and the program still runs
out=$(env EMBER_BUDGTE=16G "$run" --driver sim -- "$demo" 16 1 2>&1) || fail "demo with a misspelt variable: $out"
grep -q 'warn: EMBER_BUDGTE is not an Ember variable and is ignored: did you mean EMBER_BUDGET?' <<<"$out" ||
  fail "no near-miss warning: $out"
echo "near-miss warning: ok"

# --print-config: every variable, its effective value and where it came from
cfg=$(env EMBER_LOG=warn "$run" --budget 8G --budget-1 4G --set EMBER_SPAN=128M --print-config)
grep -Eq '^EMBER_BUDGET +8G +--budget$' <<<"$cfg" || fail "print-config budget: $cfg"
grep -Eq '^EMBER_BUDGET_1 +4G +--budget-1$' <<<"$cfg" || fail "print-config per-GPU: $cfg"
grep -Eq '^EMBER_SPAN +128M +--set$' <<<"$cfg" || fail "print-config --set: $cfg"
grep -Eq '^EMBER_LOG +warn +environment$' <<<"$cfg" || fail "print-config environment: $cfg"
grep -Eq '^EMBER_MODE +adaptive +default$' <<<"$cfg" || fail "print-config default: $cfg"
[ "$(grep -c '^EMBER_BUDGET_' <<<"$cfg")" = 1 ] || fail "print-config shows unset GPUs: $cfg"

# a bad value already in the environment stops ember-run before the program starts
out=$(env EMBER_MODE=adaptve "$run" --driver sim -- sh -c 'echo started' 2>&1) && fail "a bad EMBER_MODE started the program"
grep -q 'EMBER_MODE=adaptve is not valid: expected off, mapped, static or adaptive; not starting sh' <<<"$out" ||
  fail "bad environment message: $out"
grep -q started <<<"$out" && fail "the program ran: $out"
echo "print-config and the environment check: ok"

# per-process enablement: the program's name against EMBER_ENABLE_FOR and EMBER_DISABLE_FOR
name=$(basename "$demo")
out=$(env EMBER_ENABLE_FOR="python3*:$name" "$run" --driver sim -- "$demo" 16 1 2>&1) || fail "enabled demo: $out"
grep -q '(active)' <<<"$out" || fail "a selected program was not served: $out"
out=$(env EMBER_ENABLE_FOR='python3*' "$run" --driver sim --log info -- "$demo" 16 1 2>&1) || fail "unselected demo: $out"
grep -q '(pass-through)' <<<"$out" || fail "an unselected program was served: $out"
grep -q "info: $name is not selected by EMBER_ENABLE_FOR and EMBER_DISABLE_FOR" <<<"$out" || fail "no line: $out"
out=$(env EMBER_ENABLE_FOR="$name" EMBER_DISABLE_FOR='ember-*' "$run" --driver sim -- "$demo" 16 1 2>&1) ||
  fail "disabled demo: $out"
grep -q '(pass-through)' <<<"$out" || fail "EMBER_DISABLE_FOR did not win: $out"
out=$(env EMBER_ENABLE_FOR=/usr/bin/python3 "$run" --driver sim -- true 2>&1) && fail "a path was taken as a pattern"
grep -q 'EMBER_ENABLE_FOR=/usr/bin/python3 is not valid' <<<"$out" || fail "pattern message: $out"
echo "per-process enablement: ok"

# timestamps on request: the wall-clock time, to the millisecond, before each line
out=$("$run" --driver sim --log info --log-time 1 -- "$demo" 16 1 2>&1) || fail "demo with --log-time: $out"
grep -Eq '^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{3}Z ember\[[0-9]+\] info: ' <<<"$out" ||
  fail "no timestamped line: $out"
out=$("$run" --driver sim --log info -- "$demo" 16 1 2>&1)
grep -q '^ember\[[0-9]*\] info: ' <<<"$out" || fail "a line without --log-time changed: $out"
echo "log timestamps: ok"

# the simulated driver and the CUDA runtime: refused before the program starts, and told at its first private table
bin=$(dirname "$run")
for prog in runtime_prog runtime_prog_shared; do
  [ -x "$bin/$prog" ] || { echo "sim refusal: $prog not built here (no nvcc), not checked"; continue; }
  out=$("$run" --driver sim -- "$bin/$prog" 2>&1) && fail "--driver sim started $prog"
  grep -q "ember-run: the simulated driver cannot serve .*$prog: it carries nvcc-built kernels" <<<"$out" ||
    fail "the refusal of $prog: $out"
done
if [ -x "$bin/runtime_prog" ]; then
  out=$(env EMBER_REAL_LIBCUDA="$bin/../lib/libember-sim.so" LD_PRELOAD="$bin/../lib/libember.so" "$bin/runtime_prog" 2>&1) &&
    fail "runtime_prog ran on the simulated driver"
  [ "$(grep -c '^ember-sim driver: the program asked for one of the real driver.s private interfaces' <<<"$out")" = 1 ] ||
    fail "the simulated driver's line, once: $out"
fi
"$run" --driver sim -- true || fail "a program without cudart was refused"
echo "simulated driver and cudart: ok"
