#!/usr/bin/env bash
# run_both.sh: run a GPU program twice, plainly and with Ember preloaded, and
# require the same stdout from both.
#
#   run_both.sh [--needs MODULE]... [--expect WHAT]... SHIM -- CMD [ARGS...]
#
# SHIM is libember.so. Both runs get EMBER_LOG=info and no EMBER_LOG_FILE, so
# the environments differ only in LD_PRELOAD:
#   plain:     LD_PRELOAD unset
#   preloaded: LD_PRELOAD=SHIM
# The test passes when both runs exit 0, their stdout is byte-identical, the
# preloaded run's stderr has the shim's "ember[PID] ... real driver ..." line
# (proof the shim was loaded and forwarded to the driver), and the plain run's
# stderr has no such line (proof it ran without the shim).
#
# Exit status: 0 pass, 1 fail, 2 usage error, 77 skipped (no GPU, a Python
# module of --needs missing, or the plain run itself exited 77).
#
# --needs MODULE  skip unless MODULE imports in CMD's Python (CMD itself when
#                 its name starts with "python", else python3); repeatable.
# --expect WHAT   also require the preloaded run's EMBER_STATS report to show
#                 WHAT (see check_stats.py: converted, uvm-events, past-budget, kept-trimmed,
#                 tensor-lists, cat-inputs);
#                 repeatable.
#                 Both runs then get EMBER_STATS, which only the shim reads.
#                 WHAT no-warnings: the preloaded run's stderr has no
#                 "ember[PID] warn:" line.
#
# Environment:
#   EMBER_GPU_TIMEOUT  seconds allowed for each run (default 600)
#   EMBER_GPU_KEEP=1   keep the temporary folder of outputs after a pass
#   EMBER_GPU_VERBOSE=1  print the program's stdout before the PASS line
set -euo pipefail

usage() {
	echo "usage: $0 [--needs MODULE]... SHIM -- CMD [ARGS...]" >&2
	exit 2
}

needs=()
expects=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--needs)
		[[ $# -ge 2 ]] || usage
		needs+=("$2")
		shift 2
		;;
	--needs=*)
		needs+=("${1#--needs=}")
		shift
		;;
	--expect)
		[[ $# -ge 2 ]] || usage
		if [[ $2 == no-warnings ]]; then quiet=1; else expects+=("$2"); fi
		shift 2
		;;
	-h | --help) usage ;;
	--) usage ;;
	-*) echo "$0: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[[ $# -ge 3 && $2 == "--" ]] || usage
