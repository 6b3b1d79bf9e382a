#!/usr/bin/env bash
# PostgreSQL and Redis with the road networks loaded, for graph sources.
#
# Usage: scripts/sources.sh start|load|load-ldbc|load-places|stop|status
#
#   start   installs PostgreSQL and Redis (Debian packages) when missing and
#           starts both on 127.0.0.1 with throw-away data directories
#   load    loads the road networks (RHIZOME_ROADS, default "luxembourg
#           heidelberg") into both: PostgreSQL schema <network> with tables
#           junction and road, Redis keys <network>:...  (docs/sources.md)
#   load-ldbc  loads the small LDBC SNB set (ldbc-tiny) into both:
#           PostgreSQL schema ldbc with a table per CSV, Redis keys ldbc:...
#           (docs/sources.md, examples/sources/ldbc-*.json)
#   load-places  loads five places whose labels come from a column (and
#           bus lines without a key column) into both: PostgreSQL schema places, Redis keys places:...
#           (docs/sources.md, examples/sources/places-*.json)
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

# The junction CSV in the order of a Hilbert curve over latitude and
# longitude (2^24 cells a side over the globe, about 2 m), so junctions
# near each other on the map are near each other on disk: a region query
# reads few heap pages.
junction_csv_spatial() {
    junction_csv "$1" | awk -F, '
        function hilbert(lat, lon,   n, x, y, s, rx, ry, d, t) {
            n = 16777216
            x = int((lon + 180) / 360 * n); y = int((lat + 90) / 180 * n)
            if (x >= n) x = n - 1; if (y >= n) y = n - 1; if (x < 0) x = 0; if (y < 0) y = 0
            d = 0
            for (s = n / 2; s >= 1; s /= 2) {
                rx = int(x / s) % 2; ry = int(y / s) % 2
                d += s * s * (rx ? 3 - ry : ry)
                x = x % s; y = y % s
                if (ry == 0) { if (rx == 1) { x = s - 1 - x; y = s - 1 - y }; t = x; x = y; y = t }
            }
            return d
        }
        { printf "%.0f,%s\n", hilbert($2, $3), $0 }' | sort -t, -k1,1n -k2,2n | cut -d, -f2-
}

# The road CSV in the order of its start junctions in `spatial` (the
# junction CSV of junction_csv_spatial), then of its id: a junction's
# roads share a page, and the roads of a region few pages. Each row ends
# with its start junction's lat,lon (the same text as in the junction
# CSV, so the same double precision values).
road_csv_spatial() {
    local base="$1" spatial="$2"
    road_csv "$base" \
        | awk -F, 'NR == FNR { rank[$1] = FNR; place[$1] = $2 "," $3; next } { printf "%d,%s,%s\n", rank[$2], $0, place[$2] }' "$spatial" - \
        | sort -t, -k1,1n -k2,2n | cut -d, -f2-
}

