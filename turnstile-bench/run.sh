#!/usr/bin/env bash
# Runs Turnstile's side-by-side benchmarks: acquire+release against the raw SQL floor, ShedLock and
# Spring Integration (PostgreSQL and SQLite), the cross-process hand-off (PostgreSQL), then the Redis
# scenarios (floor, Turnstile, Redisson, ShedLock, Spring spin/pub-sub: uncontended, same-JVM blocking,
# cross-process hand-off) with charts redis-ratios.png and redis-handoff.png beside the report.
# Needs PostgreSQL at 127.0.0.1:5432, database test, user postgres (trust), and Redis at 127.0.0.1:6379,
# unless --pg-url / --redis-url say otherwise (--only redis needs only Redis).
#
# usage: turnstile-bench/run.sh [--slices N] [--slice-ms MS] [--warmup-ms MS] [--threads 1,8]
#          [--dbs postgresql,sqlite] [--handoff-seconds S] [--handoff-rounds R] [--handoff-processes N] [--handoff-threads N]
#          [--handoff-kinds redis-turnstile,redis-redisson,...] [--handoff-warmup S]
#          [--wait-threads N] [--wait-hold-us US] [--pg-url JDBC_URL] [--redis-url URL] [--report FILE]
#          [--append] [--only acquire|handoff|redis|redis-handoff|redis-replica|mongo|zookeeper|zookeeper-handoff|zookeeper-frozen|claim|scheduling|fenced|scale|prune|console]
#          [--rebuild|--no-build]
# --only zookeeper starts a ZooKeeper server of Debian's package on a free port (or uses ZK_CONNECT=host:port)
# and compares the bare-client floor, Turnstile and Curator's InterProcessMutex (uncontended), then the
# cross-process hand-off against InterProcessMutex, then a waiter frozen in line (SIGSTOP) for both;
# --only zookeeper-handoff runs the hand-off alone, --only zookeeper-frozen the frozen waiter alone.
# --only redis-replica starts its own master and replica (redis-server on free ports, no persistence)
# and measures S1/S2 with and without the replica acknowledgement; it is not part of the default run.
# --only mongo starts mongo-java-server (MongoBenchServer, in-memory) in a JVM of its own on a free port
# and measures the raw driver floor, the store's own commands sent raw (server-clock floor), Turnstile and
# ShedLock's MongoLockProvider; not part of the default run.
# --only scheduling: one locked run of an empty job on 1 thread through JobRunner, @TurnstileLock, the
# ShedLock bridge, and ShedLock's own executor and @SchedulerLock, each beside the bare Turnstile
# tryAcquire + release (PostgreSQL, then Redis); part of the default run.
# --only fenced: the same write with and without its fence (SqlFences.updateRow against an UPDATE,
# SqlFences.check in a transaction against the same transaction, on each --dbs database; RedisFences.set
# against SET), 1 thread; part of the default run.
# --only console: the console's pages with 10 000 held locks (-Dbench.consoleLocks), over HTTP and in chromium.
# --only scale: acquire+release of an existing name as the store fills with 1 000, 100 000 and 10 000 000
# names (-Dbench.scaleSizes, -Dbench.scaleStores via JAVA_OPTS), each size beside a store of 1 000 names,
# on PostgreSQL, MariaDB, SQLite and Redis (databases 14 and 15, flushed); not part of the default run.
# Extra JVM options for the parent JVMs go in JAVA_OPTS. Defaults: 12 slices of 1000 ms, 2000 ms
# warm-up, hand-off 2 rounds of 10 s with 4 JVMs after 30 s of contended warm-up, Redis blocking 4 threads holding 100 us;
# results in turnstile-bench/target/bench-results.md.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
module="$root/turnstile-bench"
cd "$root"

