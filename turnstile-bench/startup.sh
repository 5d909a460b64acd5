#!/usr/bin/env bash
# Start-up of `turnstile run --lock x -- true` on the embedded SQLite store, next to a bare JVM
# started with the launcher's flags (`java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
# -XX:-UsePerfData -version`) and next to `flock FILE true`, per JDK. The commands take turns
# within each round, so machine noise hits all alike; each turnstile time is also divided by the
# bare JVM time of its own round. `java -jar` is the same jar without the launcher (no archive, no
# extracted library, default JIT and GC).
# usage: turnstile-bench/startup.sh [RUNS] [JAVA_HOME...]
#   default 30 runs; default JDKs: the java on PATH and /usr/lib/jvm/temurin-25* if present.
# Hold /tmp/turnstile-mvn.lock while it runs on a shared machine (no Maven build meanwhile):
#   flock /tmp/turnstile-mvn.lock turnstile-bench/startup.sh 30
# Prints a Markdown table. The jar must be built (bin/turnstile --version builds it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-30}"; shift || true
homes=("$@")
if [ ${#homes[@]} -eq 0 ]; then
  homes=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  for h in /usr/lib/jvm/temurin-25*; do [ -x "$h/bin/java" ] && homes+=("$h"); done
fi
state="$(mktemp -d)"
trap 'rm -rf "$state"' EXIT
export XDG_STATE_HOME="$state"
unset TURNSTILE_STORE TURNSTILE_JAVA_OPTS
jar="$root/turnstile-cli/target/turnstile-all.jar"
flags=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData)

# One sample in microseconds, timed with bash's own clock (no process for the timing itself).
us() {
  local s=$EPOCHREALTIME e
  "$@" >/dev/null 2>&1 || true
  e=$EPOCHREALTIME
  echo $(( (${e/./} - ${s/./}) ))
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
declare -A samples
rows=()
for home in "${homes[@]}"; do
  v="$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$home/release")"
  JAVA_HOME="$home" "$root/bin/turnstile" run --lock warm -- true   # makes the JDK's archive, the database
  JAVA_HOME="$home" "$root/bin/turnstile" run --lock warm -- true
  rows+=("$v|bare|$home/bin/java ${flags[*]} -version" "$v|turnstile|bin/turnstile run --lock x -- true"
         "$v|java -jar|java -jar turnstile-all.jar run --lock x -- true")
  for ((i = 0; i < runs; i++)); do
    samples["$v|bare"]+="$(us "$home/bin/java" "${flags[@]}" -version) "
    samples["$v|turnstile"]+="$(us env JAVA_HOME="$home" "$root/bin/turnstile" run --lock x -- true) "
    samples["$v|java -jar"]+="$(us "$home/bin/java" -jar "$jar" run --lock x -- true) "
    samples["$v|flock"]+="$(us flock "$state/x.lock" true) "
  done
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

# median [min–max] in ms of a sample list, and of the per-round ratios of two lists
stats() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n |
  awk '{a[NR]=$1} END {printf "%.1f ms [%.1f–%.1f]", a[int((NR+1)/2)]/1000, a[1]/1000, a[NR]/1000}'; }
ratios() { paste <(tr ' ' '\n' <<<"$1" | grep -v '^$') <(tr ' ' '\n' <<<"$2" | grep -v '^$') |
  awk '{print $1/$2}' | sort -g | awk '{a[NR]=$1} END {printf "%.2f× [%.2f–%.2f]", a[int((NR+1)/2)], a[1], a[NR]}'; }

echo "| JDK | command | time: median [min–max] | ÷ bare JVM of the same round: median [min–max] |"
echo "| --- | --- | ---: | ---: |"
for row in "${rows[@]}"; do
  IFS='|' read -r v kind cmd <<<"$row"
  if [ "$kind" = bare ]; then r="1"; else r="$(ratios "${samples["$v|$kind"]}" "${samples["$v|bare"]}")"; fi
  echo "| $v | \`$cmd\` | $(stats "${samples["$v|$kind"]}") | $r |"
done
v="${rows[0]%%|*}"
echo "| — | \`flock FILE true\` | $(stats "${samples["$v|flock"]}") | $(ratios "${samples["$v|flock"]}" "${samples["$v|bare"]}") (JDK $v) |"
echo
echo "$runs rounds per JDK, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average before $load_before, after $load_after."
