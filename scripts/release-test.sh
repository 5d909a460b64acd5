#!/usr/bin/env bash
# Proves the release command end to end, cheaply, after the suite (CI runs it from scripts/test.sh):
#   1. scripts/release.sh releases the tree's version without -SNAPSHOT into a file repository under
#      target/release-check/, signed with a throwaway key made in a temporary GNUPGHOME;
#   2. every deployed file's signature verifies and its .sha1 matches; the Central Portal bundle holds
#      the same files, and each module its jar, pom, sources and Javadoc;
#   3. an application outside the build (scripts/release-check/: turnstile-core, turnstile-jdbc and
#      sqlite-jdbc through the released BOM) is built with a fresh local repository in which the
#      turnstile artifacts can only come from the released repository (every other artifact is served
#      from the local repository the build used), and takes and releases a lock;
#   4. _remote.repositories in that fresh local repository says each turnstile artifact came from the
#      released repository; and the working tree is as it was.
# The release is made from a clone of HEAD (git clone --shared), as release.sh refuses uncommitted
# changes and the suite before it may leave some.
# Also runs scripts/release-args-test.sh (the refusals). Environment: MVN (default mvn), M2_REPO
# (the local repository the build used; default ~/.m2/repository).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
mvn_cmd="${MVN:-mvn}"
m2="${M2_REPO:-$HOME/.m2/repository}"
[ -d "$m2" ] || { echo "release-test: no local repository at $m2: set M2_REPO" >&2; exit 2; }
started=$SECONDS

failures=0
check() { local what="$1"; shift; if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi; }

bash scripts/release-args-test.sh || failures=$((failures + 1))

current="$(sed -n '/<parent>/,/<\/parent>/d; s|^  <version>\(.*\)</version>.*|\1|p' pom.xml | head -1)"
version="${current%-SNAPSHOT}"
base="$root/target/release-check"
rm -rf "$base"
mkdir -p "$base"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
status_before="$(git status --porcelain)"

export GNUPGHOME="$scratch/gnupg"
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key 'Turnstile release check (throwaway) <release-check@invalid>' ed25519 sign 1d 2>/dev/null
fpr="$(gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr/ {print $10; exit}')"

# From a clone of HEAD (as CI's own checkout is): release.sh refuses a tree with uncommitted changes,
# and the suite that just ran may have left some (it is not this test's business).
clone="$scratch/clone"
git clone -q --shared "$root" "$clone"
clone_status="$(git -C "$clone" status --porcelain)"
repo="$base/repo"
# Static analysis ran on these very sources in the suite before: the release build here skips its checks
# (Error Prone stays on the compiler's path, checking nothing), which keeps CI under 30 minutes.
MAVEN_ARGS="${MAVEN_ARGS:-} -Dturnstile.errorprone=-XepDisableAllChecks" \
  bash "$clone/scripts/release.sh" --version "$version" --repo "file://$repo" --key "$fpr" --out "$base/out" | sed 's/^/  /'
check "release.sh left the working tree as it was" test "$(git -C "$clone" status --porcelain)" = "$clone_status" \
  -a "$(git status --porcelain)" = "$status_before"

# 2. signatures, checksums, the bundle
bad=0 files=0
while IFS= read -r -d '' f; do
  files=$((files + 1))
  gpg --batch --quiet --verify "$f.asc" "$f" 2>/dev/null || { echo "  bad signature: ${f#"$repo/"}"; bad=1; }
  [ "$(sha1sum <"$f" | cut -c1-40)" = "$(cut -c1-40 "$f.sha1")" ] || { echo "  bad sha1: ${f#"$repo/"}"; bad=1; }