load_postgres() {
    local name="$1" base="$2"
    # Physical layout (docs/sources.md, "The road networks in PostgreSQL"):
    # both tables in a spatial order, covering indexes so that the lists
    # and the box read no table page, and COPY FREEZE (into tables created
    # in the same transaction) so that every page is marked visible at
    # once (a VACUUM right after loading left the visibility map empty)
    # and index-only scans need no heap fetch. Spatial keys for the box
    # templates of examples/sources/roads-postgres.json: `band` (the
    # latitude in 0.005-degree bands, about 560 m) on junction, and on
    # road its start junction's place and band, each indexed by (band,
    # longitude), so a box reads one index range per band instead of one
    # descent per junction.
    local junctions="$dir/junction-$name.csv" roads="$dir/road-$name.csv"
    junction_csv_spatial "$base" >"$junctions"
    road_csv_spatial "$base" "$junctions" >"$roads"
    psql_roads <<SQL
SET client_min_messages = warning;
BEGIN;
DROP SCHEMA IF EXISTS $name CASCADE;
CREATE SCHEMA $name;
CREATE TABLE $name.junction (id integer PRIMARY KEY, lat double precision NOT NULL, lon double precision NOT NULL,
  band integer GENERATED ALWAYS AS (floor(lat * 200)::integer) STORED);
CREATE TABLE $name.road (id integer PRIMARY KEY, source integer NOT NULL, target integer NOT NULL, distance integer NOT NULL,
  source_lat double precision NOT NULL, source_lon double precision NOT NULL,
  source_band integer GENERATED ALWAYS AS (floor(source_lat * 200)::integer) STORED);
\copy $name.junction (id, lat, lon) FROM '$junctions' (FORMAT csv, FREEZE)
\copy $name.road (id, source, target, distance, source_lat, source_lon) FROM '$roads' (FORMAT csv, FREEZE)
COMMIT;
CREATE INDEX road_source ON $name.road (source) INCLUDE (target, id, distance);
CREATE INDEX road_target ON $name.road (target) INCLUDE (source, id, distance);
CREATE INDEX road_source_band ON $name.road (source_band, source_lon) INCLUDE (source_lat, source, target, id, distance);
CREATE INDEX junction_band ON $name.junction (band, lon) INCLUDE (lat, id);
VACUUM (ANALYZE) $name.junction;
VACUUM (ANALYZE) $name.road;
SQL
    rm -f "$junctions" "$roads"
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

# The small LDBC SNB set (ldbc-tiny, neo4j-admin headers, `|`-separated).
# PostgreSQL schema `ldbc`: a table per CSV, named as the file without
# `_0_0.csv` in lower case (person, person_knows_person, ...). Node tables
# have the header's property names as quoted columns (`"firstName"`), `id`
# as primary key, `:long`/`:int` as bigint/integer, `string[]` as text[]
# (`;`-separated in the file) and the `:LABEL` column as `type`.
# Relationship tables have `src`, `dst` (indexed) and their properties.
# Empty fields are NULL. Redis: a hash `ldbc:<entity>:<id>` per node (place
# and organisation by subtype: `ldbc:city:<id>`, `ldbc:company:<id>`), without
# empty fields and without `:LABEL`; a sorted set `ldbc:<entity>:keys` of
# every id; and per relationship file two lists per node,
# `ldbc:<table>:out:<src>` of `<dst>[:<property>]` and
# `ldbc:<table>:in:<dst>` of `<src>[:<property>]`.
ldbc_files() {
    local d="$datasets/ldbc-tiny"
    [ -d "$d/static" ] && [ -d "$d/dynamic" ] || die "$d not found (set RHIZOME_DATASETS)"
    ls "$d"/static/*_0_0.csv "$d"/dynamic/*_0_0.csv
}

ldbc_table() { basename "$1" _0_0.csv | tr 'A-Z' 'a-z'; }

# CREATE TABLE for a CSV from its header.
ldbc_create() {
    local file="$1" table
    table="$(ldbc_table "$file")"
    head -1 "$file" | tr '|' '\n' | awk -v t="$table" '
        { name = $0; type = "text"; sub(/:.*/, "", name)
          if ($0 ~ /^:START_ID/) name = "src"
          else if ($0 ~ /^:END_ID/) name = "dst"
          else if ($0 == ":LABEL") name = "type"
          if ($0 ~ /:ID\(|:START_ID|:END_ID|:long$/) type = "bigint"
          else if ($0 ~ /:int$/) type = "integer"
          cols[NR] = "\"" name "\" " type; names[NR] = name
          if ($0 ~ /string\[\]$/) arrays[NR] = name }
        END { printf "CREATE TABLE ldbc.%s (", t
              for (i = 1; i <= NR; i++) printf "%s%s", (i > 1 ? ", " : ""), cols[i]
              print ");"
              printf "\\copy ldbc.%s FROM %s (FORMAT csv, DELIMITER %s, HEADER true, NULL %s, QUOTE E%s)\n", t, "FILE", "\x27|\x27", "\x27\x27", "\x27\\x01\x27"
              for (i in arrays) printf "ALTER TABLE ldbc.%s ALTER COLUMN \"%s\" TYPE text[] USING string_to_array(\"%s\", \x27;\x27);\n", t, arrays[i], arrays[i]
              if (names[1] == "id") printf "ALTER TABLE ldbc.%s ADD PRIMARY KEY (id);\n", t
              if (names[1] == "src") printf "CREATE INDEX ON ldbc.%s (src); CREATE INDEX ON ldbc.%s (dst);\n", t, t
              printf "ANALYZE ldbc.%s;\n", t }' | sed "s|FROM FILE|FROM '$file'|"
}

