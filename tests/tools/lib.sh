# Sourced by the tool tests: how a test fails, and its scratch folder.
fail() { echo "FAIL: $*" >&2; exit 1; }

# scratch NAME: a new folder, its path in $NAME, removed when the test exits
scratch() {
  local d
  d=$(mktemp -d) || fail "no scratch folder"
  printf -v "$1" '%s' "$d"
  trap 'rm -rf "'"$d"'"' EXIT
}
