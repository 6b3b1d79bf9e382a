#!/usr/bin/env bash
# PostgreSQL and Redis with the road networks loaded, for graph sources.
#
# Usage: scripts/sources.sh start|load|stop|status
#
#   start   installs PostgreSQL and Redis (Debian packages) when missing and
#           starts both on 127.0.0.1 with throw-away data directories
#   load    loads the road networks (RHIZOME_ROADS, default "luxembourg
#           heidelberg") into both: PostgreSQL schema <network> with tables
#           junction and road, Redis keys <network>:...  (docs/sources.md)
#   stop    stops both by pid and deletes their data directories
#   status  says what runs where
#
# Environment:
#   RHIZOME_PG_PORT      PostgreSQL port (default 54329)
#   RHIZOME_REDIS_PORT   Redis port (default 63799)
#   RHIZOME_SOURCES_DIR  where data, logs and pids live (default target/sources)
#   RHIZOME_DATASETS     the shared datasets (default ../shared/datasets)
#   RHIZOME_ROADS        networks to load: luxembourg, heidelberg
#
# PostgreSQL runs as the `postgres` system user (initdb refuses root; the
# user is created when missing), trusts loopback connections, and has a
# superuser `rhizome` and a database `roads`: connect with
#   postgresql://rhizome@127.0.0.1:$RHIZOME_PG_PORT/roads
# Redis: redis://127.0.0.1:$RHIZOME_REDIS_PORT/0 (no password, no persistence).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
pg_port="${RHIZOME_PG_PORT:-54329}"
redis_port="${RHIZOME_REDIS_PORT:-63799}"
dir="${RHIZOME_SOURCES_DIR:-$root/target/sources}"
datasets="${RHIZOME_DATASETS:-$root/../shared/datasets}"
roads="${RHIZOME_ROADS:-luxembourg heidelberg}"

die() { echo "sources.sh: $*" >&2; exit 1; }

pg_bin() {
    local bin
    bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
    [ -n "$bin" ] && [ -x "$bin/initdb" ] || return 1
    echo "$bin"
}

install_missing() {
    local want=()
    pg_bin >/dev/null || want+=(postgresql postgresql-client)
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null || want+=(redis-server redis-tools)
    command -v psql >/dev/null || want+=(postgresql-client)
    if [ "${#want[@]}" -gt 0 ]; then
        echo "installing ${want[*]}"
        [ "$(id -u)" = 0 ] || die "need root to apt-get install ${want[*]}"
        apt-get update -qq || die "apt-get update failed"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}" >/dev/null \
            || die "apt-get install ${want[*]} failed"
    fi
    pg_bin >/dev/null || die "PostgreSQL's initdb not found after installing"
    id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres \
        || die "cannot create the postgres system user"
}

as_postgres() { runuser -u postgres -- "$@"; }

pg_running() { [ -f "$dir/pg/data/postmaster.pid" ] && kill -0 "$(head -1 "$dir/pg/data/postmaster.pid")" 2>/dev/null; }
redis_running() { [ -f "$dir/redis/redis.pid" ] && kill -0 "$(cat "$dir/redis/redis.pid")" 2>/dev/null; }

psql_roads() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U rhizome -d roads "$@"; }

start() {
    install_missing
    mkdir -p "$dir"
    local bin
    bin="$(pg_bin)"
    if pg_running; then
        echo "PostgreSQL already runs (pid $(head -1 "$dir/pg/data/postmaster.pid"))"
    else
        rm -rf "$dir/pg"
        install -d -o postgres -g postgres -m 700 "$dir/pg"
        as_postgres test -w "$dir/pg" || die "the postgres user cannot write $dir/pg (a parent directory is not readable by others?)"
        as_postgres "$bin/initdb" -D "$dir/pg/data" -U rhizome --auth=trust -E UTF8 --no-sync >"$dir/pg/initdb.log" 2>&1 \
            || die "initdb failed: see $dir/pg/initdb.log"
        as_postgres "$bin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/postgres.log" -w -t 30 \
            -o "-p $pg_port -c listen_addresses=127.0.0.1 -k $dir/pg -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
            start >/dev/null || die "PostgreSQL did not start: see $dir/pg/postgres.log"
        psql -X -q -h 127.0.0.1 -p "$pg_port" -U rhizome -d postgres -c "CREATE DATABASE roads" \
            || die "cannot create database roads"
        echo "PostgreSQL on 127.0.0.1:$pg_port (pid $(head -1 "$dir/pg/data/postmaster.pid"))"
    fi
    if redis_running; then
        echo "Redis already runs (pid $(cat "$dir/redis/redis.pid"))"
    else
        rm -rf "$dir/redis"
        mkdir -p "$dir/redis"
        redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir/redis" --daemonize yes \
            --pidfile "$dir/redis/redis.pid" --logfile "$dir/redis/redis.log" --save '' --appendonly no \
            || die "Redis did not start: see $dir/redis/redis.log"
        for _ in $(seq 50); do
            redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1 && break
            sleep 0.1
        done
        redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null || die "Redis does not answer: see $dir/redis/redis.log"
        echo "Redis on 127.0.0.1:$redis_port (pid $(cat "$dir/redis/redis.pid"))"
    fi
}

# The .gr/.co files of a network name.
network_files() {
    case "$1" in
        luxembourg) echo "$datasets/roads/luxembourg-dimacs10/luxembourg" ;;
        heidelberg) echo "$datasets/roads/heidelberg-ors/heidelberg-scc" ;;
        *) die "unknown network $1 (known: luxembourg heidelberg)" ;;
    esac
}

