#!/usr/bin/env bash
# Checks bin/turnstile's start-up preparations against a built jar, without Maven: a copy of the
# launcher in a scratch tree (no .git there, so the jar counts as built) with the jar beside it.
#   - the first run extracts the SQLite library and makes the JDK's archive, and prints nothing else;
#   - two first runs at once both succeed and leave one archive;
#   - a replaced jar makes the old archive and library stale: the next run remakes them;
#   - an archive that does not match the jar (made for another one, yet newer) is refused by the
#     JVM silently, and the run still works.
# The same launcher in the installed layout (bin/turnstile beside lib/turnstile-all.jar, as the
# distribution archive and the .deb have it), under a path with a space, reached through a chain of
# symlinks, with the install directory read-only (as an unprivileged user, where this runs as root):
#   - two first runs at once both succeed, and leave one archive and one library in the user's cache;
#   - nothing is written to the install directory;
#   - the archive is really used (-Xshare:on / -XX:AOTMode=on would fail otherwise);
#   - with HOME unwritable (no cache possible) it runs all the same, silently;
#   - with stdout closed, `locks` fails with 74 and `run` still runs its command.
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
# The installed layout.
as_user=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
for home in "${homes[@]}"; do
  scratch="$(mktemp -d)"
  trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
  chmod 755 "$scratch"
  prefix="$scratch/opt dir/turnstile"
  mkdir -p "$prefix/bin" "$prefix/lib" "$scratch/links" "$scratch/home" "$scratch/elsewhere"
  cp "$root/bin/turnstile" "$prefix/bin/"
  cp "$built" "$prefix/lib/turnstile-all.jar"
  echo test >"$prefix/lib/VERSION"
  ln -s "$prefix/bin/turnstile" "$scratch/links/one"
  ln -s "$scratch/links/one" "$scratch/links/turnstile"
  chmod -R a-w "$prefix"
  [ ${#as_user[@]} -eq 0 ] || chown 65534:65534 "$scratch/home" "$scratch/elsewhere"
  before="$(ls -lR "$prefix")"
  u() { (cd "$scratch/elsewhere" && "${as_user[@]}" env ${home:+JAVA_HOME="$home"} HOME="$scratch/home" XDG_CACHE_HOME= \
      XDG_STATE_HOME="$scratch/home/state" TURNSTILE_STORE= "$scratch/links/turnstile" "$@"); }
  echo "== installed, ${home:-java on PATH}${as_user:+, as nobody}"
  u run --lock a -- sh -c 'echo one' >"$scratch/out1" 2>"$scratch/err1" &
  u run --lock b -- sh -c 'echo two' >"$scratch/out2" 2>"$scratch/err2" &
  wait
  check "installed, concurrent first runs: both ran" grep -qx one "$scratch/out1"
  check "installed, concurrent first runs: both ran (2)" grep -qx two "$scratch/out2"
  check "installed, concurrent first runs: nothing on stderr" test ! -s "$scratch/err1" -a ! -s "$scratch/err2"
  cache=("$scratch"/home/.cache/turnstile/test-*)
  check "installed: one cache directory for the jar" test ${#cache[@]} -eq 1 -a -d "${cache[0]}"
  check "installed: library extracted in the cache" test -s "${cache[0]}/native/libsqlitejdbc.so"
  archives=("${cache[0]}"/jvm/*)
  check "installed: one archive in the cache, no temporary files (${archives[*]##*/})" test ${#archives[@]} -eq 1 -a -f "${archives[0]}"
  check "installed: the install directory is unchanged" test "$(ls -lR "$prefix")" = "$before"
  case "${archives[0]}" in *.aot) strict=-XX:AOTMode=on ;; *) strict=-Xshare:on ;; esac
  out="$(TURNSTILE_JAVA_OPTS=$strict u run --lock a -- echo used 2>&1)" || true
  check "installed: the archive is used ($strict: $out)" test "$out" = used
  out="$( (cd "$scratch/elsewhere" && "${as_user[@]}" env ${home:+JAVA_HOME="$home"} HOME=/proc/nonexistent XDG_CACHE_HOME= \
      XDG_STATE_HOME="$scratch/home/state" TURNSTILE_STORE= "$scratch/links/turnstile" run --lock c -- echo nocache) 2>&1)" || true
  check "installed, HOME unwritable: runs, silently ($out)" test "$out" = nocache
  rc=0; u locks >&- 2>/dev/null || rc=$?
  check "installed, stdout closed: locks exits 74 (was $rc)" test $rc -eq 74
  rc=0; u run --lock d -- sh -c ": >'$scratch/home/ran'" >&- || rc=$?
  check "installed, stdout closed: run runs its command (exit $rc)" test $rc -eq 0 -a -e "$scratch/home/ran"
  chmod -R u+w "$scratch"; rm -rf "$scratch"
  trap - EXIT
done
[ "$failures" -eq 0 ] && echo "all passed" || { echo "$failures failed"; exit 1; }
