#!/usr/bin/env bash
# session 19, call 2: four builds in one call, interleaved: 4758198 (before), 83d2d92 (density
# replacement + promote_span from c), 29e5c01 (promote_span from c only), ffdf96b (29e5c01 + a small
# dense allocation takes room at its launch), each under adaptive,
# 16 GiB budget, at 1.5x: llama.cpp 13b token generation, hf-mixtral 8x1.5b generate, star
set -uo pipefail
here=$PWD
R=/tmp/ab; mkdir -p $R
for lib in libcublas.so.13 libcudart.so.13 libnccl.so.2; do
  d=$(find /usr /opt -name "$lib" -print -quit 2>/dev/null)
  [ -n "$d" ] && LD_LIBRARY_PATH=$(dirname "$d")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
export LD_LIBRARY_PATH
gunzip -c .calls/llama/llama-bench.gz >/tmp/llama-bench && chmod +x /tmp/llama-bench
python3 tools/bench/make_gguf.py .calls/llama/gguf-py /tmp/m13.gguf 13b >$R/gguf.log 2>&1
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; } >$R/machine.txt 2>&1
builds="old span dens dense"
one() { # one CELL BUILD [ember-run options] -- command
  local cell=$1 b=$2; shift 2
  local stats=$R/$cell-$b.stats.json
  [ $SECONDS -lt 500 ] || { echo "== $cell $b: not run, out of time" | tee -a $R/progress.log; return 0; }
  echo "== [$SECONDS s] $cell $b" | tee -a $R/progress.log
  timeout --foreground -k 5 100 "$here/.calls/ab/$b/bin/ember-run" --driver real --mode adaptive --budget 16G \
    --stats "$stats" --log info "$@" >$R/$cell-$b.out 2>$R/$cell-$b.log
  echo "rc $? after $SECONDS s" >>$R/$cell-$b.log
  tail -n 2 $R/$cell-$b.out | cut -c1-400
}
for round in 1 2; do
  for b in $builds; do
    [ $round = 2 ] && [ $b = dens ] && continue
    GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 one llama$round $b -- /tmp/llama-bench -m /tmp/m13.gguf -p 0 -n 8 -r 3 -o jsonl -ngl 99
  done
  [ $round = 2 ] && break
  for b in $builds; do one mixtral$round $b --manage-all 1 -- python3 tools/bench/hf_generate.py mixtral 8x1.5b 8 3; done
  for b in $builds; do one star$round $b -- "$here/.calls/ab/$b/bin/ember-suite" star 25769803776 3; done
  tar -C $R -czf "$OUT/ab.tar.gz" .
done
tar -C $R -czf "$OUT/ab.tar.gz" .
cat $R/progress.log
