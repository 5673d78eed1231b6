#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test
# (unit, fault injection, end to end against a real dockerd) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 -j1 "$@"
