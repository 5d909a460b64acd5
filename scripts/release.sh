#!/usr/bin/env bash
# Builds a release of every published module from the current commit, signs it, deploys it to a
# Maven repository and writes what the Central Portal's upload takes (docs/releasing.md):
#
#   scripts/release.sh --version 0.1.0 --repo URL [--key KEY] [--out DIR]
#
#   --version  the release version, X.Y.Z (a suffix such as -rc.1 is allowed; -SNAPSHOT is not)
#   --repo     the Maven repository to publish to: file:///absolute/dir, or http(s)://… (files are
#              sent with HTTP PUT, as Maven does; credentials from TURNSTILE_REPO_USER and
#              TURNSTILE_REPO_PASSWORD, else ~/.netrc). A version already there is refused.
#   --key      the gpg key to sign with (id, fingerprint or user id); default: gpg's default key.
#              A passphrase comes from MAVEN_GPG_PASSPHRASE (or gpg-agent).
#   --out      where the bundle and the CLI's archives go; default: target/release/VERSION
#
# The working tree is never modified: the commit (HEAD; uncommitted changes to tracked files are
# refused) is exported to a temporary directory, the version is set there, and Maven runs there with
# -Prelease (gpg signatures; sources and Javadoc jars as always) on the published modules only (those
# without maven.deploy.skip, as scripts/check-publishable.sh counts them), without compiling or
# running tests, and deploys to a staging file repository in that directory. Only when the whole
# build has succeeded is the staged release published to --repo (so a failed build publishes
# nothing), with each artifact's maven-metadata.xml merged with the one already there. Out of it
# come, in --out:
#   turnstile-VERSION-bundle.zip          the Maven repository layout of every artifact with its .asc,
#                                         .md5 and .sha1: upload it to the Central Portal
#   turnstile-VERSION.tar.gz, .zip        the CLI's distribution archive
#   turnstile_VERSION_all.deb             its Debian package (where dpkg-deb is installed)
# Environment: MVN (the Maven command, default mvn; extra Maven flags in MAVEN_ARGS).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
me="release"
die() { echo "$me: $*" >&2; exit 2; }
usage="usage: scripts/release.sh --version X.Y.Z --repo file:///dir|https://host/path [--key KEY] [--out DIR]"

version="" repo="" key="" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --version|--repo|--key|--out)
      [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value. $usage"
      case "$1" in --version) version="$2" ;; --repo) repo="$2" ;; --key) key="$2" ;; --out) out="$2" ;; esac
      shift 2 ;;
    --version=*|--repo=*|--key=*|--out=*)
      value="${1#*=}"; [ -n "$value" ] || die "${1%%=*} needs a value. $usage"
      case "$1" in --version=*) version="$value" ;; --repo=*) repo="$value" ;; --key=*) key="$value" ;; --out=*) out="$value" ;; esac
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
repo="${repo%/}"
if [ -n "$repo_dir" ]; then
  repo_dir="${repo_dir%/}"
  if [ -e "$repo_dir" ] && ! [ -d "$repo_dir" ]; then die "--repo $repo: $repo_dir exists and is not a directory"; fi
  if [ -d "$repo_dir/dev/turnstile/turnstile-parent/$version" ]; then
    die "--repo $repo already has turnstile $version: a released version is never overwritten; release another version"
  fi
else
  command -v curl >/dev/null || die "curl is not installed: it publishes to $repo (or publish to a file:/// repository)"
  if curl -fsI --netrc-optional ${TURNSTILE_REPO_USER:+-u "$TURNSTILE_REPO_USER:${TURNSTILE_REPO_PASSWORD:-}"} \
      "$repo/dev/turnstile/turnstile-parent/$version/turnstile-parent-$version.pom" >/dev/null 2>&1; then
    die "--repo $repo already has turnstile $version: a released version is never overwritten; release another version"
  fi
fi

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
  -DaltDeploymentRepository="turnstile-staging::file://$work/staging")