load_ldbc_postgres() {
    {
        echo "SET client_min_messages = warning;"
        echo "DROP SCHEMA IF EXISTS ldbc CASCADE; CREATE SCHEMA ldbc;"
        for f in $(ldbc_files); do ldbc_create "$f"; done
    } | psql_roads >/dev/null || die "loading ldbc-tiny into PostgreSQL failed"
    echo "PostgreSQL: ldbc.person $(psql_roads -At -c "SELECT count(*) FROM ldbc.person") rows, ldbc.comment $(psql_roads -At -c "SELECT count(*) FROM ldbc.comment") rows, ldbc.person_knows_person $(psql_roads -At -c "SELECT count(*) FROM ldbc.person_knows_person") rows"
}

# RESP commands for one CSV (bytes counted with LC_ALL=C).
ldbc_resp() {
    local file="$1" table
    table="$(ldbc_table "$file")"
    LC_ALL=C awk -F'|' -v t="$table" '
        function resp(n, a,   i, s) { s = "*" n "\r\n"; for (i = 1; i <= n; i++) s = s "$" length(a[i]) "\r\n" a[i] "\r\n"; printf "%s", s }
        FNR == 1 { for (i = 1; i <= NF; i++) { name[i] = $i; sub(/:.*/, "", name[i]); if ($i == ":LABEL") label = i }
                   edge = ($1 ~ /^:START_ID/); next }
        edge { a[1] = "RPUSH"; a[2] = "ldbc:" t ":out:" $1; a[3] = $2; if (NF > 2) a[3] = a[3] ":" $3; resp(3, a)
               a[2] = "ldbc:" t ":in:" $2; a[3] = $1; if (NF > 2) a[3] = a[3] ":" $3; resp(3, a); next }
        { entity = label ? tolower($label) : t; n = 2; a[1] = "HSET"; a[2] = "ldbc:" entity ":" $1
          for (i = 1; i <= NF; i++) if (i != label && $i != "") { a[++n] = name[i]; a[++n] = $i }
          resp(n, a)
          a[1] = "ZADD"; a[2] = "ldbc:" entity ":keys"; a[3] = $1; a[4] = $1; resp(4, a) }' "$file"
}

load_ldbc_redis() {
    redis-cli -h 127.0.0.1 -p "$redis_port" --scan --pattern "ldbc:*" \
        | xargs -r -n 1000 redis-cli -h 127.0.0.1 -p "$redis_port" del >/dev/null
    for f in $(ldbc_files); do ldbc_resp "$f"; done \
        | redis-cli -h 127.0.0.1 -p "$redis_port" --pipe >"$dir/redis/load-ldbc.log" 2>&1 \
        || die "loading ldbc-tiny into Redis failed: see $dir/redis/load-ldbc.log"
    grep -q "errors: 0" "$dir/redis/load-ldbc.log" || die "Redis reported errors: see $dir/redis/load-ldbc.log"
    echo "Redis: ldbc $(redis-cli -h 127.0.0.1 -p "$redis_port" zcard ldbc:person:keys) persons, $(redis-cli -h 127.0.0.1 -p "$redis_port" zcard ldbc:comment:keys) comments"
}

load_ldbc() {
    pg_running || die "PostgreSQL does not run: scripts/sources.sh start first"
    redis_running || die "Redis does not run: scripts/sources.sh start first"
    load_ldbc_postgres
    load_ldbc_redis
}