props=()
only=all
build=auto
append=0
report="$module/target/bench-results.md"
while (($#)); do
  case "$1" in
    --slices) props+=("-Dbench.slices=$2"); shift 2 ;;
    --slice-ms) props+=("-Dbench.sliceMs=$2"); shift 2 ;;
    --warmup-ms) props+=("-Dbench.warmupMs=$2"); shift 2 ;;
    --threads) props+=("-Dbench.threads=$2"); shift 2 ;;
    --dbs) props+=("-Dbench.dbs=$2"); shift 2 ;;
    --handoff-seconds) props+=("-Dbench.handoffSeconds=$2"); shift 2 ;;
    --handoff-rounds) props+=("-Dbench.handoffRounds=$2"); shift 2 ;;
    --handoff-processes) props+=("-Dbench.handoffProcesses=$2"); shift 2 ;;
    --handoff-threads) props+=("-Dbench.handoffThreads=$2"); shift 2 ;;
    --handoff-kinds) props+=("-Dbench.handoffKinds=$2"); shift 2 ;;
    --handoff-warmup) props+=("-Dbench.handoffWarmupSeconds=$2"); shift 2 ;;
    --wait-threads) props+=("-Dbench.waitThreads=$2"); shift 2 ;;
    --wait-hold-us) props+=("-Dbench.waitHoldMicros=$2"); shift 2 ;;
    --pg-url) props+=("-Dbench.pgUrl=$2"); shift 2 ;;
    --redis-url) props+=("-Dbench.redisUrl=$2"); shift 2 ;;
    --report) report="$(realpath -m "$2")"; shift 2 ;;
    --append) append=1; shift ;;
    --only) only="$2"; shift 2 ;;
    --rebuild) build=always; shift ;;
    --no-build) build=never; shift ;;
    -h | --help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
case "$only" in all | acquire | handoff | redis | redis-handoff | redis-replica | mongo | zookeeper | zookeeper-handoff | zookeeper-frozen | claim | scheduling | fenced | scale | prune | console) ;;
  *) echo "run.sh: --only takes acquire, handoff, redis, redis-handoff, redis-replica, mongo, zookeeper, zookeeper-handoff, zookeeper-frozen, claim, scheduling, fenced, scale, prune or console" >&2; exit 2 ;;
esac

# Build when asked, or when the class path file is missing or older than the module's sources.
cp_file="$module/target/classpath.txt"
if [[ $build == always ]] || { [[ $build == auto ]] && { [[ ! -f $cp_file ]] ||
    [[ -n $(find "$module/src" "$module/pom.xml" -newer "$cp_file" -print -quit) ]]; }; }; then
  mvn -q -B -pl turnstile-bench -am package -DskipTests
fi
[[ -f $cp_file ]] || { echo "run.sh: $cp_file is missing: run without --no-build" >&2; exit 1; }
cp="$module/target/classes:$(cat "$cp_file")"

# One report per run unless --append: the benchmarks append their sections to it.
mkdir -p "$(dirname "$report")"
((append)) || : >"$report"
props+=("-Dbench.report=$report")

read -r -a java_opts <<<"${JAVA_OPTS:-}"
java_opts+=(-Djava.awt.headless=true)
if [[ $only == all || $only == acquire ]]; then
  java "${java_opts[@]}" "${props[@]}" -cp "$cp" dev.turnstile.bench.AcquireReleaseBench
fi
if [[ $only == all || $only == handoff ]]; then
  java "${java_opts[@]}" "${props[@]}" -cp "$cp" dev.turnstile.bench.HandoffBench postgresql
fi
if [[ $only == all || $only == redis ]]; then
  java "${java_opts[@]}" "${props[@]}" -cp "$cp" dev.turnstile.bench.RedisBench
fi
if [[ $only == all || $only == scheduling ]]; then
  java "${java_opts[@]}" "${props[@]}" -cp "$cp" dev.turnstile.bench.SchedulingBench
fi
if [[ $only == all || $only == fenced ]]; then
  java "${java_opts[@]}" "${props[@]}" -cp "$cp" dev.turnstile.bench.FencedWriteBench
fi
# Not in the default run: it fills PostgreSQL, MariaDB, SQLite and Redis with up to 10 million names
# each (about 15 minutes, a few GB of disk, about 1 GB of Redis memory while it runs).
if [[ $only == scale ]]; then
  java "${java_opts[@]}" "${props[@]}" -cp "$cp" dev.turnstile.bench.NameScaleBench
fi
# Not in the default run: pruning 10 000 and 1 000 000 unused names on PostgreSQL, MariaDB, SQLite and
# Redis (-Dbench.pruneSizes), and a name's first acquire after it (about 5 minutes).
if [[ $only == prune ]]; then
  java "${java_opts[@]}" "${props[@]}" -cp "$cp" dev.turnstile.bench.NameScaleBench prune
fi
# Not in the default run: the console's pages with 10 000 held locks on PostgreSQL, Redis and SQLite,
# over HTTP and in Debian's headless chromium (scripts/services.sh installs it).
if [[ $only == console ]]; then
  java "${java_opts[@]}" "${props[@]}" -cp "$cp" dev.turnstile.bench.ConsoleBench