# junction CSV: id,lat,lon (degrees); .co has v id lon lat in millionths.
junction_csv() {
    awk '$1 == "v" { printf "%d,%.6f,%.6f\n", $2, $4 / 1000000, $3 / 1000000 }' "$1.co"
}

# road CSV: id,source,target,distance; id = the arc's number in the file (from 1).
road_csv() {
    awk '$1 == "a" { n++; printf "%d,%d,%d,%d\n", n, $2, $3, $4 }' "$1.gr"
}

load_postgres() {
    local name="$1" base="$2"
    psql_roads <<SQL
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS $name CASCADE;
CREATE SCHEMA $name;
CREATE TABLE $name.junction (id integer PRIMARY KEY, lat double precision NOT NULL, lon double precision NOT NULL);
CREATE TABLE $name.road (id integer PRIMARY KEY, source integer NOT NULL, target integer NOT NULL, distance integer NOT NULL);
SQL
    junction_csv "$base" | psql_roads -c "COPY $name.junction FROM STDIN (FORMAT csv)"
    road_csv "$base" | psql_roads -c "COPY $name.road FROM STDIN (FORMAT csv)"
    psql_roads <<SQL
CREATE INDEX ON $name.road (source);
CREATE INDEX ON $name.road (target);
CREATE INDEX ON $name.junction (lat, lon);
ANALYZE $name.junction;
ANALYZE $name.road;
SQL
    echo "PostgreSQL: $name.junction $(psql_roads -At -c "SELECT count(*) FROM $name.junction") rows, $name.road $(psql_roads -At -c "SELECT count(*) FROM $name.road") rows"
}

# Redis keys (see docs/sources.md):
#   <name>:junction:<id>     hash {id, lat, lon}
#   <name>:junctions         sorted set of every id (score = id)
#   <name>:road:out:<id>     list of "<target>:<road id>:<distance>"
#   <name>:road:in:<id>      list of "<source>:<road id>:<distance>"
load_redis() {
    local name="$1" base="$2"
    redis-cli -h 127.0.0.1 -p "$redis_port" --scan --pattern "$name:*" \
        | xargs -r -n 1000 redis-cli -h 127.0.0.1 -p "$redis_port" del >/dev/null
    {
        junction_csv "$base" | awk -F, -v p="$name" '
            function resp(n, a,   i, s) { s = "*" n "\r\n"; for (i = 1; i <= n; i++) s = s "$" length(a[i]) "\r\n" a[i] "\r\n"; printf "%s", s }
            { a[1] = "HSET"; a[2] = p ":junction:" $1; a[3] = "id"; a[4] = $1; a[5] = "lat"; a[6] = $2; a[7] = "lon"; a[8] = $3; resp(8, a)
              a[1] = "ZADD"; a[2] = p ":junctions"; a[3] = $1; a[4] = $1; resp(4, a) }'
        road_csv "$base" | awk -F, -v p="$name" '
            function resp(n, a,   i, s) { s = "*" n "\r\n"; for (i = 1; i <= n; i++) s = s "$" length(a[i]) "\r\n" a[i] "\r\n"; printf "%s", s }
            { a[1] = "RPUSH"; a[2] = p ":road:out:" $2; a[3] = $3 ":" $1 ":" $4; resp(3, a)
              a[2] = p ":road:in:" $3; a[3] = $2 ":" $1 ":" $4; resp(3, a) }'
    } | redis-cli -h 127.0.0.1 -p "$redis_port" --pipe >"$dir/redis/load-$name.log" 2>&1 \
        || die "loading $name into Redis failed: see $dir/redis/load-$name.log"
    grep -q "errors: 0" "$dir/redis/load-$name.log" || die "Redis reported errors: see $dir/redis/load-$name.log"
    echo "Redis: $name $(redis-cli -h 127.0.0.1 -p "$redis_port" zcard "$name:junctions") junctions"
}

load() {
    pg_running || die "PostgreSQL does not run: scripts/sources.sh start first"
    redis_running || die "Redis does not run: scripts/sources.sh start first"
    for name in $roads; do
        local base
        base="$(network_files "$name")"
        [ -f "$base.gr" ] && [ -f "$base.co" ] || die "$base.gr/.co not found (set RHIZOME_DATASETS)"
        load_postgres "$name" "$base"
        load_redis "$name" "$base"
    done
}

# Sends `signal` to `pid` and waits up to 30 s for it to exit.
stop_pid() {
    local pid="$1" signal="$2" what="$3"
    kill "-$signal" "$pid" 2>/dev/null || return 0
    for _ in $(seq 300); do
        kill -0 "$pid" 2>/dev/null || { echo "stopped $what (pid $pid)"; return 0; }
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    echo "killed $what (pid $pid) after 30 s"
}

stop() {
    if pg_running; then
        stop_pid "$(head -1 "$dir/pg/data/postmaster.pid")" INT PostgreSQL
    fi
    if redis_running; then
        stop_pid "$(cat "$dir/redis/redis.pid")" TERM Redis
    fi
    rm -rf "$dir/pg" "$dir/redis"
}

status() {
    if pg_running; then echo "PostgreSQL: 127.0.0.1:$pg_port pid $(head -1 "$dir/pg/data/postmaster.pid")"; else echo "PostgreSQL: not running"; fi
    if redis_running; then echo "Redis: 127.0.0.1:$redis_port pid $(cat "$dir/redis/redis.pid")"; else echo "Redis: not running"; fi
}

case "${1:-}" in
    start) start ;;
    load) load ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|load|stop|status" >&2; exit 2 ;;
esac
