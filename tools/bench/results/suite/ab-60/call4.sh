#!/usr/bin/env bash
# Session 64, call 4 (run as one command line), at 49af0584: every GPU test but those of PyTorch and
# training, which call 2 ran. Its first try was cut short (the machine was taken back); this ran on an H200.
# Pack with EMBER_PACK_LIBS="base=2010ffbf" EMBER_PACK_TESTS=gpu; carry build-gpu.
source tools/bench/device-call.sh c60-4 >/dev/null 2>&1; use head; gpu_tests 300 -E 'train|torch'; finish 2>&1 | tail -30
