#!/usr/bin/env bash
# Start-up of `turnstile run --lock x -- true` of two checkouts side by side (a change's before and
# after), interleaved: in each round a bare JVM with the launcher's flags, then the two checkouts'
# bin/turnstile in alternating order; ratios per round against that round's bare JVM, and after ÷
# before per round. Build both first (bin/turnstile --version in each) and run alone on the machine:
#   flock /tmp/turnstile-mvn.lock turnstile-bench/startup-compare.sh 20 /path/to/before /path/to/after [JAVA_HOME...]
# default JDK: the java on PATH. Prints Markdown rows.
set -euo pipefail
if (( $# < 3 )); then
  echo "usage: turnstile-bench/startup-compare.sh ROUNDS BEFORE_CHECKOUT AFTER_CHECKOUT [JAVA_HOME...]" >&2
  exit 64
fi
runs=$1; old=$2; new=$3; shift 3
homes=("$@")
if [ ${#homes[@]} -eq 0 ]; then homes=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"); fi
state="$(mktemp -d)"; trap 'rm -rf "$state"' EXIT
export XDG_STATE_HOME="$state"; unset TURNSTILE_STORE TURNSTILE_JAVA_OPTS
flags=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData)
us() { local s=$EPOCHREALTIME e; "$@" >/dev/null 2>&1 || true; e=$EPOCHREALTIME; echo $(( (${e/./} - ${s/./}) )); }
stats() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {printf "%.1f ms [%.1f–%.1f]", a[int((NR+1)/2)]/1000, a[1]/1000, a[NR]/1000}'; }
ratios() { paste <(tr ' ' '\n' <<<"$1" | grep -v '^$') <(tr ' ' '\n' <<<"$2" | grep -v '^$') | awk '{print $1/$2}' | sort -g | awk '{a[NR]=$1} END {printf "%.2f× [%.2f–%.2f]", a[int((NR+1)/2)], a[1], a[NR]}'; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for home in "${homes[@]}"; do
  v="$(sed -n 's/^JAVA_VERSION="\(.*\)"/\1/p' "$home/release")"
  for c in "$old" "$new"; do JAVA_HOME="$home" "$c/bin/turnstile" run --lock warm -- true; JAVA_HOME="$home" "$c/bin/turnstile" run --lock warm -- true; done
  b=""; o=""; n=""
  for ((i = 0; i < runs; i++)); do
    b+="$(us "$home/bin/java" "${flags[@]}" -version) "
    if ((i % 2)); then
      o+="$(us env JAVA_HOME="$home" "$old/bin/turnstile" run --lock x -- true) "
      n+="$(us env JAVA_HOME="$home" "$new/bin/turnstile" run --lock x -- true) "
    else
      n+="$(us env JAVA_HOME="$home" "$new/bin/turnstile" run --lock x -- true) "
      o+="$(us env JAVA_HOME="$home" "$old/bin/turnstile" run --lock x -- true) "
    fi
  done
  echo "| $v | bare | $(stats "$b") | 1 |"
  echo "| $v | before | $(stats "$o") | $(ratios "$o" "$b") |"
  echo "| $v | after | $(stats "$n") | $(ratios "$n" "$b") |"
  echo "| $v | after ÷ before | | $(ratios "$n" "$o") |"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
