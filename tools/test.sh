#!/usr/bin/env bash
# The test command: install, build, then every test (GPU tests skip without a GPU).
set -euo pipefail
source "$(dirname "$0")/setup.sh"
cd "$EMBER_BUILD"
ctest --output-on-failure -j "$(nproc)" "$@"
