#!/usr/bin/env bash
# The installed layout (packaging/): cmake --install into a staging prefix,
# then the three ways in, from the installed files only: ember-run, the
# override directory on LD_LIBRARY_PATH, and pkg-config; then unit tests
# run against the installed libraries (HARNESS_SHIM, HARNESS_SIM).
#   test_install.sh BUILD_DIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
build=$1
scratch stage
cmake --install "$build" --prefix "$stage" >/dev/null
lib=$stage/lib/ember
for f in "$lib/libcuda.so.1" "$lib/libcuda.so" "$lib/libember.so" "$lib/libember-sim.so" "$stage/bin/ember-run" \
         "$stage/bin/ember-sim" "$stage/include/ember/ember.h" "$stage/lib/pkgconfig/ember.pc" \
         "$stage/share/doc/ember/environment.md" "$stage/share/doc/ember/ember.conf.example" \
         "$stage/share/man/man1/ember-run.1" "$stage/share/man/man1/ember-stat.1" "$stage/share/man/man1/ember-sim.1" \
         "$stage/share/man/man5/ember.conf.5"; do
  [ -e "$f" ] || fail "not installed: $f"
done
# man finds the pages by name in the installed tree
if command -v man >/dev/null; then
  [ "$(man -M "$stage/share/man" -w 5 ember.conf)" = "$stage/share/man/man5/ember.conf.5" ] || fail "man -w ember.conf(5)"
  [ "$(man -M "$stage/share/man" -w ember-run)" = "$stage/share/man/man1/ember-run.1" ] || fail "man -w ember-run(1)"
fi
[ "$(readelf -d "$lib/libcuda.so.1" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')" = libcuda.so.1 ] || fail "SONAME"

# door 1: ember-run, finding the installed libraries beside itself
out=$("$stage/bin/ember-run" --driver sim --log info -- "$build/bin/ember-demo" 16 2 2>&1) || fail "ember-run: $out"
grep -q 'verified' <<<"$out" || fail "ember-run demo: $out"
grep -q "forwarding to $lib/libember-sim.so" <<<"$out" || fail "not the installed driver: $out"
env=$("$stage/bin/ember-run" --driver sim --dry-run -- prog)
grep -q "^LD_PRELOAD=$lib/libcuda.so.1" <<<"$env" || fail "not the installed shim: $env"

# door 2: the override directory on the library path, nothing preloaded
out=$(env LD_LIBRARY_PATH="$lib" EMBER_REAL_LIBCUDA="$lib/libember-sim.so" "$build/bin/ember-demo" 16 2 2>&1) ||
  fail "override directory: $out"
grep -q 'Ember .* (active), forwarding to .*libember-sim.so' <<<"$out" || fail "override directory: $out"

# pkg-config: the header and the override directory
pc() { PKG_CONFIG_PATH="$stage/lib/pkgconfig" pkg-config "$@" ember; }
cflags=$(pc --cflags | xargs) # pkg-config ends it with a space
[ "$(realpath "${cflags#-I}")" = "$(realpath "$stage/include")" ] || fail "pkg-config --cflags: $cflags"
[ "$(realpath "$(pc --variable=overridedir)")" = "$(realpath "$lib")" ] || fail "pkg-config overridedir"

# the unit tests that load the shim, against the installed copy
for t in test_forward test_placement test_lifecycle; do
  HARNESS_SHIM="$lib/libcuda.so.1" HARNESS_SIM="$lib/libember-sim.so" "$build/bin/$t" --jobs=2 >/dev/null 2>&1 ||
    fail "$t against the installed files"
done
echo "installed layout: ok"
