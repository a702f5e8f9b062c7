#!/usr/bin/env bash
# Session 55, call 5: whichever card comes. An H200 (the matrix's card): call1.sh's H200 branch (the hf
# cells at 1.5x, resident and adaptive, whose records predate the background touches of session 50,
# and bitonic at 1.5x under mapped). Any other: call4.sh again, a second process of each hf cell.
# Pack with EMBER_PACK_TESTS=0; carry build-gpu.
here=$(dirname "$0")
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then exec bash "$here/call1.sh"; fi
EMBER_CALL_SUFFIX=-again EMBER_CALL_SECONDS=${EMBER_CALL_SECONDS:-200} exec bash "$here/call4.sh"
