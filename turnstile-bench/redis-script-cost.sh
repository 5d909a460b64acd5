#!/usr/bin/env bash
# Server time per call of a Redis acquire script: starts its own redis-server (port 7391, no
# persistence), loads the Lua file, runs `redis-benchmark -P 16` EVALSHA calls over 1000 lock names
# with a 1 ms TTL (so most calls take a free lock and every name's counter is bumped about once per
# 2.5 ms: the floor rewrites the counter on every call, the worst case), and prints INFO
# commandstats' usec_per_call for evalsha, three rounds.
#
# usage: turnstile-bench/redis-script-cost.sh [SCRIPT.lua] [LABEL]
# Without a file it measures the store's own acquire script as the store sends it (its includes in
# place, read from turnstile-redis's built classes: build that module first); with one, that file,
# e.g. turnstile-bench/scripts/redis-acquire-2738d8f.lua, the acquire before the fence floor.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(mktemp -d)"
if (( $# == 0 )) || [[ $1 == acquire ]]; then
  script="$dir/acquire.lua" label=${2:-acquire}
  java -cp "$root/turnstile-redis/target/classes" dev.turnstile.redis.RedisScripts acquire >"$script"
else
  script=$1 label=${2:-$1}
fi
port=${PORT:-7391}
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" --daemonize yes \
  --logfile "$dir/r.log" --pidfile "$dir/r.pid" >/dev/null
trap 'kill "$(cat "$dir/r.pid")" 2>/dev/null || true' EXIT
sleep 0.3
sha=$(redis-cli -p "$port" SCRIPT LOAD "$(cat "$script")")
# A script that writes the times itself (from TIME) takes the value's tail after them.
tail=' acquired_at=1763900000000 expires_at=1763900030000 owner=host:123:abcdef'
grep -q 'acquired_at=%d' "$script" && tail=' owner=host:123:abcdef'
for round in 1 2 3; do
  redis-cli -p "$port" FLUSHALL >/dev/null
  redis-cli -p "$port" CONFIG RESETSTAT >/dev/null
  redis-benchmark -p "$port" -P 16 -n 400000 -r 1000 -q EVALSHA "$sha" 2 'k:{__rand_int__}' 'k:{__rand_int__}:fence' \
    'token=abcdefabcdefabcdefabcdef fence=' "$tail" 1 >/dev/null
  echo "$label round $round: $(redis-cli -p "$port" INFO commandstats | grep evalsha | tr -d '\r')"
done
