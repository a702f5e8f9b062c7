#!/usr/bin/env bash
# ember-top on the simulated driver: --once's region maps checked cell by
# cell against the live records they draw (made-up ones, the issue's map
# ending in 26 mapped groups among them, and the shim's own), and so their
# demand levels (--demand), each GPU's resident and mapped bytes (the shim's
# under a small budget, checked against its own map), several publishing
# processes, a killed one marked dead and a reused PID stale, the wait for
# a program to start, and, where tmux is installed, the keys and the
# shading by demand, colour by colour.
#   test_ember_top.sh BUILD_DIR
set -euo pipefail
bin=$1/bin
top=$bin/ember-top
source "$(dirname "$0")/lib.sh"
[ -x "$top" ] || { echo "ember-top: skipped, not built (no ncurses)"; exit 0; }
dir=$(mktemp -d)
pids=()
# two tmux servers, one a session: killing a server's last session makes it exit, and a new session asked of
# it meanwhile fails ("server exited unexpectedly", seen on CI)
sock=ember-top-test-$$
wait_sock=ember-top-wait-$$
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do rm -f "/dev/shm/ember-$p.live"; done
  if command -v tmux >/dev/null; then
    for server in "$sock" "$wait_sock"; do tmux -L "$server" kill-server 2>/dev/null || true; done
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

help=$("$top" --help)
for want in '--once' '--wait SECONDS' '--filter' '--demand' '  q  ' '  h, ?  ' '  s  ' '  /  ' 'Tab, p' 'PgUp, PgDn' \
  '  r  ' '  d  ' 'Shading:'; do
  grep -qF -- "$want" <<<"$help" || fail "--help lacks '$want': $help"
done
"$top" --bogus >/dev/null 2>&1 && fail "a bad argument was accepted"
"$top" --once --wait soon >/dev/null 2>&1 && fail "--wait soon was accepted"

# check.py RECORD FRAME [wrap] [demand]: every map row of the frame (one process, so no PID column) against
# the record: a scaled cell claims '#' or '.' only when every group it covers says so, and CELL counts its
# regions; with demand (--demand) a cell has the level of its hottest group, '?' where the record has none
cat >"$dir/check.py" <<'PY'
import re, sys
record, frame = sys.argv[1], sys.argv[2]
wrapped, demand = "wrap" in sys.argv[3:], "demand" in sys.argv[3:]
width = 80
maps, levels = {}, {}
for line in open(record):
    f = line.split()
    if f and f[0] == "alloc":
        maps[int(f[1])] = (int(f[3]), f[5])
    elif f and f[0] == "demand":
        levels[int(f[1])] = f[2]
if demand:  # the demand view draws the levels where the map view draws the states
    maps = {i: (size, levels.get(i, "?" * len(groups))) for i, (size, groups) in maps.items()}
rows, cur = {}, None
for line in open(frame).read().splitlines():
    m = re.match(r"^ *(\d+) +[\d.]+ [KMGT]iB +~?\d+% +([\d-]+)  (managed|converted) +(\S+)$", line)
    if m:
        cur = int(m[1])
        rows[cur] = [m[2], m[4]]
        assert len(line) <= width or wrapped, f"row past the width: {line!r}"
    elif cur is not None and re.match(r"^ {20,}\S+$", line):
        rows[cur][1] += line.strip()
