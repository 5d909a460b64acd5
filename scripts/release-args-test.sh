#!/usr/bin/env bash
# scripts/release.sh refuses bad requests before it makes anything: each case must exit non-zero,
# say what to fix, and leave nothing behind (no temporary directory, no output directory, no repository).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export GNUPGHOME="$scratch/empty-gnupg" TMPDIR="$scratch/tmp"
mkdir -m 700 "$GNUPGHOME"; mkdir "$TMPDIR"
out="$scratch/out"
failures=0
refused() { # description, expected text in the message, then the arguments
  local what="$1" expect="$2" rc=0; shift 2
  bash "$root/scripts/release.sh" --out "$out" "$@" >"$scratch/stdout" 2>"$scratch/stderr" || rc=$?
  if [ $rc -ne 0 ] && grep -q -- "$expect" "$scratch/stderr" && [ -z "$(ls -A "$TMPDIR")" ] && ! [ -e "$out" ] \
      && ! [ -e "$scratch/repo" ]; then
    echo "ok   refused: $what ($(head -1 "$scratch/stderr"))"
  else
    echo "FAIL refused: $what (exit $rc; stderr: $(cat "$scratch/stderr"); left: $(ls -A "$TMPDIR" "$scratch" | tr '\n' ' '))"
    failures=$((failures + 1))
  fi
}
repo="file://$scratch/repo"
refused "no --version" "--version is missing" --repo "$repo"
refused "a SNAPSHOT version" "is a snapshot" --version 0.2.0-SNAPSHOT --repo "$repo"
refused "a version that is not one" "is not a version" --version latest --repo "$repo"
refused "no --repo" "--repo is missing" --version 0.1.0
refused "a repository that is not a URL" "is not a URL" --version 0.1.0 --repo "$scratch/repo"
refused "a relative file URL" "not an absolute file URL" --version 0.1.0 --repo file://repo
refused "an unknown argument" "unknown argument" --version 0.1.0 --repo "$repo" --sign
refused "--key without a value" "--key needs a value" --version 0.1.0 --repo "$repo" --key
mkdir -p "$scratch/existing/dev/turnstile/turnstile-parent/0.1.0"
refused "a version the repository already has" "never overwritten" --version 0.1.0 --repo "file://$scratch/existing/"
refused "no gpg key at all" "no secret key to sign with" --version 0.1.0 --repo "$repo"
refused "a --key gpg does not have" "no secret key by that name" --version 0.1.0 --repo "$repo" --key 0xDEADBEEF
[ $failures -eq 0 ] && echo "release-args-test: all 11 refusals as expected" || { echo "release-args-test: $failures of 11 refusals not as expected"; exit 1; }
