#!/usr/bin/env bash
# session 22, call 4 (the machine still warm from call 3, /tmp/m4b.gguf still there): llama.cpp at 0.5x,
# every variant back to back, with CUDA graphs on and off: resident (no unified memory), um (stock
# unified memory, no Ember), off (Ember loaded, EMBER_MODE=off), static, adaptive. Files went to $OUT
# directly; only eight come back, so the printed medians are call4/output.txt.
R=$OUT; ls /tmp/m4b.gguf >/dev/null || exit 3
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
[ -x .llama/bin/llama-bench ] || { xz -d .llama/bin/llama-bench.xz; chmod +x .llama/bin/llama-bench; }
for lib in libcublas.so.13 libcudart.so.13 libnccl.so.2; do d=$(find /usr /opt -name "$lib" -print -quit 2>/dev/null); LD_LIBRARY_PATH=$(dirname "$d")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; done
export LD_LIBRARY_PATH
b() { n=$1; shift; timeout 30 "$@" .llama/bin/llama-bench -m /tmp/m4b.gguf -p 0 -n 8 -r 3 -ngl 99 -o jsonl >$R/$n.out 2>$R/$n.log
  echo "$n $(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); print([round(s / 1e9, 4) for s in r['samples_ns']])" $R/$n.out 2>&1|tail -1)"; }
E="$PWD/build/bin/ember-run --driver real --budget 16G"
for g in 0 1; do
  export GGML_CUDA_DISABLE_GRAPHS=$g
  b resident-g$g env; b um-g$g env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1
  b off-g$g env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 $E --mode off --
  b static-g$g env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 $E --mode static --
  b adaptive-g$g env GGML_CUDA_ENABLE_UNIFIED_MEMORY=1 $E --mode adaptive --
done 2>&1
