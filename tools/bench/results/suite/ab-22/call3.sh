#!/usr/bin/env bash
# session 22, call 3: the GPU tests at 6d0b03c's shim; llama.cpp token generation (llama-bench built from
# llama-cpp-python 0.3.36's vendored llama.cpp, unified memory) at 1.5x (13b shape: resident, adaptive,
# static) and at 0.5x (4b: resident, adaptive, static, in two rounds while time lasts), testing 2d31d73
# (adaptive's pass sorts only when it chooses) on a launch-bound program over the budget.
set -uo pipefail
here=$PWD
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
want=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
if [ -n "$want" ] && [ "$want" != "$here" ] && [ ! -e "$want" ]; then mkdir -p "$(dirname "$want")"; ln -s "$here" "$want"; fi
R=/tmp/c3; mkdir -p $R
{ uname -r; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used --format=csv; } >$R/machine.txt 2>&1
xz -d .llama/bin/llama-bench.xz && chmod +x .llama/bin/llama-bench
python3 tools/bench/make_gguf.py .llama/gguf-py /tmp/m13b.gguf 13b >$R/gguf-13b.log 2>&1 &
g13=$!
echo "== [$SECONDS s] ctest" >>$R/progress.log
(cd build && LD_LIBRARY_PATH=$PWD/devlibs timeout 150 ctest -L gpu --output-on-failure >$R/ctest-gpu.log 2>&1; tail -4 $R/ctest-gpu.log)
tar -C $R -czf "$OUT/c3.tar.gz" .
wait $g13
python3 tools/bench/make_gguf.py .llama/gguf-py /tmp/m4b.gguf 4b >$R/gguf-4b.log 2>&1 &
g4=$!
for lib in libcublas.so.13 libcudart.so.13 libnccl.so.2; do
  d=$(find /usr /opt -name "$lib" -print -quit 2>/dev/null)
  [ -n "$d" ] && LD_LIBRARY_PATH=$(dirname "$d")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
export LD_LIBRARY_PATH
one() { # NAME MODEL VARIANT: one llama-bench run
  local name=$1 model=$2 v=$3 t0=$SECONDS pre=()
  [ $SECONDS -lt ${LIMIT:-250} ] || { echo "$name: not run, out of time" >>$R/progress.log; return 0; }
  echo "== [$SECONDS s] $name" >>$R/progress.log
  case $v in
    resident) ;;
    *) pre=(env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 $here/build/bin/ember-run --driver real --budget 16G --mode $v
            --stats $R/$name.stats.json --log info --) ;;
  esac
  timeout -k 5 60 "${pre[@]}" .llama/bin/llama-bench -m $model -p 0 -n 8 -r 3 -ngl 99 -o jsonl >$R/$name.out 2>$R/$name.log
  echo "rc $? after $((SECONDS - t0)) s" >>$R/$name.log
  echo "$name: $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print([round(s / 1e9, 4) for s in r['samples_ns']])" $R/$name.out 2>&1 | tail -1)" | tee -a $R/progress.log
}
for v in resident adaptive static; do one llama-cpp-1.5-$v /tmp/m13b.gguf $v; done
tar -C $R -czf "$OUT/c3.tar.gz" .
wait $g4
for r in 1 2; do for v in resident adaptive static; do one llama-cpp-0.5-$v-r$r /tmp/m4b.gguf $v; done; done
tar -C $R -czf "$OUT/c3.tar.gz" .
echo "== [$SECONDS s] done" >>$R/progress.log
cat $R/progress.log
