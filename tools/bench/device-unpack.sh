#!/usr/bin/env bash
# Sourced on a lent GPU machine at the start of a call, in the repository's
# root: puts back what device-pack.sh made. build-gpu/ becomes build/ (on a
# machine still warm from the last call, the old build/ goes), the build's
# source folder is linked to this tree so that ctest finds the tests,
# llama-bench is uncompressed, and LD_LIBRARY_PATH gets the folders of the
# CUDA libraries llama-bench needs (the GPU image's Python packages have
# them). Sets EMBER_LLAMA_BENCH and EMBER_GGUF_PY when llama-bench came.
here=$PWD
if [ -d build-gpu ]; then
  rm -rf build
  mv build-gpu build
fi
want=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt 2>/dev/null)
if [ -n "$want" ] && [ "$want" != "$here" ] && [ ! -e "$want" ]; then
  mkdir -p "$(dirname "$want")" && ln -s "$here" "$want"
fi
if [ -f .llama/bin/llama-bench.xz ]; then
  xz -df .llama/bin/llama-bench.xz && chmod +x .llama/bin/llama-bench
fi
if [ -x .llama/bin/llama-bench ]; then
  for lib in libcublas.so.13 libcudart.so.13 libnccl.so.2; do
    d=$(find /usr /opt -name "$lib" -print -quit 2>/dev/null)
    [ -n "$d" ] && LD_LIBRARY_PATH=$(dirname "$d")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  done
  export LD_LIBRARY_PATH EMBER_LLAMA_BENCH=$here/.llama/bin/llama-bench EMBER_GGUF_PY=$here/.llama/gguf-py
fi
