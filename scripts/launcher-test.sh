#!/usr/bin/env bash
# Checks bin/turnstile's start-up preparations against a built jar, without Maven: a copy of the
# launcher in a scratch tree (no .git there, so the jar counts as built) with the jar beside it.
#   - the first run extracts the SQLite library and makes the JDK's archive, and prints nothing else;
#   - two first runs at once both succeed and leave one archive;
#   - a replaced jar makes the old archive and library stale: the next run remakes them;
#   - an archive that does not match the jar (made for another one, yet newer) is refused by the
#     JVM silently, and the run still works.
# usage: scripts/launcher-test.sh [JAVA_HOME...]   (default: the java on PATH)
# Needs turnstile-cli/target/turnstile-all.jar (run bin/turnstile --version once).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
built="$root/turnstile-cli/target/turnstile-all.jar"
[ -f "$built" ] || { echo "no $built: run bin/turnstile --version first" >&2; exit 2; }
homes=("$@")
[ ${#homes[@]} -gt 0 ] || homes=("")

failures=0
check() { # description, then a command that must succeed
  local what="$1"; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}

for home in "${homes[@]}"; do
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/bin" "$scratch/turnstile-cli/target" "$scratch/state"
  cp "$root/bin/turnstile" "$scratch/bin/"
  cp "$built" "$scratch/turnstile-cli/target/turnstile-all.jar"
  echo none >"$scratch/turnstile-cli/target/turnstile-all.commit"
  target="$scratch/turnstile-cli/target"
  t() { env ${home:+JAVA_HOME="$home"} XDG_STATE_HOME="$scratch/state" TURNSTILE_STORE= "$scratch/bin/turnstile" "$@"; }
  echo "== ${home:-java on PATH}"

  # Two first runs at once: each must run its command once; one archive results.
  t run --lock a -- sh -c 'echo one' >"$scratch/out1" 2>"$scratch/err1" &
  t run --lock b -- sh -c 'echo two' >"$scratch/out2" 2>"$scratch/err2" &
  wait
  check "concurrent first runs: both ran" grep -qx one "$scratch/out1"
  check "concurrent first runs: both ran (2)" grep -qx two "$scratch/out2"
  check "concurrent first runs: nothing on stderr" test ! -s "$scratch/err1" -a ! -s "$scratch/err2"
  check "native library extracted" test -s "$target/native/libsqlitejdbc.so"
  archives=("$target"/jvm/*.jsa "$target"/jvm/*.aot)
  archive=""
  for a in "${archives[@]}"; do [ -f "$a" ] && archive="$a"; done
  check "one archive made" test -n "$archive"
  check "no temporary or failure files" test -z "$(find "$target/jvm" "$target/native" -name '*.tmp' -o -name '*.jsa.*' -o -name '*.aot.*')"


  # Replace the jar (same content, new time, as a rebuild would): both derived files go stale.
  sleep 1
  cp "$built" "$target/turnstile-all.jar.new" && mv "$target/turnstile-all.jar.new" "$target/turnstile-all.jar"
  out="$(t run --lock a -- echo rebuilt 2>&1)"
  check "after a new jar: runs, prints only the command's output" test "$out" = rebuilt
  check "after a new jar: archive remade" test "$archive" -nt "$target/turnstile-all.jar"
  check "after a new jar: library re-extracted" test "$target/native/.extracted" -nt "$target/turnstile-all.jar"

  # A mismatched archive that looks fresh: the JVM must refuse it without a word.
  cp "$archive" "$scratch/good"
  printf 'not an archive' >"$archive"
  touch "$archive"
  out="$(t run --lock a -- echo refused 2>&1)"
  check "corrupt archive: still runs, silently" test "$out" = refused
  # ...and one made for a different jar (the JVM checks the jar's size and time).
  cp "$scratch/good" "$archive"
  echo "another jar" >"$scratch/extra.txt"
  (cd "$scratch" && "${home:-$(dirname "$(readlink -f "$(command -v java)")")/..}/bin/jar" uf "$target/turnstile-all.jar" extra.txt)
  touch -d '-1 hour' "$target/turnstile-all.jar" # a different jar that looks older than the archive
  out="$(t run --lock a -- echo foreign 2>&1)"
  check "archive of another jar: still runs, silently" test "$out" = foreign

  rm -rf "$scratch"
  trap - EXIT
done
[ "$failures" -eq 0 ] && echo "all passed" || { echo "$failures failed"; exit 1; }