# Five places whose extra labels come from a column (`kind`: a text[] in
# PostgreSQL, a `;`-separated field in Redis) and the roads between them.
load_places() {
    pg_running || die "PostgreSQL does not run: scripts/sources.sh start first"
    redis_running || die "Redis does not run: scripts/sources.sh start first"
    psql_roads <<SQL
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS places CASCADE;
CREATE SCHEMA places;
CREATE TABLE places.place (id integer PRIMARY KEY, name text NOT NULL, kind text[]);
CREATE TABLE places.road (id integer PRIMARY KEY, source integer NOT NULL, target integer NOT NULL, km integer NOT NULL);
INSERT INTO places.place VALUES
  (1, 'Luxembourg', '{City,Capital}'), (2, 'Esch-sur-Alzette', '{City}'),
  (3, 'Vianden', '{Village}'), (4, 'Clervaux', '{}'), (5, 'Ettelbruck', NULL);
INSERT INTO places.road VALUES (1, 1, 2, 20), (2, 1, 3, 45), (3, 2, 3, 60), (4, 3, 4, 30), (5, 1, 5, 28);
CREATE INDEX ON places.road (source);
CREATE INDEX ON places.road (target);
-- Bus lines between places: no key column, and parallel duplicates (two
-- identical L1 rows from 1 to 2): row-number keys (docs/sources.md). The
-- L5 goes to place 99, which does not exist: a dangling neighbour.
CREATE TABLE places.bus (source integer NOT NULL, target integer NOT NULL, line text NOT NULL, minutes integer NOT NULL);
INSERT INTO places.bus VALUES (1, 2, 'L1', 30), (1, 2, 'L1', 30), (1, 2, 'L2', 25),
  (2, 3, 'L3', 40), (1, 3, 'L4', 90), (3, 4, 'L3', 20), (4, 99, 'L5', 15);
CREATE INDEX ON places.bus (source);
CREATE INDEX ON places.bus (target);
SQL
    local r=(redis-cli -h 127.0.0.1 -p "$redis_port")
    "${r[@]}" --scan --pattern "places:*" | xargs -r "${r[@]}" del >/dev/null
    "${r[@]}" hset places:place:1 id 1 name Luxembourg kind "City;Capital" >/dev/null
    "${r[@]}" hset places:place:2 id 2 name Esch-sur-Alzette kind City >/dev/null
    "${r[@]}" hset places:place:3 id 3 name Vianden kind Village >/dev/null
    "${r[@]}" hset places:place:4 id 4 name Clervaux kind "" >/dev/null
    "${r[@]}" hset places:place:5 id 5 name Ettelbruck >/dev/null
    "${r[@]}" zadd places:places 0 1 0 2 0 3 0 4 0 5 >/dev/null
    "${r[@]}" rpush places:road:out:1 2:1:20 3:2:45 5:5:28 >/dev/null
    "${r[@]}" rpush places:road:out:2 3:3:60 >/dev/null
    "${r[@]}" rpush places:road:out:3 4:4:30 >/dev/null
    "${r[@]}" rpush places:road:in:2 1:1:20 >/dev/null
    "${r[@]}" rpush places:road:in:3 1:2:45 2:3:60 >/dev/null
    "${r[@]}" rpush places:road:in:4 3:4:30 >/dev/null
    "${r[@]}" rpush places:road:in:5 1:5:28 >/dev/null
    # The same roads as sorted sets scored by km (a mapping's `"type":
    # "sorted_set"`, docs/sources.md; tests/sorted_sets.rs).
    "${r[@]}" zadd places:road:zout:1 20 2:1:20 45 3:2:45 28 5:5:28 >/dev/null
    "${r[@]}" zadd places:road:zout:2 60 3:3:60 >/dev/null
    "${r[@]}" zadd places:road:zout:3 30 4:4:30 >/dev/null
    "${r[@]}" zadd places:road:zin:2 20 1:1:20 >/dev/null
    "${r[@]}" zadd places:road:zin:3 45 1:2:45 60 2:3:60 >/dev/null
    "${r[@]}" zadd places:road:zin:4 30 3:4:30 >/dev/null
    "${r[@]}" zadd places:road:zin:5 28 1:5:28 >/dev/null
    "${r[@]}" rpush places:bus:out:1 2:L1:30 2:L1:30 2:L2:25 3:L4:90 >/dev/null
    "${r[@]}" rpush places:bus:out:2 3:L3:40 >/dev/null
    "${r[@]}" rpush places:bus:out:3 4:L3:20 >/dev/null
    "${r[@]}" rpush places:bus:in:2 1:L1:30 1:L2:25 1:L1:30 >/dev/null
    "${r[@]}" rpush places:bus:in:3 2:L3:40 1:L4:90 >/dev/null
    "${r[@]}" rpush places:bus:in:4 3:L3:20 >/dev/null
    "${r[@]}" rpush places:bus:out:4 99:L5:15 >/dev/null
    echo "PostgreSQL: places.place $(psql_roads -At -c "SELECT count(*) FROM places.place") rows; Redis: $("${r[@]}" zcard places:places) places"
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
    load-ldbc) load_ldbc ;;
    load-places) load_places ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|load|load-ldbc|load-places|stop|status" >&2; exit 2 ;;
esac