done < <(find "$repo/dev/turnstile" -path "*/$version/*" -type f \( -name '*.jar' -o -name '*.pom' \) -print0)
check "all $files deployed jars and poms have a good signature by the release key and a matching .sha1" test $bad -eq 0 -a $files -gt 0
unzip -Z1 "$base/out/turnstile-$version-bundle.zip" | sort >"$scratch/bundle"
(cd "$repo" && find dev -path "*/$version/*" -type f ! -name 'maven-metadata*' ! -name '*.asc.*' | sort) >"$scratch/deployed"
check "the bundle holds exactly the deployed files with their .asc, .md5 and .sha1" diff "$scratch/bundle" "$scratch/deployed"
incomplete=""
for dir in "$repo"/dev/turnstile/*/"$version"; do
  a="$(basename "$(dirname "$dir")")"
  case "$a" in turnstile-parent|turnstile-bom) wanted=(pom) ;; *) wanted=(pom jar sources.jar javadoc.jar) ;; esac
  for w in "${wanted[@]}"; do
    case "$w" in pom|jar) f="$a-$version.$w" ;; *) f="$a-$version-$w" ;; esac
    grep -qx "dev/turnstile/$a/$version/$f.asc" "$scratch/bundle" || incomplete+=" $f"
  done
done
check "each published module is in the bundle with jar, pom, sources and Javadoc, signed (missing:${incomplete:- none})" test -z "$incomplete"
for f in "turnstile-$version.tar.gz" "turnstile-$version.zip"; do check "the release wrote $f" test -s "$base/out/$f"; done

# 3. an outside application, against the released repository only
cat >"$scratch/settings.xml" <<SETTINGS
<settings>
  <mirrors>
    <!-- everything but the release comes from the local repository the build filled: offline, and no
         turnstile artifact can come from anywhere but the released repository -->
    <mirror><id>build-local</id><mirrorOf>*,!turnstile-release</mirrorOf><url>file://$m2</url></mirror>
  </mirrors>
  <profiles>
    <profile>
      <id>release-check</id>
      <repositories>
        <repository><id>turnstile-release</id><url>file://$repo</url>
          <releases><enabled>true</enabled></releases><snapshots><enabled>false</enabled></snapshots></repository>
      </repositories>
    </profile>
  </profiles>
  <activeProfiles><activeProfile>release-check</activeProfile></activeProfiles>
</settings>
SETTINGS
app="$scratch/app"
cp -R scripts/release-check "$app"
fresh="$scratch/m2"
if (cd "$app" && "$mvn_cmd" -B -q -Dstyle.color=never -s "$scratch/settings.xml" -Dmaven.repo.local="$fresh" \
    -Dturnstile.version="$version" compile dependency:build-classpath -Dmdep.outputFile=cp.txt) >"$scratch/app.log" 2>&1; then
  out="$(cd "$app" && java -cp "target/classes:$(cat cp.txt)" example.App "$scratch/locks.db" 2>&1)" && rc=0 || rc=$?
  check "the outside application takes and releases a lock (exit $rc: $(echo $out))" \
    test $rc -eq 0 -a "$(echo "$out" | tail -1)" = "released release-check"
else
  sed 's/^/  /' "$scratch/app.log" | tail -30
  check "the outside application builds against the release" false
fi
wrong=""
for a in turnstile-core turnstile-jdbc turnstile-bom turnstile-parent; do
  f="$fresh/dev/turnstile/$a/$version/_remote.repositories"
  grep -q '>turnstile-release=$' "$f" 2>/dev/null && ! grep -qv -e '^#' -e '>turnstile-release=$' "$f" || wrong+=" $a"
done
check "turnstile-core, -jdbc, -bom and -parent came from the released repository (_remote.repositories; wrong:${wrong:- none})" test -z "$wrong"
others="$(cd "$fresh/dev/turnstile" && ls -d -- */*/ | grep -v "/$version/$" || true)"
check "no other turnstile version was resolved (${others:-none})" test -z "$others"

echo "release-test: $((SECONDS - started)) s"
[ $failures -eq 0 ] && echo "release-test: all passed" || { echo "release-test: $failures failed"; exit 1; }
