#!/usr/bin/env bash
# Checks, after `mvn verify`, what Maven Central asks of every published module: a sources jar, a
# Javadoc jar (the build made it with doclint on), a stable Automatic-Module-Name in the jar's
# manifest, and a line in turnstile-bom. A module is published unless its pom sets
# maven.deploy.skip; the BOM must list exactly the published modules. Every package of a published
# module must be @NullMarked (NullAway checks only those).
set -euo pipefail
cd "$(dirname "$0")/.."

fail=0
complain() { echo "check-publishable: $*" >&2; fail=1; }

modules=$(sed -n 's|^ *<module>\(.*\)</module>.*|\1|p' pom.xml)
published=()
for dir in $modules; do
  pom="$dir/pom.xml"
  artifact=$(sed -n '/<parent>/,/<\/parent>/d; s|^  <artifactId>\(.*\)</artifactId>.*|\1|p' "$pom" | head -1)
  [[ $artifact == turnstile-bom ]] && continue
  grep -q '<maven.deploy.skip>true</maven.deploy.skip>' "$pom" && continue
  published+=("$artifact")
  jar=$(ls "$dir"/target/"$artifact"-*.jar 2>/dev/null | grep -Ev -- '-(sources|javadoc|all|tests)\.jar$' | head -1 || true)
  if [[ -z $jar ]]; then complain "$dir: no jar in $dir/target (run mvn verify first)"; continue; fi
  base=${jar%.jar}
  [[ -s $base-sources.jar ]] || complain "$dir: no sources jar ($base-sources.jar)"
  [[ -s $base-javadoc.jar ]] || complain "$dir: no Javadoc jar ($base-javadoc.jar)"
  name=$(unzip -p "$jar" META-INF/MANIFEST.MF | tr -d '\r' | sed -n 's/^Automatic-Module-Name: //p')
  if [[ ! $name =~ ^dev\.turnstile(\.[a-z][a-z0-9]*)*$ ]]; then
    complain "$dir: Automatic-Module-Name is '${name}'; set <turnstile.module.name>dev.turnstile.…</turnstile.module.name> in $pom"
  fi
  grep -q "<artifactId>$artifact</artifactId>" turnstile-bom/pom.xml \
    || complain "$dir: $artifact is published but turnstile-bom/pom.xml does not list it"
  # NullAway checks only @NullMarked packages (root pom): a published package without the mark goes unchecked
  while IFS= read -r pkg; do
    grep -qs '^@NullMarked' "$pkg/package-info.java" \
      || complain "$pkg: no @NullMarked package-info.java, so NullAway does not check it; add one as the other packages have"
  done < <(find "$dir/src/main/java" -name '*.java' -printf '%h\n' 2>/dev/null | sort -u)
done
for listed in $(sed -n '/<dependencyManagement>/,/<\/dependencyManagement>/s|.*<artifactId>\(turnstile-[a-z0-9-]*\)</artifactId>.*|\1|p' turnstile-bom/pom.xml); do
  [[ " ${published[*]} " == *" $listed "* ]] \
    || complain "turnstile-bom lists $listed, which is not a published module of this build"
done
(( fail == 0 )) && echo "check-publishable: ${#published[@]} published modules have sources, Javadoc, a module name, a BOM entry and null-marked packages: ${published[*]}"
exit $fail
