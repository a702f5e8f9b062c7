#!/usr/bin/env bash
# Session 61, call 3, at the head: the torture's exact free-memory check, VMM threads alone, on the real
# driver, and a longer, wider torture beside managed threads.
# Pack with EMBER_PACK_TESTS=gpu EMBER_PACK_KEEP="ember-suite ember-vmm-host-probe ember-torture"; carry build-gpu.
# 1. ember-torture 0 20 4 4 without Ember, then under Ember (manage-all, 64 MiB budget): the GPU's free
#    memory must come back exactly;
# 2. ember-torture 8 60 8 8 under Ember (manage-all, 64 MiB): every answer the one allocation's;
# 3. on an H200 (the matrix's card) only, token generation and the model's build at 1.5x.
source tools/bench/device-call.sh c57-3
out=$R/torture; mkdir -p "$out"
# As run, tort's local `name` shadowed the call's, so pack also left an archive per case beside c57-3.tar.gz.
tort() { # NAME SECONDS THREADS SECS MIB VMM [EMBER...]
  local name=$1 limit=$2 args=("$3" "$4" "$5" "$6"); shift 6
  stage "torture $name: ${args[*]}"
  timeout "$limit" "$@" build/bin/ember-torture "${args[@]}" >"$out/$name.out" 2>"$out/$name.err"
  echo "torture $name (${args[*]}): rc $?; $(tr '\n' ' ' <"$out/$name.out") $(head -c 600 "$out/$name.err")"
  pack
}
ember=("$run" --driver real --mode adaptive --budget 64M --manage-all 1 --log warn --)
tort vmm-plain 60 0 20 4 4
tort vmm-ember 60 0 20 4 4 "${ember[@]}"
tort wide-ember 120 8 60 8 8 "${ember[@]}"
if grep -q H200 "$R/gpu.txt"; then
  hf_cells "resident static adaptive"
fi
finish