fi
if [[ $only == all || $only == redis || $only == redis-handoff ]]; then
  java "${java_opts[@]}" "${props[@]}" -cp "$cp" dev.turnstile.bench.HandoffBench redis
fi
if [[ $only == redis-replica ]]; then
  tmp="$(mktemp -d)"
  free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
  mport="$(free_port)"
  rport="$(free_port)"
  redis-server --port "$mport" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" --daemonize yes \
    --pidfile "$tmp/m.pid" --logfile "$tmp/m.log"
  redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" --daemonize yes \
    --pidfile "$tmp/r.pid" --logfile "$tmp/r.log" --replicaof 127.0.0.1 "$mport"
  trap 'kill "$(cat "$tmp/m.pid")" "$(cat "$tmp/r.pid")" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do
    redis-cli -p "$mport" INFO replication | grep -q 'state=online' && break
    sleep 0.1
  done
  java "${java_opts[@]}" "${props[@]}" -Dbench.redisUrl="redis://127.0.0.1:$mport" -cp "$cp" dev.turnstile.bench.RedisReplicaBench
fi
# Work claiming (ClaimBench): TaskClaimer against the raw claiming statement on PostgreSQL, MariaDB and
# mongo-java-server (-Dbench.claim.dbs in JAVA_OPTS picks others), its own report beside the main one.
if [[ $only == claim ]]; then
  java -Dbench.claim.dbs=postgresql,mariadb,mongodb "${java_opts[@]}" "${props[@]}" -Dbench.claim.report="$(dirname "$report")/claim-bench.md" -cp "$cp" dev.turnstile.bench.ClaimBench
fi
if [[ $only == mongo ]]; then
  mport="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  java -Xmx512m -cp "$cp" dev.turnstile.bench.MongoBenchServer "$mport" >"$(dirname "$report")/mongo-server.log" 2>&1 &
  mpid=$!
  trap 'kill "$mpid" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do
    grep -q listening "$(dirname "$report")/mongo-server.log" 2>/dev/null && break
    sleep 0.1
  done
  java "${java_opts[@]}" "${props[@]}" -Dbench.mongoUrl="mongodb://127.0.0.1:$mport/bench" \
    -Dbench.mongoServer="mongo-java-server (in-memory backend, its own JVM)" -cp "$cp" dev.turnstile.bench.MongoBench
fi
# ZooKeeper: a standalone server of Debian's zookeeper package (scripts/services.sh installs it) in its
# own process, on a free port, with its dataDir under a temporary directory; or --zookeeper host:port.
if [[ $only == all || $only == zookeeper || $only == zookeeper-handoff || $only == zookeeper-frozen ]]; then
  zk_connect="${ZK_CONNECT:-}"
  if [[ -z $zk_connect ]]; then
    zk_tmp="$(mktemp -d)"
    zk_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    printf 'tickTime=1000\ndataDir=%s/data\nclientPort=%s\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=srvr,ruok\n' \
      "$zk_tmp" "$zk_port" >"$zk_tmp/zoo.cfg"
    ZOO_LOG_DIR="$zk_tmp" /usr/share/zookeeper/bin/zkServer.sh start-foreground "$zk_tmp/zoo.cfg" >"$zk_tmp/server.log" 2>&1 &
    zk_pid=$!
    trap 'kill "$zk_pid" 2>/dev/null || true' EXIT
    for _ in $(seq 100); do
      (exec 3<>"/dev/tcp/127.0.0.1/$zk_port" && printf ruok >&3 && grep -q imok <&3) 2>/dev/null && break
      sleep 0.1
    done
    zk_connect="127.0.0.1:$zk_port"
  fi
  if [[ $only == all || $only == zookeeper ]]; then
    java "${java_opts[@]}" "${props[@]}" -Dbench.zookeeper="$zk_connect" -cp "$cp" dev.turnstile.bench.ZooKeeperBench
  fi
  if [[ $only != zookeeper-frozen ]]; then
    java "${java_opts[@]}" "${props[@]}" -Dbench.zookeeper="$zk_connect" -cp "$cp" dev.turnstile.bench.HandoffBench zookeeper
  fi
  if [[ $only == zookeeper || $only == zookeeper-frozen ]]; then
    java "${java_opts[@]}" "${props[@]}" -Dbench.zookeeper="$zk_connect" -cp "$cp" dev.turnstile.bench.FrozenWaiterBench
  fi
fi
echo "results: $report"
