#!/usr/bin/env bash
# Checks the command line as a user installs it, away from the source: the distribution archive
# (turnstile-cli/target/turnstile-VERSION.tar.gz, made by `mvn package`) unpacked into one scratch
# prefix and the Debian package (made here by scripts/build-deb.sh) unpacked with `dpkg -x` into
# another. Each runs from an unrelated directory with a PATH that has java and a few base tools but
# no mvn and no git:
#   - `turnstile run --lock demo -- echo hi` on the embedded SQLite store exits 0 and prints hi;
#   - a second run on the same lock while the first holds it exits 75;
#   - --help works, the install directory is left as it was (its derived files go to the user's
#     cache), and a HOME where no cache can be made still runs;
#   - `man -l` renders each man page; the bash completion sources and completes `turnstile r<TAB>`;
#     the zsh one too, where zsh is installed.
# usage: scripts/dist-test.sh   (after `mvn package` of turnstile-cli; CI runs it after the suite)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
shopt -s nullglob
archives=("$root"/turnstile-cli/target/turnstile-*.tar.gz)
shopt -u nullglob
[ ${#archives[@]} -eq 1 ] || { echo "dist-test: expected one turnstile-cli/target/turnstile-*.tar.gz, found ${#archives[@]}: run 'mvn -DskipTests -pl turnstile-cli -am package' first" >&2; exit 2; }
archive="${archives[0]}"

failures=0
check() { # description, then a command that must succeed
  local what="$1"; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
started=$SECONDS

deb="$(bash "$root/scripts/build-deb.sh" "$archive" "$scratch/deb-out")"
mkdir -p "$scratch/archive" "$scratch/deb" "$scratch/elsewhere" "$scratch/path"
tar -xzf "$archive" -C "$scratch/archive"
dpkg -x "$deb" "$scratch/deb"
check "the .deb's /usr/bin/turnstile is a relative symlink into /usr/share/turnstile" \
  test "$(readlink "$scratch/deb/usr/bin/turnstile")" = ../share/turnstile/bin/turnstile
check "the .deb's man pages are gzipped" test -s "$scratch/deb/usr/share/man/man1/turnstile-run.1.gz"

# A PATH with what a user's machine has, minus Maven and git.
java_bin="$(readlink -f "$(command -v java)")"
for tool in bash sh env readlink mkdir mktemp rm mv cat flock perl sleep true echo; do
  ln -s "$(type -P "$tool")" "$scratch/path/$tool"
done
ln -s "$java_bin" "$scratch/path/java"
PATH_NO_BUILD="$scratch/path"
check "the test PATH has no mvn and no git" \
  env PATH="$PATH_NO_BUILD" bash -c '! command -v mvn && ! command -v git' >/dev/null

for layout in archive deb; do
  if [ $layout = archive ]; then
    prefix=("$scratch"/archive/turnstile-*); prefix="${prefix[0]}"
    turnstile="$prefix/bin/turnstile"; install_dir="$prefix"
    manpages=("$prefix"/share/man/man1/*.1)
    bash_completion="$prefix/share/bash-completion/completions/turnstile"
    zsh_completion="$prefix/share/zsh/site-functions/_turnstile"
  else
    turnstile="$scratch/deb/usr/bin/turnstile"; install_dir="$scratch/deb/usr/share/turnstile"
    manpages=("$scratch"/deb/usr/share/man/man1/*.1.gz)
    bash_completion="$scratch/deb/usr/share/bash-completion/completions/turnstile"
    zsh_completion="$scratch/deb/usr/share/zsh/vendor-completions/_turnstile"
  fi
  echo "== $layout: $turnstile"
  home="$scratch/home-$layout"; mkdir -p "$home"
  ts() { (cd "$scratch/elsewhere" && env -u JAVA_HOME -u TURNSTILE_STORE PATH="$PATH_NO_BUILD" HOME="$home" \
      XDG_CACHE_HOME= XDG_STATE_HOME="$home/state" "$turnstile" "$@"); }
  before="$(cd "$install_dir" && ls -lR)"

  out="$(ts run --lock demo -- echo hi 2>&1)" && rc=0 || rc=$?
  check "run --lock demo -- echo hi: exit 0 (was $rc)" test $rc -eq 0
  check "run --lock demo -- echo hi: prints hi (printed: $out)" test "$out" = hi
  check "its derived files went to the user's cache" test -n "$(find "$home/.cache/turnstile" -name libsqlitejdbc.so)"

  # the holder holds until the second run is over (at most 30 s)
  ts run --lock demo -- sh -c ": >'$scratch/held-$layout'; i=0; while [ ! -e '$scratch/done-$layout' ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i+1)); done" >/dev/null 2>&1 &
  holder=$!
  for _ in $(seq 100); do [ -e "$scratch/held-$layout" ] && break; sleep 0.1; done
  ts run --lock demo -- echo second >"$scratch/second" 2>&1 && rc=0 || rc=$?
  check "a second run on the held lock exits 75 (was $rc)" test $rc -eq 75
  check "...without running its command" bash -c "! grep -q second '$scratch/second'"
  : >"$scratch/done-$layout"
  wait $holder && rc=0 || rc=$?
  check "the holder exits 0 (was $rc)" test $rc -eq 0

  check "--help prints the usage" bash -c "$(declare -f ts); $(declare -p scratch home turnstile PATH_NO_BUILD); ts --help | grep -q '^Usage: turnstile'"
  check "--version prints the version" bash -c "$(declare -f ts); $(declare -p scratch home turnstile PATH_NO_BUILD); ts --version | grep -q '^turnstile [0-9]'"
  check "the install directory is left as it was" test "$(cd "$install_dir" && ls -lR)" = "$before"

  # No cache can be made (HOME under a regular file: even root cannot mkdir there): runs all the same.
  : >"$scratch/not-a-dir"
  out="$(cd "$scratch/elsewhere" && env PATH="$PATH_NO_BUILD" HOME="$scratch/not-a-dir/home" XDG_CACHE_HOME= \
    XDG_STATE_HOME="$home/state" "$turnstile" run --lock nocache -- echo still 2>&1)" && rc=0 || rc=$?
  check "no writable cache directory: runs, prints only the command's output (rc $rc: $out)" test $rc -eq 0 -a "$out" = still

  for page in "${manpages[@]}"; do
    name="${page##*/}"; name="${name%%.*}"
    if command -v man >/dev/null; then
      check "man -l $name renders, with no troff warning" \
        bash -c "MANWIDTH=80 MAN_KEEP_FORMATTING= man -l '$page' 2>'$scratch/man.err' | grep -q '^NAME' && ! [ -s '$scratch/man.err' ]"
    elif command -v groff >/dev/null; then
      check "groff -man renders $name, with no warning" \
        bash -c "zcat -f '$page' | groff -man -Tutf8 -ww 2>'$scratch/man.err' | grep -q 'NAME' && ! [ -s '$scratch/man.err' ]"
    else
      echo "skip man page $name: neither man nor groff is installed"
    fi
  done

  check "bash completion: sources and registers for turnstile" \
    bash -c "source '$bash_completion' && complete -p turnstile | grep -q _complete_turnstile"
  replies="$(bash -c "source '$bash_completion'; COMP_WORDS=(turnstile r); COMP_CWORD=1; COMP_LINE='turnstile r'; COMP_POINT=11; _complete_turnstile turnstile r turnstile; printf '%s\n' \"\${COMPREPLY[@]}\"" | sort | tr '\n' ' ')"
  check "bash completion: turnstile r<TAB> offers release and run (offered: $replies)" test "$replies" = "release run "
  if command -v zsh >/dev/null; then
    check "zsh completion: loads through bashcompinit and defines the completion" \
      zsh -fc "autoload -U compinit && compinit -u -D; fpath=('${zsh_completion%/*}' \$fpath); autoload -U _turnstile; source <(sed '\$d' '$zsh_completion') && whence -w _complete_turnstile >/dev/null"
  else
    echo "skip zsh completion: zsh is not installed"
  fi
done

echo "dist-test: $((SECONDS - started)) s; archive $(du -k "$archive" | cut -f1) KiB, .deb $(du -k "$deb" | cut -f1) KiB"
[ "$failures" -eq 0 ] && echo "dist-test: all passed" || { echo "dist-test: $failures failed"; exit 1; }
