#!/usr/bin/env bash
# The main job: install, build, and run the bundled demo under ember-run. It
# uses the real GPU where there is one and the simulated driver elsewhere.
# Extra arguments go to the demo: MiB per array, passes.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
exec "$EMBER_BUILD/bin/ember-run" --log info -- "$EMBER_BUILD/bin/ember-demo" "$@"
