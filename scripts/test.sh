#!/usr/bin/env bash
# The whole test suite: starts (or installs) the servers the tests need, then builds and runs
# every module's tests against them. Extra arguments go to Maven.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/services.sh
exec mvn -B -Dstyle.color=never -T 1 verify "$@"
