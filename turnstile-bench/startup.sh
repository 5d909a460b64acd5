#!/usr/bin/env bash
# Start-up cost of `turnstile run --lock x -- true` on the embedded SQLite store, next to
# `flock FILE true`, interleaved run by run so machine noise hits both alike.
# usage: turnstile-bench/startup.sh [RUNS]   (default 30; prints a Markdown table)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-30}"
state="$(mktemp -d)"
trap 'rm -rf "$state"' EXIT
export XDG_STATE_HOME="$state"
"$root/bin/turnstile" --version >/dev/null            # build the jar and the CDS archive if needed
"$root/bin/turnstile" run --lock warm -- true          # create the embedded database once
jar="$root/turnstile-cli/target/turnstile-all.jar"

ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
declare -A samples
names=(flock turnstile turnstile-no-cds)
for ((i = 0; i < runs; i++)); do
  samples[flock]+="$(ms flock "$state/flock.lock" true) "
  samples[turnstile]+="$(ms "$root/bin/turnstile" run --lock bench -- true) "
  samples[turnstile-no-cds]+="$(ms java -jar "$jar" run --lock bench -- true) "
done

echo "| command | median | p90 | min | ratio to flock (median) |"
echo "| --- | ---: | ---: | ---: | ---: |"
flock_median=""
for n in "${names[@]}"; do
  read -r median p90 min < <(tr ' ' '\n' <<<"${samples[$n]}" | grep -v '^$' | sort -n |
    awk '{a[NR]=$1} END {printf "%d %d %d\n", a[int((NR+1)/2)], a[int(NR*0.9+0.5)], a[1]}')
  [ -z "$flock_median" ] && flock_median=$median
  awk -v n="$n" -v m="$median" -v p="$p90" -v lo="$min" -v f="$flock_median" 'BEGIN {
    printf "| %s | %.1f ms | %.1f ms | %.1f ms | %s |\n", n, m / 1000, p / 1000, lo / 1000, (n == "flock" ? "1x" : sprintf("%.0fx", m / f)) }'
done
echo
echo "$runs runs each, interleaved; \`turnstile\` is bin/turnstile (C1 only, Serial GC, CDS archive of the classes a run loads); \`turnstile-no-cds\` is plain \`java -jar\`."
