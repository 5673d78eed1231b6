#!/usr/bin/env bash
# The main job: installs what is missing, builds if needed, starts berthd on its
# embedded default (local backend under /var/lib/berth, Docker plugin socket at
# /run/docker/plugins/berth.sock). Extra arguments go to berthd.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/apps/berthd "$@"
