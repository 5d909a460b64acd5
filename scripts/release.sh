#!/usr/bin/env bash
# Builds a release of every published module from the current commit, signs it, deploys it to a
# Maven repository and writes what the Central Portal's upload takes (docs/releasing.md):
#
#   scripts/release.sh --version 0.1.0 --repo URL [--key KEY] [--out DIR] [--repo-id ID]
#
#   --version  the release version, X.Y.Z (a suffix such as -rc.1 is allowed; -SNAPSHOT is not)
#   --repo     where to deploy: file:///absolute/dir, or http(s)://… (credentials: a <server> with
#              the --repo-id in ~/.m2/settings.xml)
#   --key      the gpg key to sign with (id, fingerprint or user id); default: gpg's default key.
#              A passphrase comes from MAVEN_GPG_PASSPHRASE (or gpg-agent).
#   --out      where the bundle and the CLI's archives go; default: target/release/VERSION
#   --repo-id  the repository id Maven records and looks up credentials by; default: turnstile-release
#
# The working tree is never modified: the commit (HEAD; uncommitted changes to tracked files are
# refused) is exported to a temporary directory, the version is set there, and Maven runs there with
# -Prelease (gpg signatures, sources and Javadoc jars, deploy at the end of the build) on the
# published modules only (those without maven.deploy.skip, as scripts/check-publishable.sh counts
# them), without compiling or running tests. Out of it come, in --out:
#   turnstile-VERSION-bundle.zip          the Maven repository layout of every artifact with its .asc,
#                                         .md5 and .sha1: upload it to the Central Portal
#   turnstile-VERSION.tar.gz, .zip        the CLI's distribution archive
#   turnstile_VERSION_all.deb             its Debian package (where dpkg-deb is installed)
# Environment: MVN (the Maven command, default mvn; extra Maven flags in MAVEN_ARGS).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
me="release"
die() { echo "$me: $*" >&2; exit 2; }
usage="usage: scripts/release.sh --version X.Y.Z --repo file:///dir|https://host/path [--key KEY] [--out DIR] [--repo-id ID]"

version="" repo="" key="" out="" repo_id="turnstile-release"
while [ $# -gt 0 ]; do
  case "$1" in
    --version|--repo|--key|--out|--repo-id)
      [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value. $usage"
      case "$1" in --version) version="$2" ;; --repo) repo="$2" ;; --key) key="$2" ;; --out) out="$2" ;; --repo-id) repo_id="$2" ;; esac
      shift 2 ;;
    --version=*|--repo=*|--key=*|--out=*|--repo-id=*)
      value="${1#*=}"; [ -n "$value" ] || die "${1%%=*} needs a value. $usage"
      case "$1" in --version=*) version="$value" ;; --repo=*) repo="$value" ;; --key=*) key="$value" ;; --out=*) out="$value" ;; --repo-id=*) repo_id="$value" ;; esac
      shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) die "unknown argument '$1'. $usage" ;;
  esac
done

# Everything is checked before anything is made, so a refusal leaves nothing behind.
[ -n "$version" ] || die "--version is missing: say which version to release, e.g. --version 0.1.0. $usage"
case "$version" in
  *SNAPSHOT*) die "--version $version is a snapshot: a release needs a release version, e.g. --version ${version%%-SNAPSHOT*}" ;;
esac
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([.-][0-9A-Za-z]+([.-][0-9A-Za-z]+)*)?$ ]] \
  || die "--version '$version' is not a version: use X.Y.Z, optionally with a suffix such as 0.1.0-rc.1"
[ -n "$repo" ] || die "--repo is missing: say where to deploy, e.g. --repo file://\$PWD/target/release-repo. $usage"
case "$repo" in
  file:///*) repo_dir="${repo#file://}" ;;
  file://*) die "--repo '$repo' is not an absolute file URL: use file:///absolute/path (three slashes)" ;;
  http://?*|https://?*) repo_dir="" ;;
  *) die "--repo '$repo' is not a URL: use file:///absolute/path or https://host/path" ;;
esac
[[ $repo != *[[:space:]]* ]] || die "--repo '$repo' has white space in it: Maven cannot deploy to that URL; use a path without spaces"
[[ $repo_id =~ ^[A-Za-z0-9._-]+$ ]] || die "--repo-id '$repo_id' must be letters, digits, '.', '_' or '-'"
if [ -n "$repo_dir" ] && [ -e "$repo_dir" ] && ! [ -d "$repo_dir" ]; then die "--repo $repo: $repo_dir exists and is not a directory"; fi

command -v gpg >/dev/null || die "gpg is not installed: install GnuPG (apt-get install gnupg) and import the release key"
if [ -n "$key" ]; then
  gpg --batch --list-secret-keys -- "$key" >/dev/null 2>&1 \
    || die "--key '$key': gpg has no secret key by that name${GNUPGHOME:+ in GNUPGHOME=$GNUPGHOME}: import it (gpg --import) or name another (gpg --list-secret-keys)"
else
  gpg --batch --list-secret-keys --with-colons 2>/dev/null | grep -q '^sec' \
    || die "gpg has no secret key to sign with${GNUPGHOME:+ in GNUPGHOME=$GNUPGHOME}: import the release key (gpg --import) or name one with --key"
