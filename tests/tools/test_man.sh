#!/usr/bin/env bash
# The man pages the build generates (docs/man/*.in and the table): each is
# there, well-formed (groff -ww and, where installed, mandoc -Tlint report
# nothing), names every variable where it lists them all, and reads with
# man -l. And the example ember.conf, every line uncommented, is read with no
# warning. Skips (77) without groff.
#   test_man.sh BUILD_DIR
set -euo pipefail
build=$1
source "$(dirname "$0")/lib.sh"
command -v groff >/dev/null || { echo "groff is not installed (apt-get install groff-base): skipped"; exit 77; }
pages=(ember-run.1 ember-stat.1 ember-top.1 ember-sim.1 ember.conf.5)
names=$(sed -n 's/^| `\(EMBER[A-Z0-9_]*\)\(<n>\)\{0,1\}` |.*/\1/p' "$build/docs/environment.md")
[ "$(wc -l <<<"$names")" -gt 20 ] || fail "no variables in environment.md: $names"
for p in "${pages[@]}"; do
  f=$build/man/$p
  [ -s "$f" ] || fail "not generated: $f"
  grep -q '@' <(grep -v '^\.\\"' "$f" | grep -E '@[A-Z]+( [A-Z0-9_]+)?@') && fail "$p: a directive left unexpanded"
  title=${p%.*} section=${p##*.}
  grep -qi "^\.TH ${title//-/\\\\-} $section " "$f" || fail "$p: its .TH does not name it: $(grep '^\.TH' "$f")"
  warnings=$(groff -man -ww -z "$f" 2>&1) || fail "$p: groff failed: $warnings"
  [ -z "$warnings" ] || fail "$p: groff warns: $warnings"
  if command -v mandoc >/dev/null; then
    lint=$(mandoc -Tlint -W warning "$f" 2>&1) || fail "$p: mandoc -Tlint: $lint"
  fi
  text=$(groff -man -Tutf8 -P-cbou -rLL=100n "$f" 2>/dev/null)
  grep -q '^NAME' <<<"$text" && grep -q '^SEE ALSO' <<<"$text" || fail "$p: NAME or SEE ALSO missing"
done
# the pages that list every variable list every one, from the one table
for p in ember-run.1 ember.conf.5; do
  for n in $names; do
    grep -q "^\\\\fB$n\\\\fR" "$build/man/$p" || fail "$p lacks $n"
  done
done
grep -q '^\\fBEMBER_LIVE\\fR' "$build/man/ember-top.1" || fail "ember-top.1 lacks EMBER_LIVE"
if command -v man >/dev/null; then
  MANWIDTH=80 man -l "$build/man/ember.conf.5" 2>/dev/null | grep 'EMBER_MODE (ember-run --mode)' >/dev/null ||
    fail "man -l ember.conf.5 does not read as text"
fi

# the example ember.conf: every line uncommented is a setting Ember takes, at its default
conf=$(mktemp)
trap 'rm -f "$conf"' EXIT
sed 's/^#EMBER/EMBER/' "$build/docs/ember.conf.example" >"$conf"
out=$(env -u EMBER_LOG EMBER_CONFIG_FILE="$conf" "$build/bin/ember-run" --print-config 2>&1) ||
  fail "the example, uncommented, is not a valid configuration: $out"
grep -q 'ember-run: ' <<<"$out" && fail "the example, uncommented, gets warnings: $out"
grep -Eq "^EMBER_MODE +adaptive +$conf:[0-9]+$" <<<"$out" || fail "the example's EMBER_MODE: $out"
echo "man pages: ${#pages[@]} well-formed"
