#!/usr/bin/env bash
# ember.conf end to end: ember-run --print-config names each value's file and
# line, the shim takes its settings from the files under the environment, a
# line it ignores costs one warning, and a bad value stops ember-run.
#   test_config_file.sh EMBER_RUN EMBER_DEMO
set -euo pipefail
source "$(dirname "$0")/lib.sh"
run=$1 demo=$2
scratch tmp
# no variable of the caller's in the way
for v in $(env | sed -n 's/^\(EMBER[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/xdg
mkdir -p "$HOME" "$XDG_CONFIG_HOME/ember"

cat >"$XDG_CONFIG_HOME/ember/ember.conf" <<'EOF'
# the user's file
EMBER_MODE=mapped
EMBER_BUDGET=4G
EMBER_BUDGTE=3G
EMBER_LOG=info
EOF
cfg=$(env EMBER_LOG=warn "$run" --span 128M --print-config 2>"$tmp/err") || fail "print-config: $(cat "$tmp/err")"
grep -Eq "^EMBER_MODE +mapped +$XDG_CONFIG_HOME/ember/ember.conf:2$" <<<"$cfg" || fail "a file's value: $cfg"
grep -Eq "^EMBER_BUDGET +4G +$XDG_CONFIG_HOME/ember/ember.conf:3$" <<<"$cfg" || fail "a file's value: $cfg"
grep -Eq '^EMBER_LOG +warn +environment$' <<<"$cfg" || fail "the environment over the file: $cfg"
grep -Eq '^EMBER_SPAN +128M +--span$' <<<"$cfg" || fail "an option over the file: $cfg"
grep -Eq '^EMBER_HEADROOM +1G +default$' <<<"$cfg" || fail "the default: $cfg"
grep -q "ember.conf:4: EMBER_BUDGTE is not an Ember variable (did you mean EMBER_BUDGET?); the line is ignored" \
  "$tmp/err" || fail "print-config's note: $(cat "$tmp/err")"

# the program under Ember takes the file's settings, and the ignored line costs one warning
out=$("$run" --driver sim -- "$demo" 16 1 2>&1) || fail "demo: $out"
grep -q 'verified' <<<"$out" || fail "demo: $out"
grep -q 'info: mode mapped' <<<"$out" || fail "the file's EMBER_MODE and EMBER_LOG did not reach the shim: $out"
[ "$(grep -c 'warn: .*ember.conf:4: EMBER_BUDGTE is not an Ember variable' <<<"$out")" = 1 ] ||
  fail "not one warning for the ignored line: $out"

# EMBER_CONFIG_FILE: the files named instead, each over the one before; empty: none
printf 'EMBER_MODE=adaptive\nEMBER_HEADROOM=2G\n' >"$tmp/a.conf"
printf 'EMBER_HEADROOM=3G\n' >"$tmp/b.conf"
cfg=$("$run" --config-file "$tmp/a.conf:$tmp/b.conf" --print-config 2>/dev/null)
grep -Eq "^EMBER_MODE +adaptive +$tmp/a.conf:1$" <<<"$cfg" || fail "EMBER_CONFIG_FILE's first file: $cfg"
grep -Eq "^EMBER_HEADROOM +3G +$tmp/b.conf:1$" <<<"$cfg" || fail "EMBER_CONFIG_FILE's second file: $cfg"
grep -Eq '^EMBER_BUDGET +\(unset\) +default$' <<<"$cfg" || fail "the user's file was read too: $cfg"
cfg=$(env EMBER_CONFIG_FILE= "$run" --print-config 2>/dev/null)
grep -Eq '^EMBER_MODE +adaptive +default$' <<<"$cfg" || fail "an empty EMBER_CONFIG_FILE read a file: $cfg"

# a link planted for the user's file is not followed
rm "$XDG_CONFIG_HOME/ember/ember.conf"
ln -s "$tmp/a.conf" "$XDG_CONFIG_HOME/ember/ember.conf"
cfg=$("$run" --print-config 2>"$tmp/err")
grep -Eq '^EMBER_MODE +adaptive +default$' <<<"$cfg" || fail "the link was followed: $cfg"
grep -q 'ember.conf: a symbolic link, not followed; the file is ignored' "$tmp/err" || fail "link note: $(cat "$tmp/err")"

# a bad value in a file stops ember-run, naming the file and line
printf '# typo\nEMBER_MODE=adaptve\n' >"$tmp/bad.conf"
out=$(env EMBER_CONFIG_FILE="$tmp/bad.conf" "$run" --driver sim -- sh -c 'echo started' 2>&1) &&
  fail "a bad value in a file started the program"
grep -q "$tmp/bad.conf:2: EMBER_MODE=adaptve is not valid: expected off, mapped, static or adaptive; not starting sh" \
  <<<"$out" || fail "bad file value: $out"
grep -q started <<<"$out" && fail "the program ran: $out"
env EMBER_CONFIG_FILE="$tmp/bad.conf" "$run" --print-config >/dev/null 2>&1 && fail "print-config took a bad value"
env EMBER_CONFIG_FILE="$tmp/bad.conf" EMBER_MODE=static "$run" --print-config >/dev/null 2>&1 ||
  fail "the environment's good value did not stand over the file's bad one"
echo "config files: ok"