shim=$1
shift 2
# The program's name in messages: the command and its script, then the rest of its arguments
name=$(basename -- "$1")
[[ $# -ge 2 ]] && name="$name $(basename -- "$2")"
[[ $# -ge 3 ]] && name="$name ${*:3}"
timeout_s=${EMBER_GPU_TIMEOUT:-600}

# ---- is there a GPU at all? ------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1; then
	echo "SKIP: no GPU (nvidia-smi not found)"
	exit 77
fi
if ! gpus=$(timeout 60 nvidia-smi -L 2>/dev/null) || ! grep -q '^GPU ' <<<"$gpus"; then
	echo "SKIP: no GPU (nvidia-smi -L lists none)"
	exit 77
fi

# ---- the shim and the program must exist: that is no reason to skip --------
if [[ ! -f $shim || ! -r $shim ]]; then
	echo "$0: shim $shim not found" >&2
	exit 2
fi
shim=$(realpath -- "$shim")
if ! command -v -- "$1" >/dev/null 2>&1; then
	echo "$0: program $1 not found" >&2
	exit 2
fi

# ---- Python modules the program needs ---------------------------------------
if [[ ${#needs[@]} -gt 0 ]]; then
	py=python3
	case $(basename -- "$1") in python*) py=$1 ;; esac
	for mod in "${needs[@]}"; do
		if ! env -u LD_PRELOAD timeout 300 "$py" -c "import $mod" >/dev/null 2>&1; then
			echo "SKIP: $mod not installed (for $py)"
			exit 77
		fi
	done
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ember-gpu.XXXXXX")

# run LABEL [VAR=VALUE...]: runs the program with the given extra environment,
# writing $tmp/LABEL.out, $tmp/LABEL.err and $tmp/LABEL.rc.
run() {
	local label=$1
	shift
	local rc=0 stats=()
	[[ ${#expects[@]} -gt 0 ]] && stats=("EMBER_STATS=$tmp/$label.stats.json")
	env -u LD_PRELOAD -u EMBER_LOG_FILE EMBER_LOG=info "${stats[@]}" "$@" \
		timeout --kill-after=30 "$timeout_s" "${cmd[@]}" \
		>"$tmp/$label.out" 2>"$tmp/$label.err" </dev/null || rc=$?
	echo "$rc" >"$tmp/$label.rc"
	return 0
}

cmd=("$@")
marker='^ember\[[0-9]+\] .*real driver'

run plain
plain_rc=$(<"$tmp/plain.rc")
if [[ $plain_rc -eq 77 ]]; then
	# The program decided to skip (say, the framework sees no CUDA device).
	line=$(grep -m1 '^SKIP' "$tmp/plain.out" || true)
	echo "${line:-SKIP: $name exited 77}"
	rm -rf -- "$tmp"
	exit 77
fi
run preload "LD_PRELOAD=$shim"
preload_rc=$(<"$tmp/preload.rc")

fail=()
describe_rc() {
	case $1 in
	124 | 137) echo "timed out after ${timeout_s}s (rc $1)" ;;
	*) echo "exited $1" ;;
	esac
}
[[ $plain_rc -eq 0 ]] || fail+=("plain run $(describe_rc "$plain_rc")")
[[ $preload_rc -eq 0 ]] || fail+=("preloaded run $(describe_rc "$preload_rc")")
if grep -aqE "$marker" "$tmp/plain.err"; then
	fail+=("the plain run loaded Ember anyway (its stderr has the shim's 'real driver' line)")
fi
shim_line=$(grep -aE -m1 "$marker" "$tmp/preload.err" || true)
if [[ -z $shim_line ]]; then
	fail+=("the preloaded run's stderr has no 'ember[PID] ... real driver' line: the shim was not used")
fi
if [[ ${quiet:-0} == 1 ]] && warned=$(grep -aE -m3 '^ember\[[0-9]+\] warn:' "$tmp/preload.err"); then
	fail+=("the preloaded run warned: ${warned//$'\n'/ | }")
fi
stats_line=""
if [[ ${#expects[@]} -gt 0 && $preload_rc -eq 0 ]]; then
	here=$(dirname -- "$(realpath -- "${BASH_SOURCE[0]}")")
	if ! stats_line=$(python3 "$here/check_stats.py" "$tmp/preload.stats.json" "${expects[@]}"); then
		fail+=("the EMBER_STATS report: $stats_line")
	fi
fi
same=yes
if ! cmp -s "$tmp/plain.out" "$tmp/preload.out"; then
	same=no
	fail+=("stdout differs between the plain and the preloaded run")
fi

if [[ ${#fail[@]} -gt 0 ]]; then
	echo "FAIL: $name"
	for f in "${fail[@]}"; do
		echo "  - $f"
	done
	if [[ $same == no ]]; then
		echo "--- diff -u plain.out preload.out (first 60 lines) ---"
		diff -u --label plain.out --label preload.out "$tmp/plain.out" "$tmp/preload.out" | head -n 60 || true
	fi
	for label in plain preload; do
		echo "--- $label.err (last 15 lines) ---"
		tail -n 15 "$tmp/$label.err" || true
	done
	echo "outputs kept in $tmp:"
	for label in plain preload; do
		echo "  $tmp/$label.out  $tmp/$label.err  (rc $(<"$tmp/$label.rc"))"
	done
	exit 1
fi

if [[ ${EMBER_GPU_VERBOSE:-0} == 1 ]]; then
	sed 's/^/  | /' "$tmp/plain.out"
fi
lines=$(wc -l <"$tmp/plain.out")
sum=$(sha256sum <"$tmp/plain.out" | cut -c1-16)
echo "PASS: $name: stdout identical with and without Ember ($lines lines, sha256 $sum); shim: ${shim_line#*] }"
[[ -n $stats_line ]] && echo "  $stats_line"
if [[ ${EMBER_GPU_KEEP:-0} == 1 ]]; then
	echo "outputs kept in $tmp"
else
	rm -rf -- "$tmp"
fi
