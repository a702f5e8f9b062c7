#!/usr/bin/env bash
# session 25, call 2: (1) hf-llama 4b at 0.5x in rounds at the head's shim (settled launches), resident and
# adaptive only, three rounds of a process each forking three children (suite.sh hf). (2) llama.cpp 13B F16
# at 1.5x (24.1 GiB managed, 16 GiB budget): does residency past the paper's high watermark pay? adaptive and
# static at the default watermarks (90/85) and at 97/93 (EMBER_HIGH_WATERMARK/EMBER_LOW_WATERMARK), two
# rounds of a process per variant in turn, llama-bench -n 8 -r 3 each.
set -uo pipefail
here=$PWD
source tools/bench/device-unpack.sh
export EMBER_PREBUILT=1 EMBER_BUILD=$here/build
R=/tmp/c2; mkdir -p $R/suite $R/llama && cp tools/bench/results/suite/ab-23/seed/probe.json tools/bench/results/suite/ab-23/seed/sparse-probe.json $R/suite/
pack() { tar -C $R -czf "$OUT/c2.tar.gz" .; }
run=$here/build/bin/ember-run
echo "== [$SECONDS s] hf-llama rounds" >>$R/progress.log
EMBER_RESULTS=$R/suite EMBER_SUITE_SCALES=0.5 EMBER_SUITE_VARIANTS="resident adaptive" EMBER_HF_ROUNDS=3 \
  EMBER_HF_PROCESSES=3 EMBER_BENCH_RUNS=5 EMBER_SUITE_SKIP='hf-mixtral-*' timeout 280 bash tools/bench/suite.sh hf >$R/hf-llama.log 2>&1
pack
echo "== [$SECONDS s] gguf" >>$R/progress.log
model=/tmp/m13b.gguf
timeout 60 python3 tools/bench/make_gguf.py "$EMBER_GGUF_PY" $model 13b >$R/llama/gguf.log 2>&1
for r in 0 1; do
  for v in adaptive-90 adaptive-97 static-90 static-97; do
    [ $r = 1 ] && case $v in adaptive-90) v=static-97 ;; adaptive-97) v=static-90 ;; static-90) v=adaptive-97 ;; static-97) v=adaptive-90 ;; esac
    mode=${v%-*} wm=${v#*-} set=()
    [ $wm = 97 ] && set=(--set EMBER_HIGH_WATERMARK=97 --set EMBER_LOW_WATERMARK=93)
    [ $SECONDS -lt 530 ] || { echo "== [$SECONDS s] llama $v round $r: no time left" >>$R/progress.log; continue; }
    echo "== [$SECONDS s] llama $v round $r" >>$R/progress.log
    timeout 65 env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 $run --driver real --mode $mode --budget 16G "${set[@]}" \
      --stats $R/llama/$v.$r.stats.json --log info -- $EMBER_LLAMA_BENCH -m $model -p 0 -n 8 -r 3 -o jsonl -ngl 99 \
      >$R/llama/$v.$r.jsonl 2>$R/llama/$v.$r.log
    echo "rc $?" >>$R/llama/$v.$r.log
    pack
  done
done
echo "== [$SECONDS s] done" >>$R/progress.log
pack
python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r.get('bench'), r.get('variant'), round(r.get('seconds') or 0,4), r.get('error'))
" $R/suite/suite.jsonl
for f in $R/llama/*.jsonl; do echo "$(basename $f) $(grep -o '"samples_ns": \[[^]]*\]' $f) $(grep -h 'at exit' ${f%.jsonl}.log | sed 's/.*at exit: //')"; done
cat $R/progress.log
