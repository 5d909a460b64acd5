#!/usr/bin/env bash
# The whole test suite: starts (or installs) the servers the tests need, then builds and runs
# every module's tests against them, then checks that every published module is ready for Maven
# Central, that the CLI's archive and .deb install and run, and that a release can be made and used
# (scripts/dist-test.sh, scripts/release-test.sh). Extra arguments go to Maven.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/services.sh
mvn -B -Dstyle.color=never -T 1 verify "$@"
# with arguments (say -pl one-module) not every module was built, so there is nothing to check
if (( $# == 0 )); then
  # the release command end to end (a signed release into target/release-check, used by an outside
  # project), about two minutes, runs beside the quicker checks below; its output follows theirs
  release_log="$(mktemp)"
  bash scripts/release-test.sh >"$release_log" 2>&1 &
  release_pid=$!
  bash scripts/check-publishable.sh
  # each module's line and branch coverage (JaCoCo's reports are in <module>/target/site/jacoco/)
  bash scripts/coverage.sh
  # the CLI as users install it (archive and .deb, away from the source)
  bash scripts/dist-test.sh
  release_status=0
  wait "$release_pid" || release_status=$?
  cat "$release_log"
  rm -f "$release_log"
  exit "$release_status"
fi
