#!/usr/bin/env bash
# session 22, call 5 (warm, 130 device seconds left): hf-mixtral 8x1.5b at 1.5x, adaptive then static,
# one hf_rounds.py process each with one child (8 tokens, 3 generations), testing 2d31d73 on the GPU.
[ -d build-gpu ] && { rm -rf build; mv build-gpu build; }
cd tools/bench
E="$OLDPWD/build/bin/ember-run --driver real --budget 16G --manage-all 1"
for v in adaptive static; do
  timeout 45 $E --mode $v --stats $OUT/mx15-$v.stats.json -- python3 hf_rounds.py $v 0 1 mixtral 8x1.5b 8 3 >> $OUT/mx15.jsonl 2>$OUT/mx15-$v.log
done