assert set(rows) == set(maps), f"rows {sorted(rows)} for records {sorted(maps)}"
for i, (cell, drawn) in rows.items():
    size, groups = maps[i]
    n, length, cells = -(-size // (2 << 20)), len(groups), len(drawn)
    if wrapped or length <= cells:
        assert drawn == groups, f"alloc {i}: drew {drawn} for {groups}"
        cells = length
    starts = [c * length // cells for c in range(cells + 1)]
    regions = [(starts[c + 1] * n // length) - (starts[c] * n // length) for c in range(cells)]
    want = str(min(regions)) if min(regions) == max(regions) else f"{min(regions)}-{max(regions)}"
    assert cell == want, f"alloc {i}: CELL {cell}, want {want}"
    for c, glyph in enumerate(drawn):
        covered = set(groups[starts[c]:starts[c + 1]])
        if demand:
            want = "?" if "?" in covered else max(covered)
            assert glyph == want, f"alloc {i} cell {c}: level {glyph} for {sorted(covered)}"
            continue
        if len(covered) == 1:
            assert glyph == covered.pop(), f"alloc {i} cell {c}: {glyph} for {covered}"
        else:  # a mix: never '#' or '.', a move in flight shows first, the application's make ':'
            want = ">" if ">" in covered else "<" if "<" in covered else ":" if "h" in covered else "+"
            assert glyph == want, f"alloc {i} cell {c}: {glyph} for the mix {sorted(covered)}"
print(f"{len(rows)} {'demand ' if demand else ''}maps checked")
PY

# made-up records, published for a process of ours that runs: the issue's map first
sleep 300 &
owner=$!
pids+=("$owner")
python3 - "$dir/ember-$owner.live" "$owner" <<'PY'
import random, sys
random.seed(11)
path, pid = sys.argv[1], sys.argv[2]
# each with its demand levels (live.h), but for the fourth: a record of an older shim, which had none
recs = [(24 << 30, "#" * 230 + "." * 26, "1" * 256),             # the issue: 26 mapped groups at the end
        (1 << 40, "".join(random.choice("#.+><h") for _ in range(256)),
         "".join(random.choice("0123456789") for _ in range(256))),
        (200 << 20, "".join(random.choice("#.><h") for _ in range(100)), "9" * 100),
        (6 << 20, "#.#", None),
        (513 << 20, "#" * 128 + "." * 128, "0" * 128 + "5" * 128)]
with open(path, "w") as f:
    f.write(f"ember-live 1\npid {pid}\nmode adaptive\n")
    f.write("device 0 budget 17179869184 high 15461882265 low 14602888806 resident 8589934592 other 1073741824 "
            "peak 8589934592 promotions 4 demotions 1 mapped 5905580032\n")
    for i, (size, m, d) in enumerate(recs):
        f.write(f"alloc {i + 1} {0x7f0000000000 + (i << 41):#x} {size} {'managed' if i % 2 else 'converted'} {m}\n")
        if d:
            f.write(f"demand {i + 1} {d}\n")
PY
"$top" --once --width 80 --dir "$dir" "$owner" >"$dir/frame" || fail "--once: $(cat "$dir/frame")"
grep -q "^> pid $owner  mode adaptive  sleep  live" "$dir/frame" || fail "the process line: $(cat "$dir/frame")"
grep -q 'GPU 0 \[#*o*\.*|*\.*\] 9.00 of 16.00 GiB  high 14.40' "$dir/frame" || fail "the gauge: $(cat "$dir/frame")"
grep -qE '^ +resident 8.00 GiB  mapped 5.50 GiB  promotions 4  demotions 1$' "$dir/frame" ||
  fail "the GPU's resident and mapped bytes: $(cat "$dir/frame")"
grep -q ', 5.50 GiB mapped$' "$dir/frame" || fail "the process's mapped bytes, its GPU's: $(cat "$dir/frame")"
grep -qxF 'demand: 0123456789 0 none, 5+ at or past the promotion threshold, x2 a step' "$dir/frame" ||
  fail "the demand legend: $(cat "$dir/frame")"
python3 "$dir/check.py" "$dir/ember-$owner.live" "$dir/frame" || fail "scaled maps: $(cat "$dir/frame")"
# (the old ember-top cut it at the width: all '#')
grep -qE '^ +1 .* converted  #+\+?\.{3,}$' "$dir/frame" || fail "the 26 mapped groups: $(cat "$dir/frame")"
"$top" --once --width 80 --wrap --dir "$dir" "$owner" >"$dir/frame"
python3 "$dir/check.py" "$dir/ember-$owner.live" "$dir/frame" wrap || fail "wrapped maps: $(cat "$dir/frame")"
# the demand view: each cell its hottest group's level, the older record's '?'
for how in "" wrap; do
  "$top" --once --width 80 --demand ${how:+--wrap} --dir "$dir" "$owner" >"$dir/frame"
  grep -q '  sort residency.*  demand$' "$dir/frame" && grep -qE '^ +ID .* DEMAND$' "$dir/frame" ||
    fail "the demand view's title and header: $(cat "$dir/frame")"
  python3 "$dir/check.py" "$dir/ember-$owner.live" "$dir/frame" $how demand || fail "demand maps $how: $(cat "$dir/frame")"
done
grep -qE '^ +4 +6.0 MiB .*.managed +\?\?\?$' "$dir/frame" || fail "no demand in the record: $(cat "$dir/frame")"
# an allocation of a few bytes (BFS's frontier count on the H200 read "0 KiB")
printf 'ember-live 1\npid %s\nmode adaptive\nalloc 1 0x7f0000000000 4 managed #\n' "$owner" >"$dir/tiny.live"
"$top" --once --width 80 --file "$dir/tiny.live" >"$dir/frame"
grep -qE "^ +1 +4 B +" "$dir/frame" || fail "a 4-byte allocation's size: $(cat "$dir/frame")"
# a record of an older shim, without the GPU's mapped bytes: none claimed, the process's from what is placed
sed 's/ mapped [0-9]*$//' "$dir/ember-$owner.live" >"$dir/old.live"
"$top" --once --width 80 --file "$dir/old.live" >"$dir/frame"
grep -qE '^ +resident 8.00 GiB  promotions 4  demotions 1$' "$dir/frame" || fail "an older record's GPU: $(cat "$dir/frame")"

# sort and filter: the allocations' ids, in the order shown
ids() { grep -E '^ +[0-9]+ +[0-9.]+ [KMGT]iB' "$dir/frame" | awk '{printf "%s ", $1}'; }
"$top" --once --width 80 --dir "$dir" --sort size "$owner" >"$dir/frame"
[ "$(ids)" = "2 1 5 3 4 " ] || fail "--sort size: $(cat "$dir/frame")"
"$top" --once --width 80 --dir "$dir" --sort address "$owner" >"$dir/frame"
[ "$(ids)" = "1 2 3 4 5 " ] || fail "--sort address: $(cat "$dir/frame")"
"$top" --once --width 80 --dir "$dir" --sort demand "$owner" >"$dir/frame"
[ "$(ids)" = "3 2 5 1 4 " ] || fail "--sort demand: $(cat "$dir/frame")"
"$top" --once --width 80 --dir "$dir" --filter '>=1G' "$owner" >"$dir/frame"
[ "$(ids)" = "1 2 " ] || fail "--filter >=1G: $(cat "$dir/frame")"
"$top" --once --width 80 --dir "$dir" --filter nosuch >"$dir/frame"
grep -q "pid $owner" "$dir/frame" && fail "--filter nosuch kept the process: $(cat "$dir/frame")"

# a reused PID: the record is older than the process now holding it
cp "$dir/ember-$owner.live" "$dir/ember-$$.live"
touch -d '1 hour ago' "$dir/ember-$$.live"
"$top" --once --width 80 --dir "$dir" "$$" >"$dir/frame"
grep -q "^> pid $$  mode adaptive  STALE: the PID is another process now, its record 36[0-9][0-9] s old" "$dir/frame" ||
  fail "a reused PID: $(cat "$dir/frame")"
rm "$dir/ember-$$.live"
# a zombie answers kill(pid, 0) too: an exited program no one has waited for is dead
python3 - "$top" "$dir/zombie" <<'PY' || fail "a zombie"
import os, subprocess, sys, time
top, d = sys.argv[1], sys.argv[2]
os.makedirs(d)
pid = os.fork()
if pid == 0:
    os._exit(0)
time.sleep(0.2)
with open(f"{d}/ember-{pid}.live", "w") as f:
    f.write(f"ember-live 1\npid {pid}\nmode static\n")
out = subprocess.run([top, "--once", "--dir", d], capture_output=True, text=True).stdout
os.waitpid(pid, 0)
assert f"pid {pid}  mode static  DEAD: the process is gone" in out, out
PY

# waiting: for nothing, in vain; then for a program that starts after ember-top
mkdir "$dir/empty"
set +e; "$top" --once --wait 0.3 --dir "$dir/empty" >/dev/null 2>"$dir/err"; rc=$?; set -e
[ "$rc" = 1 ] && grep -q 'no program is publishing' "$dir/err" || fail "--wait 0.3 in vain: $rc $(cat "$dir/err")"
"$top" --once --wait 30 --dir "$dir/empty" >"$dir/frame" 2>"$dir/err" &
waiter=$!
sleep 0.5
cp "$dir/ember-$owner.live" "$dir/empty/"
wait "$waiter" || fail "the wait for a program: $(cat "$dir/err")"
grep -q 'waiting up to 30 s for a program publishing' "$dir/err" || fail "no waiting line: $(cat "$dir/err")"
grep -q "pid $owner  mode adaptive  sleep  live" "$dir/frame" || fail "after the wait: $(cat "$dir/frame")"

# the shim's own records: the README's `ember-run --live 1 -- app & ember-top`, for three programs,
# one of them killed before it could remove its file
"$bin/ember-run" --driver sim --budget 64M --live 1 -- "$bin/ember-demo" 47 1000000 >/dev/null 2>&1 &
small=$!
pids+=("$small")
"$bin/ember-run" --driver sim --budget 600M --live 1 -- "$bin/ember-demo" 520 1000000 >/dev/null 2>&1 &
big=$!
pids+=("$big")
"$bin/ember-run" --driver sim --budget 32M --live 1 -- "$bin/ember-demo" 16 1000000 >/dev/null 2>&1 &
killed=$!
pids+=("$killed")
for p in "$small" "$big" "$killed"; do
  "$top" --once --wait 60 "$p" >/dev/null 2>"$dir/err" || fail "no live record from $p: $(cat "$dir/err")"
done
# the first launches promote (adaptive, the default): both allocations of the big one are in its record
for _ in $(seq 100); do
  [ "$(grep -c '^alloc .*#' "/dev/shm/ember-$big.live")" = 2 ] && break
  sleep 0.1
done
# the small one's budget (64 MiB for 94) leaves some of it mapped: its GPU's mapped bytes are the '.' of its
# maps (one region a glyph, the last of 1 MiB), and each map has its demand levels, one a glyph
# read through cat: the shim replaces the record by a rename, which makes cp skip the file it was copying
cat "/dev/shm/ember-$small.live" >"$dir/small.live"
python3 - "$dir/small.live" >"$dir/mapped" <<'PY' || fail "the shim's mapped bytes and demand: $(cat "$dir/small.live")"
import sys
lines = [l.split() for l in open(sys.argv[1])]
device = [f for f in lines if f[0] == "device"]
maps = {f[1]: (int(f[3]), f[5]) for f in lines if f[0] == "alloc"}
levels = {f[1]: f[2] for f in lines if f[0] == "demand"}
assert len(device) == 1 and len(maps) == 2, lines
kv = dict(zip(device[0][2::2], device[0][3::2]))
region = lambda size, r: min(size, (r + 1) << 21) - (r << 21)
mapped = sum(region(size, r) for size, m in maps.values() for r, g in enumerate(m) if g == ".")
assert all(len(m) == -(-size // (2 << 20)) for size, m in maps.values()), maps
assert int(kv["mapped"]) == mapped > 0, f"mapped {kv['mapped']}, the maps' '.' {mapped}"
for i, (size, m) in maps.items():
    assert len(levels[i]) == len(m) and levels[i].isdigit(), f"alloc {i}: levels {levels[i]} for {m}"
print(f"{mapped / (1 << 20):.1f} MiB")
PY
"$top" --once --width 80 --file "$dir/small.live" >"$dir/frame"
grep -qE "^ +resident [0-9.]+ MiB  mapped $(cat "$dir/mapped")  promotions" "$dir/frame" ||
  fail "the shim's GPU line, $(cat "$dir/mapped") mapped: $(cat "$dir/frame")"
python3 "$dir/check.py" "$dir/small.live" "$dir/frame" || fail "the small one's maps: $(cat "$dir/frame")"
"$top" --once --width 80 --demand --file "$dir/small.live" >"$dir/frame"
python3 "$dir/check.py" "$dir/small.live" "$dir/frame" demand || fail "the small one's demand: $(cat "$dir/frame")"
kill -9 "$killed"
wait "$killed" 2>/dev/null || true
"$top" --once --width 100 >"$dir/frame" || fail "all of them: $(cat "$dir/frame")"
for p in "$small" "$big"; do
  grep -q "^  pid $p  mode adaptive  ember-demo  live  2 allocations" "$dir/frame" || fail "$p not live: $(cat "$dir/frame")"
  [ "$(grep -cE "^ +$p +[01] " "$dir/frame")" = 2 ] || fail "$p's allocations: $(cat "$dir/frame")"
done
grep -qE "^  (pid $killed  mode adaptive  DEAD: the process is gone|[0-9]+ not running, DEAD.* $killed( |$))" "$dir/frame" ||
  fail "$killed not marked dead: $(cat "$dir/frame")"
grep -qE "^ +$killed " "$dir/frame" && fail "a dead process's allocations among the running: $(cat "$dir/frame")"
"$top" --once --width 80 "$killed" >"$dir/frame"
grep -q "^> pid $killed  mode adaptive  DEAD: the process is gone" "$dir/frame" || fail "the dead one: $(cat "$dir/frame")"
rm -f "/dev/shm/ember-$killed.live"
# the big one's maps (260 regions, so 256 groups in the record) against its record, scaled and wrapped
for how in "" --wrap; do
  cat "/dev/shm/ember-$big.live" >"$dir/big.live"
  "$top" --once --width 80 $how --file "$dir/big.live" "$big" >"$dir/frame"
  python3 "$dir/check.py" "$dir/big.live" "$dir/frame" $how || fail "the shim's maps $how: $(cat "$dir/frame")"
done
kill "$small" "$big"
echo "ember-top --once: ok"

# the keys, in a terminal of tmux's
if ! command -v tmux >/dev/null; then
  echo "ember-top keys: skipped, tmux is not installed"
  exit 0
fi
keys=$dir/keys
mkdir -p "$keys/empty"
python3 - "$keys/ember-$owner.live" "$owner" <<'PY'
import sys
path, pid = sys.argv[1], sys.argv[2]
with open(path, "w") as f:
    f.write(f"ember-live 1\npid {pid}\nmode static\n")
    f.write("device 0 budget 17179869184 high 15461882265 low 14602888806 resident 8589934592 other 0 "
            "peak 8589934592 promotions 4 demotions 0\n")
    for i in range(60):  # more than a screen: sizes 1 to 60 GiB, the larger the more resident; demand i % 10
        f.write(f"alloc {i} {0x7f0000000000 + (i << 40):#x} {(i + 1) << 30} managed {'#' * i + '.' * (256 - i)}\n")
        f.write(f"demand {i} {str(i % 10) * 256}\n")
PY
# shades.py LINE_PATTERN LEVELS: the screen, with its colours (capture-pane -e), has a line whose text matches
# the pattern and whose cells in its group are shaded as the levels say: 0 not at all, 1-2 blue, 3-4 cyan,
# 5-6 yellow (at the promotion threshold or past it), 7-9 red; one level for every cell, else one each
cat >"$dir/shades.py" <<'PY'
import re, sys
pattern, levels = sys.argv[1], sys.argv[2]
band = {"0": None, "1": 4, "2": 4, "3": 6, "4": 6, "5": 3, "6": 3, "7": 1, "8": 1, "9": 1}
for raw in sys.stdin.read().splitlines():
    text, bgs, bg = "", [], None
    for sgr, ch in re.findall(r"\x1b\[([0-9;]*)m|(.)", raw):
        if ch:
            text += ch
            bgs.append(bg)
            continue
        for code in (sgr or "0").split(";"):
            code = int(code or 0)
            if code == 0 or code == 49:
                bg = None
            elif 40 <= code <= 47:
                bg = code - 40
    m = re.search(pattern, text)
    if not m:
        continue
    got = bgs[m.start(1):m.end(1)]
    want = [band[l] for l in (levels * len(got) if len(levels) == 1 else levels)]
    assert got == want, f"{text!r}: shades {got}, want {want}"
    sys.exit(0)
sys.exit(f"no line matches /{pattern}/")
PY
on=$wait_sock
screen() { tmux -L "$on" capture-pane -p -t top; }
# each grep of the screen reads it all (no -q): under pipefail a capture cut short by grep -q's exit
# would fail the pipeline, passing a check that the screen lacks something (test_bigrun.sh's flake)
# until the screen shows what is expected (it redraws on its own every half second)
expect() {
  for _ in $(seq 50); do screen | grep -E -- "$1" >/dev/null && return 0; sleep 0.1; done
  fail "the screen lacks /$1/ after ${2:-a key}: $(screen)"
}
press() { tmux -L "$on" send-keys -t top "$@"; }
tmux -L "$on" new-session -d -s top -x 100 -y 30 "$top --dir $keys/empty --wait 1; sleep 30"
expect 'waiting for a program publishing' "start"
expect 'no program published .* for 1 s' "--wait 1"
tmux -L "$on" kill-server
on=$sock
tmux -L "$sock" new-session -d -s top -x 100 -y 30 "$top --dir $keys"
expect "pid $owner  mode static  sleep  live" "start"
expect 'sort residency' "start"
# the shading: its legend, and the maps (the most resident first: demand 9, 8, ... 0)
expect '^demand: 0123456789 0 none, 5\+ at or past the promotion threshold, x2 a step \(d: as digits\)$' "start"
shaded() { tmux -L "$sock" capture-pane -p -e -t top | python3 "$dir/shades.py" "$@" || fail "the shading: $(screen)"; }
shaded '^demand: (0123456789) ' 0123456789
for i in 59 58 57 56 55 54 53 52 51 50; do shaded "^ +$owner +$i +$((i + 1)).00 GiB .* managed +([#+.]+)$" $((i % 10)); done
press d; expect 'sort residency  demand' d; expect ' DEMAND$' d
expect "^ +$owner +59 +60.00 GiB .* managed +9+$" d; expect "^ +$owner +54 +55.00 GiB .* managed +4+$" d
shaded "^ +$owner +56 +57.00 GiB .* managed +(6+)$" 6
press d; sleep 0.3; screen | grep 'DEMAND' >/dev/null && fail "d again: $(screen)"
expect "^ +$owner +59 +60.00 GiB" "start"   # the most resident first
expect 'lines 1-[0-9]+ of 60' "start"
press h; expect 'Keys:' h
press x; sleep 0.3; screen | grep 'Keys:' >/dev/null && fail "the help stayed: $(screen)"
press s; expect 'sort size' s
press s; expect 'sort address' s; expect "^ +$owner +0 +1.00 GiB" "sort address"
press s; expect 'sort name' s
press s; expect 'sort demand' s
press s; expect 'sort residency' s
press j; expect 'lines 2-' j
press k; expect 'lines 1-' k
press NPage; expect 'lines [1-9][0-9]-[0-9]+ of 60' PgDn
press End; expect 'lines [0-9]+-60 of 60' End; expect "^ +$owner +0 +1.00 GiB" End
press Home; expect 'lines 1-' Home
press / 5 0 G Enter; expect 'filter 50G' "/50G"
[ "$(screen | grep -cE "^ +$owner +[0-9]+ +[0-9.]+ GiB")" = 11 ] || fail "/50G shows 50G to 60G: $(screen)"
press / Escape; sleep 0.3; expect 'filter 50G' "/ Esc"
press / BSpace BSpace BSpace Enter; sleep 0.3
screen | grep 'filter 50G' >/dev/null && fail "an empty filter stayed: $(screen)"
press Tab; expect "^> pid $owner" Tab; expect "showing pid $owner" Tab
press Tab; expect 'showing all running' "Tab again"
press p; expect "showing pid $owner" p
press p; expect 'showing all running' "p again"
press w; expect 'wrapped' w
press w; sleep 0.3; screen | grep wrapped >/dev/null && fail "w again: $(screen)"
press r; expect "pid $owner" r
press q
for _ in $(seq 50); do tmux -L "$sock" has-session -t top 2>/dev/null || break; sleep 0.1; done
tmux -L "$sock" has-session -t top 2>/dev/null && fail "q did not quit: $(screen)"
echo "ember-top keys: ok"
