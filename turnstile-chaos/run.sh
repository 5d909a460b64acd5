#!/usr/bin/env bash
# Runs Turnstile's chaos matrix: worker JVMs contend for one lock on real stores while the harness
# injects faults (holder SIGKILL/SIGSTOP, store restarts, TCP proxy latency/partition, Redlock nodes
# down, client clock jumps), then checks the recorded history and writes a Markdown report and its
# JSON twin (default docs/reliability.md and docs/reliability.json).
#
# usage: turnstile-chaos/run.sh [--short | --long | --mixed] [--stores sqlite,postgresql,mariadb,redis,redlock,mongo,zookeeper]
#          [--faults none,kill,pause,partition,latency,restart,redlock-minority,redlock-majority,clock,failover,store-pause,
#                    session-expiry,leader-loss]
#          [--seed N] [--mixed-seconds N] [--rounds N] [--out FILE.md] [--workers N] [--rebuild | --no-build]
# --short (default): one round per scenario, about 12 s each, ~6 min in all; rewrites --out outside its
# marked sections. --long: 20 rounds of every store x fault cell with shorter spells (TTL 1 s; most
# holds up to 100 ms, a long one on keep-alive for each fault to hit), then the mixed run: a seeded random schedule of faults
# hitting holders and bystanders, --mixed-seconds (60) per store; about 50 min on 2 cores; prints the
# seed (--seed N replays the schedule) and rewrites only the long-run section of --out and FILE-long.json.
# --mixed: only the mixed run (give it its own --out). Needs PostgreSQL on 127.0.0.1:5432 (database test, user postgres, trust; it also
# holds the fenced resource, and the restart fault restarts it), MariaDB on 127.0.0.1:3306 (root, no
# password, database test) and redis-server (the harness starts its own; 6379 is never touched);
# scripts/services.sh sets those up. The clock fault needs libfaketime: installed here with apt-get
# when missing (as root); otherwise the run stops with a message instead of skipping it.
# Only when named: --stores redis-sentinel,redis-sentinel-noack (master, replica and Sentinel of the
# harness's own, with and without replica acknowledgement) for --faults failover; and zookeeper-ensemble
# (three servers of Debian's zookeeper package, as the zookeeper store's one) for --faults leader-loss.
# The zookeeper stores need that package (scripts/services.sh installs it).
# Builds only this module (the others must be in the local repository); MVN_FLAGS=-o builds offline.
# Exit code 0 when every scenario passes, 1 when one fails.
#
# --cli [--rounds N] [--stores …] [--faults kill-cli,stop-cli,kill-command,partition-cli,freeze-both]: the
# holders are `turnstile run` processes instead (CliChaos), 3 rounds per fault by default, the JVM faults
# on every store (default: all of --stores' list above), partition-cli on the networked ones, kill-command and
# freeze-both on the first; rewrites only the CLI section of --out (default docs/reliability.md), which the
# matrix run leaves in place.
set -euo pipefail

self="$(realpath "$0")"
root="$(cd "$(dirname "$self")/.." && pwd)"
module="$root/turnstile-chaos"
cd "$root"

build=auto
out="$root/docs/reliability.md"
args=()
faults=""
stores=""
cli=""
rounds=""
command="turnstile-chaos/run.sh" # what reproduces the report (build flags left out: they change nothing)
while (($#)); do
  case "$1" in
    --short | --long | --mixed) args+=("$1"); command+=" $1"; shift ;;
    --stores) stores="$2"; args+=("$1" "$2"); command+=" $1 $2"; shift 2 ;;
    --workers | --seed | --mixed-seconds) args+=("$1" "$2"); command+=" $1 $2"; shift 2 ;;
    --faults) faults="$2"; args+=("$1" "$2"); command+=" $1 $2"; shift 2 ;;
    --out) out="$(realpath -m "$2")"; command+=" $1 $2"; shift 2 ;;
    --cli) cli=1; command+=" $1"; shift ;;
    --rounds) rounds="$2"; command+=" $1 $2"; shift 2 ;;
    --rebuild) build=always; shift ;;
    --no-build) build=never; shift ;;
    -h | --help) sed -n '2,30p' "$self"; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done

# Build when asked, or when the class path file is missing or older than the module's sources.
cp_file="$module/target/classpath.txt"
if [[ $build == always ]] || { [[ $build == auto ]] && { [[ ! -f $cp_file ]] ||
    [[ -n $(find "$module/src/main" "$module/pom.xml" -newer "$cp_file" -print -quit) ]]; }; }; then
  # Only this module: the others come from the local repository (mvn install them first if missing).
  # shellcheck disable=SC2086 # MVN_FLAGS (for example -o) is a word list
  mvn -q -B ${MVN_FLAGS:-} -pl turnstile-chaos package -DskipTests
fi
[[ -f $cp_file ]] || { echo "run.sh: $cp_file is missing: run without --no-build" >&2; exit 1; }

# The clock fault runs workers under libfaketime: install it now rather than fail mid-run.
if [[ -z $cli ]] && [[ -z $faults || ,$faults, == *,clock,* ]] && ! ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "run.sh: installing libfaketime for the clock fault" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null; }
  else
    echo "run.sh: the clock fault needs libfaketime: run 'apt-get install faketime' as root, or leave it out with --faults" >&2
    exit 1
  fi
fi

read -r -a java_opts <<<"${JAVA_OPTS:-}"
if [[ -n $cli ]]; then
  exec java "${java_opts[@]}" -cp "$module/target/classes:$(cat "$cp_file")" dev.turnstile.chaos.CliChaos \
    --out "$out" --work-dir "$module/target/cli-chaos" --command "$command" ${rounds:+--rounds "$rounds"} ${faults:+--faults "$faults"} \
    ${stores:+--stores "$stores"}
fi
exec java "${java_opts[@]}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "$module/target/classes:$(cat "$cp_file")" dev.turnstile.chaos.ChaosRun \
  --out "$out" --work-dir "$module/target/chaos" --command "$command" ${rounds:+--rounds "$rounds"} "${args[@]}"
