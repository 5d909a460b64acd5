#!/usr/bin/env bash
# Makes sure what the tests need is installed and running: a JDK and Maven, PostgreSQL on
# 127.0.0.1:5432 (trust auth, database "test"), MariaDB on 127.0.0.1:3306 (root, empty password,
# database "test"). Starts a stopped server; installs a missing one with apt-get (as root).
# Redis on 127.0.0.1:6379 (no persistence) and the redis-server binary for the extra nodes the Redis
# tests start themselves; libfaketime for the chaos suite; the zookeeper package (a server the chaos
# suite and benchmarks start themselves); Debian's chromium and chromium-driver for the console's
# browser tests (Selenium drives /usr/bin/chromedriver; nothing downloads a browser). Idempotent and quiet when everything is already up. Exits non-zero if a server cannot be had:
# the tests never skip a missing server.
set -euo pipefail

say() { echo "services: $*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then as_root apt-get update -qq >/dev/null; apt_updated=1; fi
  say "installing $*"
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}
wait_for() { # wait_for SECONDS COMMAND...
  local n=$(( $1 * 5 )); shift
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}

# --- toolchain -------------------------------------------------------------------------------
command -v javac >/dev/null || apt_install openjdk-17-jdk-headless
command -v mvn >/dev/null || apt_install maven

# libfaketime, for the chaos suite's client clock-jump fault and turnstile-mongo's server-clock test
# (a mongo-java-server JVM an hour behind). MongoDB itself needs nothing here: no mongod can be installed
# from Debian's packages, so the Mongo tests run mongo-java-server, which Maven fetches from Maven Central.
ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || apt_install faketime

# ZooKeeper server (Debian's zookeeper package, 3.8), for the chaos suite and the benchmarks, which
# start their own servers from /usr/share/zookeeper with their own config, ports and dataDir under
# /tmp (the unit tests use Curator's in-JVM testing server). Nothing is started here.
[ -x /usr/share/zookeeper/bin/zkServer.sh ] || apt_install zookeeper

# Chromium and its WebDriver, for the console's browser tests (turnstile-cli's ConsoleBrowserTest)
[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] || apt_install --no-install-recommends chromium chromium-driver

# --- PostgreSQL --------------------------------------------------------------------------------
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
pg_sql() { psql -h 127.0.0.1 -U postgres -d postgres -tAc "$1"; }
if ! command -v pg_isready >/dev/null || ! pg_up; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    apt_install postgresql
    hba=$(ls /etc/postgresql/*/main/pg_hba.conf | head -1)
    # Test servers only: trust local TCP connections, as the machine's own server does.
    as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
    as_root sed -i -E 's/^(local\s+all\s+(postgres|all)\s+)peer/\1trust/' "$hba"
  fi
  say "starting PostgreSQL"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  wait_for 30 pg_up || { say "PostgreSQL did not come up on 127.0.0.1:5432"; exit 1; }
fi
pg_sql "select 1" >/dev/null || { say "cannot log in to PostgreSQL as postgres on 127.0.0.1 (trust auth expected)"; exit 1; }
[ "$(pg_sql "select 1 from pg_database where datname = 'test'")" = 1 ] || pg_sql "create database test" >/dev/null

# --- MariaDB -----------------------------------------------------------------------------------
maria() { mariadb -uroot -h127.0.0.1 -P3306 "$@"; }
maria_up() { maria -e "select 1"; }
if ! command -v mariadb >/dev/null || ! maria_up >/dev/null 2>&1; then
  [ -x /usr/sbin/mariadbd ] || apt_install mariadb-server
  say "starting MariaDB"
  as_root mkdir -p /run/mysqld && as_root chown mysql:mysql /run/mysqld 2>/dev/null || true
  as_root start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
  if ! wait_for 30 maria_up; then
    # A fresh install lets root in through the socket only: allow an empty password on TCP.
    as_root mariadb -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD(''); FLUSH PRIVILEGES;" 2>/dev/null || true
    wait_for 10 maria_up || { say "MariaDB did not accept root on 127.0.0.1:3306"; exit 1; }
  fi
fi
maria -e "create database if not exists test" >/dev/null

# --- Redis -------------------------------------------------------------------------------------
command -v redis-server >/dev/null && command -v redis-cli >/dev/null || apt_install redis-server
redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]; }
if ! redis_up; then
  say "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  wait_for 15 redis_up || { say "Redis did not come up on 127.0.0.1:6379"; exit 1; }
fi
