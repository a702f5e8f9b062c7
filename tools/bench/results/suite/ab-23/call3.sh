#!/usr/bin/env bash
# session 23, call 3: llama.cpp token generation (CUDA graphs on, llama.cpp's default) at 0.5x (4b) in
# three rounds, variants in turn: resident, stock unified memory (um), and static and adaptive under the
# new shim (captured launches not placed; a settled graph launch placed once) against the same under
# 0042ed2's shim (lib-head/); then at 1.5x (13b), adaptive new and old, static new, one process each.
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
R=/tmp/c3; mkdir -p $R
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; nproc; } >$R/machine.txt 2>&1
pack() { tar -C $R -czf "$OUT/c3.tar.gz" .; }
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/m4b.gguf 4b >$R/gguf-4b.log 2>&1
python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" /tmp/m13b.gguf 13b >$R/gguf-13b.log 2>&1 &
g13=$!
E="$here/build/bin/ember-run --driver real --budget 16G"
pre() { # VARIANT NAME: the command prefix
  case $1 in
    resident) ;;
    um) echo "env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1" ;;
    new-*) echo "env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 $E --mode ${1#new-} --stats $R/$2.stats.json --log info --" ;;
    head-*) echo "env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 $E --shim $here/build/lib-head/libember.so --mode ${1#head-} --stats $R/$2.stats.json --log info --" ;;
  esac
}
one() { # NAME MODEL VARIANT
  local name=$1 model=$2 v=$3 t0=$SECONDS
  [ $SECONDS -lt 520 ] || { echo "$name: not run, out of time" >>$R/progress.log; return 0; }
  timeout -k 5 90 $(pre $v $name) .llama/bin/llama-bench -m $model -p 0 -n 8 -r 3 -ngl 99 -o jsonl >$R/$name.out 2>$R/$name.log
  echo "rc $? after $((SECONDS - t0)) s" >>$R/$name.log
  echo "$name: $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print([round(s / 1e9, 4) for s in r['samples_ns']])" $R/$name.out 2>&1 | tail -1)" >>$R/progress.log
}
vs=(resident um new-static new-adaptive head-static head-adaptive)
for r in 0 1 2; do
  for ((i = 0; i < ${#vs[@]}; i++)); do v=${vs[(i + r) % ${#vs[@]}]}; one llama-0.5-$v-r$r /tmp/m4b.gguf $v; done
done
pack
wait $g13
for v in new-adaptive head-adaptive new-static; do one llama-1.5-$v /tmp/m13b.gguf $v; done
echo "== [$SECONDS s] done" >>$R/progress.log
pack
sort $R/progress.log