fi
mvn_cmd="${MVN:-mvn}"
command -v "$mvn_cmd" >/dev/null || die "Maven ('$mvn_cmd') is not installed: install Maven 3.8+ or set MVN"
command -v git >/dev/null || die "git is not installed: the release is made from a git commit"
git -C "$root" rev-parse --verify -q HEAD >/dev/null || die "$root is not a git checkout with a commit: a release is made from a commit"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  die "the working tree has uncommitted changes to tracked files: commit or stash them (a release is built from the commit, HEAD)"
fi
current="$(sed -n '/<parent>/,/<\/parent>/d; s|^  <version>\(.*\)</version>.*|\1|p' "$root/pom.xml" | head -1)"
[ -n "$current" ] || die "cannot read the project version from $root/pom.xml"
out="${out:-$root/target/release/$version}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
commit="$(git -C "$root" rev-parse HEAD)"

started=$SECONDS
work="$(mktemp -d "${TMPDIR:-/tmp}/turnstile-release.XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "$me: turnstile $version from commit $commit (the tree says $current), in $work"

# The commit, in a directory of its own; the version set in every pom there.
mkdir "$work/src"
git -C "$root" archive --format=tar HEAD | tar -xf - -C "$work/src"
while IFS= read -r -d '' pom; do
  sed -i "s|<version>$current</version>|<version>$version</version>|g" "$pom"
done < <(find "$work/src" -name pom.xml -print0)

# The published modules, as check-publishable.sh counts them: every module without maven.deploy.skip.
modules=(.)
for dir in $(sed -n 's|^ *<module>\(.*\)</module>.*|\1|p' "$work/src/pom.xml"); do
  grep -q '<maven.deploy.skip>true</maven.deploy.skip>' "$work/src/$dir/pom.xml" || modules+=("$dir")
done
for m in "${modules[@]}"; do
  if grep -n 'SNAPSHOT' "$work/src/$m/pom.xml" >&2; then die "$m/pom.xml still names a SNAPSHOT (above) after setting $version: a release cannot depend on one"; fi
done
list="$(IFS=,; echo "${modules[*]}")"

mkdir "$work/staging"
maven_flags=(-B -Dstyle.color=never -Prelease -pl "$list" -Dmaven.test.skip=true -Dmaven.install.skip=true
  -Dturnstile.staging.dir="$work/staging" -DaltDeploymentRepository="$repo_id::$repo")
[ -z "$key" ] || maven_flags+=(-Dgpg.keyname="$key")
echo "$me: mvn deploy of ${#modules[@]} modules: ${list}"
if ! (cd "$work/src" && "$mvn_cmd" "${maven_flags[@]}" ${MAVEN_ARGS:-} deploy) >"$work/build.log" 2>&1; then
  mkdir -p "$out"; cp "$work/build.log" "$out/build.log"
  grep -E '^\[(ERROR|FATAL)\]' "$work/build.log" | head -n 30 >&2 || tail -n 30 "$work/build.log" >&2
  echo "$me: the release build failed; its log: $out/build.log" >&2
  exit 1
fi

# The bundle: the staged repository layout of this version, each file with its .asc, .md5 and .sha1
# (no maven-metadata.xml, no checksums of signatures: the Portal makes and wants neither).
find "$work/staging" \( -name 'maven-metadata*' -o -name '*.asc.md5' -o -name '*.asc.sha1' \
  -o -name '*.asc.sha256' -o -name '*.asc.sha512' \) -delete
missing=0
while IFS= read -r -d '' f; do
  for suffix in asc md5 sha1; do
    [ -f "$f.$suffix" ] || { echo "$me: ${f#"$work/staging/"} has no .$suffix" >&2; missing=1; }
  done
done < <(find "$work/staging" -type f ! -name '*.asc' ! -name '*.md5' ! -name '*.sha1' ! -name '*.sha256' ! -name '*.sha512' -print0)
[ $missing -eq 0 ] || { echo "$me: the staged release is incomplete (above)" >&2; exit 1; }
mkdir -p "$out"
bundle="$out/turnstile-$version-bundle.zip"
rm -f "$bundle"
if command -v zip >/dev/null; then
  (cd "$work/staging" && zip -q -r -X "$bundle.tmp" dev)
else
  (cd "$work/staging" && jar --create --no-manifest --file "$bundle.tmp" dev)
fi
mv "$bundle.tmp" "$bundle"

# The command line's archives, from the same build, and its Debian package.
cli="$work/src/turnstile-cli/target"
cp "$cli/turnstile-$version.tar.gz" "$cli/turnstile-$version.zip" "$out/"
if command -v dpkg-deb >/dev/null; then
  bash "$root/scripts/build-deb.sh" "$out/turnstile-$version.tar.gz" "$out" >/dev/null
else
  echo "$me: dpkg-deb is not installed: no .deb made" >&2
fi
printf '%s\n' "$commit" >"$out/COMMIT"
artifacts=$(find "$work/staging" -type f \( -name '*.jar' -o -name '*.pom' \) | wc -l)
echo "$me: deployed $artifacts signed files of ${#modules[@]} modules to $repo ($((SECONDS - started)) s)"
echo "$me: wrote $out:"
(cd "$out" && ls -l -- *)