[ -z "$key" ] || maven_flags+=(-Dgpg.keyname="$key")
echo "$me: mvn deploy of ${#modules[@]} modules: ${list}"
if ! (cd "$work/src" && "$mvn_cmd" "${maven_flags[@]}" ${MAVEN_ARGS:-} deploy) >"$work/build.log" 2>&1; then
  mkdir -p "$out"; cp "$work/build.log" "$out/build.log"
  grep -E '^\[(ERROR|FATAL)\]' "$work/build.log" | head -n 30 >&2 || tail -n 30 "$work/build.log" >&2
  echo "$me: the release build failed; its log: $out/build.log" >&2
  exit 1
fi

# Publishing: every staged file, then each artifact's maven-metadata.xml with the versions already in
# --repo (latest and release: this one), with its checksums.
http_get() { curl -fsS --netrc-optional ${TURNSTILE_REPO_USER:+-u "$TURNSTILE_REPO_USER:${TURNSTILE_REPO_PASSWORD:-}"} "$@"; }
put() { # staged relative path, then the file to send
  if [ -n "$repo_dir" ]; then
    mkdir -p "$repo_dir/$(dirname "$1")" && cp "$2" "$repo_dir/$1.part" && mv "$repo_dir/$1.part" "$repo_dir/$1"
  else
    http_get -o /dev/null -T "$2" "$repo/$1" || { echo "$me: uploading $1 to $repo failed" >&2; return 1; }
  fi
}
merged_metadata() { # group path, artifact, existing metadata (or empty file) -> stdout
  local g="$1" a="$2" existing="$3" v
  {
    sed -n 's|.*<version>\(.*\)</version>.*|\1|p' "$existing"
    echo "$version"
  } | awk '!seen[$0]++' >"$work/versions"
  printf '<?xml version="1.0" encoding="UTF-8"?>\n<metadata>\n  <groupId>%s</groupId>\n  <artifactId>%s</artifactId>\n' "${g//\//.}" "$a"
  printf '  <versioning>\n    <latest>%s</latest>\n    <release>%s</release>\n    <versions>\n' "$version" "$version"
  while read -r v; do printf '      <version>%s</version>\n' "$v"; done <"$work/versions"
  printf '    </versions>\n    <lastUpdated>%s</lastUpdated>\n  </versioning>\n</metadata>\n' "$(date -u +%Y%m%d%H%M%S)"
}
publish() {
  local f rel dir a g meta
  while IFS= read -r -d '' f; do
    rel="${f#"$work/staging/"}"
    put "$rel" "$f"
  done < <(find "$work/staging" -type f ! -name 'maven-metadata*' -print0 | sort -z)
  for dir in "$work/staging"/dev/turnstile/*/; do
    a="$(basename "$dir")"; g="dev/turnstile"; meta="$g/$a/maven-metadata.xml"
    : >"$work/existing"
    if [ -n "$repo_dir" ]; then
      [ ! -f "$repo_dir/$meta" ] || cp "$repo_dir/$meta" "$work/existing"
    else
      http_get -o "$work/existing" "$repo/$meta" 2>/dev/null || : >"$work/existing"
    fi
    merged_metadata "$g" "$a" "$work/existing" >"$work/metadata.xml"
    md5sum <"$work/metadata.xml" | cut -d' ' -f1 >"$work/metadata.xml.md5"
    sha1sum <"$work/metadata.xml" | cut -d' ' -f1 >"$work/metadata.xml.sha1"
    put "$meta" "$work/metadata.xml" && put "$meta.md5" "$work/metadata.xml.md5" && put "$meta.sha1" "$work/metadata.xml.sha1"
  done
}

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
  (cd "$work/staging" && zip -q -r -X -D "$bundle.tmp" dev)
else
  (cd "$work/staging" && jar --create --no-manifest --file "$bundle.tmp" dev)
fi
mv "$bundle.tmp" "$bundle"

# Only now, with everything built, signed and staged: publish.
publish || { echo "$me: publishing to $repo failed part way; the bundle is in $out" >&2; exit 1; }

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
