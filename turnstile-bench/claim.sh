#!/usr/bin/env bash
# Runs the claiming benchmark (ClaimBench): TaskClaimer against the raw claiming statement on the same
# pool, 1 and 8 threads, PostgreSQL and MariaDB (and MongoDB with -Dbench.claim.dbs=mongodb), then the claim cost as the table grows to 1 million
# rows with 1 % due, with the EXPLAIN of the claiming statement. Report: turnstile-bench/target/claim-bench.md.
# usage: turnstile-bench/claim.sh [-Dbench.claim.dbs=postgresql,mariadb] [-Dbench.claim.slices=8] ...
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
module="$root/turnstile-bench"
cd "$root"
if [[ ! -f "$module/target/classpath.txt" || -n "$(find "$module/src" "$root/turnstile-core/src/main" "$root/turnstile-jdbc/src/main" "$root/turnstile-mongo/src/main" -newer "$module/target/classpath.txt" -print -quit)" ]]; then
  flock /tmp/turnstile-mvn.lock mvn -o -q -B -pl turnstile-bench -am package -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true
  touch "$module/target/classpath.txt"   # the plugin leaves an unchanged file alone
fi
exec nice java -Xmx1g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn "$@" \
  -cp "$module/target/classes:$(cat "$module/target/classpath.txt")" dev.turnstile.bench.ClaimBench
