#!/usr/bin/env bash
# Runs the claiming example: a gateway's deletion in stages (release resources, delete records, mark
# deleted), worked by several worker processes at once over one task table.
#
# usage: examples/claiming/run.sh [--store sqlite|postgresql|JDBC_URL|mongodb://HOST:PORT/DB] [--workers N] [--gateways N]
# Defaults: SQLite file under target/, 3 workers, 20 gateways. postgresql means
# jdbc:postgresql://127.0.0.1:5432/test?user=postgres; a mongodb:// URL (with a database) works one
# collection of that database through MongoClaimStore.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
store=sqlite workers=3 gateways=20
while (($#)); do
  case "$1" in
    --store) store="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --gateways) gateways="$2"; shift 2 ;;
    -h | --help) sed -n '2,8p' "$0" | cut -c3-; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$store" in
  sqlite) mkdir -p "$here/target"; url="jdbc:sqlite:$here/target/gateways.db?journal_mode=WAL&busy_timeout=10000" ;;
  postgresql) url="jdbc:postgresql://127.0.0.1:5432/test?user=postgres" ;;
  jdbc:* | mongodb://* | mongodb+srv://*) url="$store" ;;
  *) echo "run.sh: --store takes sqlite, postgresql, a JDBC URL or a mongodb:// URL" >&2; exit 2 ;;
esac

if [[ ! -f "$here/target/classpath.txt" || -n "$(find "$here/src" "$root/turnstile-core/src/main" "$root/turnstile-jdbc/src/main" "$root/turnstile-mongo/src/main" -newer "$here/target/classpath.txt" -print -quit)" ]]; then
  mvn=(mvn -q -B -f "$root/pom.xml" -pl examples/claiming -am package -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true)
  if command -v flock >/dev/null; then flock /tmp/turnstile-mvn.lock "${mvn[@]}"; else "${mvn[@]}"; fi
  touch "$here/target/classpath.txt"   # the plugin leaves an unchanged file alone
fi
cp="$here/target/classes:$(cat "$here/target/classpath.txt")"
main=dev.turnstile.examples.claiming.GatewayDeletion
java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$cp" "$main" setup "$url" "$gateways"
pids=()
for i in $(seq 1 "$workers"); do
  java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$cp" "$main" worker "$url" "worker-$i" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$cp" "$main" report "$url"
