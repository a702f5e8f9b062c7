#!/usr/bin/env bash
# CI: the Python wheel (pyproject.toml), built and tested in a fresh virtual
# environment by tests/tools/test_wheel.sh, which must really run here: no
# skip. Installs python3's venv and pip where missing, and what the build
# needs (tools/setup.sh's list). The wheel is left in build/wheel/.
set -euo pipefail
cd "$(dirname "$0")/../.."
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
probe=$(mktemp -d)
if ! command -v python3 >/dev/null || ! python3 -m venv "$probe/venv" >/dev/null 2>&1 ||
   ! "$probe/venv/bin/python" -m pip --version >/dev/null 2>&1; then
  echo "ci: installing python3-venv and python3-pip for the wheel"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
fi
rm -rf "$probe"
EMBER_PREBUILT=1 source tools/setup.sh   # its functions only: no build
ember_install_deps
EMBER_WHEEL_REQUIRED=1 EMBER_WHEEL_REPAIR=1 bash tests/tools/test_wheel.sh "$PWD/build/wheel"
