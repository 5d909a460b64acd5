#!/usr/bin/env bash
# Builds the Debian package of the command line, turnstile_VERSION_all.deb, from the distribution
# archive that turnstile-cli's `package` makes (turnstile-cli/target/turnstile-VERSION.tar.gz):
#   /usr/share/turnstile/{bin/turnstile,lib/turnstile-all.jar,lib/VERSION}   the installed layout
#   /usr/bin/turnstile -> ../share/turnstile/bin/turnstile                    (relative symlink)
#   /usr/share/man/man1/turnstile*.1.gz, /usr/share/bash-completion/completions/turnstile,
#   /usr/share/zsh/vendor-completions/_turnstile, /usr/share/doc/turnstile/{copyright,changelog.gz}
# A Maven version's '-' becomes '~' (0.1.0-SNAPSHOT -> 0.1.0~SNAPSHOT, which sorts before 0.1.0).
# Needs dpkg-deb (1.19+, for --root-owner-group: no fakeroot needed) and gzip.
# usage: scripts/build-deb.sh [ARCHIVE.tar.gz] [OUTPUT_DIR]   (default: the one in turnstile-cli/target, and that directory)
# Environment: TURNSTILE_DEB_MAINTAINER (the Maintainer field; set it for a real release).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

archive="${1:-}"
if [ -z "$archive" ]; then
  shopt -s nullglob
  found=("$root"/turnstile-cli/target/turnstile-*.tar.gz)
  shopt -u nullglob
  [ ${#found[@]} -eq 1 ] || {
    echo "build-deb: expected one turnstile-cli/target/turnstile-*.tar.gz, found ${#found[@]}: build it with" \
      "'mvn -DskipTests -pl turnstile-cli -am package', or name the archive" >&2
    exit 2
  }
  archive="${found[0]}"
fi
[ -f "$archive" ] || { echo "build-deb: no such archive: $archive" >&2; exit 2; }
out="${2:-$(dirname "$archive")}"
command -v dpkg-deb >/dev/null || { echo "build-deb: dpkg-deb is not installed (apt-get install dpkg)" >&2; exit 69; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$archive" -C "$work"
src=("$work"/turnstile-*)
[ ${#src[@]} -eq 1 ] && [ -f "${src[0]}/lib/turnstile-all.jar" ] || { echo "build-deb: $archive is not a turnstile distribution archive" >&2; exit 2; }
src="${src[0]}"
read -r mvn_version <"$src/lib/VERSION"
version="${mvn_version//-/\~}"

pkg="$work/pkg"
umask 022
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/usr/share/turnstile/bin" "$pkg/usr/share/turnstile/lib" \
  "$pkg/usr/share/man/man1" "$pkg/usr/share/bash-completion/completions" "$pkg/usr/share/zsh/vendor-completions" \
  "$pkg/usr/share/doc/turnstile"
install -m 0755 "$src/bin/turnstile" "$pkg/usr/share/turnstile/bin/turnstile"
install -m 0644 "$src/lib/turnstile-all.jar" "$src/lib/VERSION" "$pkg/usr/share/turnstile/lib/"
ln -s ../share/turnstile/bin/turnstile "$pkg/usr/bin/turnstile"
for page in "$src"/share/man/man1/*.1; do
  gzip -9n <"$page" >"$pkg/usr/share/man/man1/${page##*/}.gz"
done
install -m 0644 "$src/share/bash-completion/completions/turnstile" "$pkg/usr/share/bash-completion/completions/turnstile"
install -m 0644 "$src/share/zsh/site-functions/_turnstile" "$pkg/usr/share/zsh/vendor-completions/_turnstile"
chmod 0644 "$pkg"/usr/share/man/man1/*.gz

cat >"$pkg/usr/share/doc/turnstile/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: turnstile
Source: https://github.com/turnstile-dev/turnstile

Files: *
Copyright: 2026 The Turnstile developers
License: Apache-2.0

Files: usr/share/turnstile/lib/turnstile-all.jar
Copyright: The Turnstile developers, and the authors of the libraries bundled in the jar:
 picocli, SLF4J, sqlite-jdbc, PostgreSQL JDBC, MariaDB Connector/J, MySQL Connector/J, H2,
 Lettuce, Netty, Project Reactor, the MongoDB Java driver, Apache ZooKeeper and Curator,
 Jackson; each under its own licence (Apache-2.0, MIT, BSD-2-Clause, LGPL-2.1, GPL-2 with the
 Universal FOSS Exception, EPL-1.0/MPL-2.0), as its pom in Maven Central states.
License: Apache-2.0

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
COPYRIGHT
printf 'turnstile (%s) unstable; urgency=medium\n\n  * Built from turnstile %s.\n\n -- %s  %s\n' \
  "$version" "$mvn_version" "${TURNSTILE_DEB_MAINTAINER:-The Turnstile developers <turnstile@users.noreply.github.com>}" \
  "$(date -R -u -r "$src/lib/turnstile-all.jar")" | gzip -9n >"$pkg/usr/share/doc/turnstile/changelog.gz"
chmod 0644 "$pkg"/usr/share/doc/turnstile/*
# lintian's table of class-file versions stops before Java 22 (a multi-release class of Jackson's)
mkdir -p "$pkg/usr/share/lintian/overrides"
printf 'turnstile: unknown-java-class-version *\n' >"$pkg/usr/share/lintian/overrides/turnstile"
chmod 0644 "$pkg/usr/share/lintian/overrides/turnstile"

installed_size="$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)"
cat >"$pkg/DEBIAN/control" <<CONTROL
Package: turnstile
Version: $version
Architecture: all
Maintainer: ${TURNSTILE_DEB_MAINTAINER:-The Turnstile developers <turnstile@users.noreply.github.com>}
Installed-Size: $installed_size
Depends: default-jre-headless (>= 2:1.17) | java17-runtime-headless
Suggests: bash-completion
Section: utils
Priority: optional
Homepage: https://github.com/turnstile-dev/turnstile
Description: distributed flock for cron and scripts
 turnstile run --lock NAME -- CMD runs CMD in one place at a time across hosts,
 holding a lease on a shared store: SQLite (the embedded default), PostgreSQL,
 MariaDB/MySQL, H2, Redis (standalone, Sentinel, Cluster, Redlock), MongoDB or
 ZooKeeper. The lease is renewed while the command runs, and the command is
 stopped before the lease can expire. Also: turnstile locks, release, schema.
CONTROL

mkdir -p "$out"
deb="$out/turnstile_${version}_all.deb"
# gzip, not xz: the jar is already compressed, and xz would take ~20 s to win nothing
dpkg-deb --root-owner-group -Zgzip --build "$pkg" "$deb.tmp" >/dev/null
mv "$deb.tmp" "$deb"
echo "$deb"
