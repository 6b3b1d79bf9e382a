#!/usr/bin/env bash
# Graph sources against real PostgreSQL and Redis (rhizome-sources, feature
# backend-tests): starts both with scripts/sources.sh on free ports in a
# throw-away directory, loads the Luxembourg road network and the small
# LDBC set (LDBC reads with equal rows over native, PostgreSQL and Redis),
# runs the tests
# (equal route costs native vs PostgreSQL vs Redis with every prefetcher,
# the cache, mapping errors found by the backend, connections cut, stalled
# and killed mid-query; labels read from a column (the places of
# `sources.sh load-places`); row-number keys of a table without a key column
# (its bus lines: the same ids in every process); its roads as Redis
# sorted sets giving the rows of the lists; every PROFILE counter's
# value on those places, cold, hot and with a lookahead;
# `rhizome bench roads --part hot` on two routes; Cypher
# over both giving the rows of a native import,
# through the library and `rhizome query` / `rhizome shell MAPPING.json`),
# and stops both when it exits, also on failure.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
started=$(date +%s)

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

export RHIZOME_PG_PORT="${RHIZOME_PG_PORT:-$(free_port)}"
export RHIZOME_REDIS_PORT="${RHIZOME_REDIS_PORT:-$(free_port)}"
export RHIZOME_SOURCES_DIR="$(mktemp -d /tmp/rhizome-sources.XXXXXX)"
export RHIZOME_ROADS=luxembourg
chmod 755 "$RHIZOME_SOURCES_DIR"

cleanup() {
    "$root/scripts/sources.sh" stop || true
    rm -rf "$RHIZOME_SOURCES_DIR"
}
trap cleanup EXIT

"$root/scripts/sources.sh" start
"$root/scripts/sources.sh" load
"$root/scripts/sources.sh" load-places
(cd "$root" && cargo test -q -p rhizome-sources --features backend-tests --test backends --test cypher --test label_column --test row_keys --test profile --test sorted_sets -- --test-threads=2)
# The small LDBC set in both backends: IC1-IC14 and IS1-IS7 over a native
# import, PostgreSQL and Redis must give the same rows (tests/ldbc.rs).
echo "== LDBC reads over native, PostgreSQL and Redis"
ldbc_started=$(date +%s)
"$root/scripts/sources.sh" load-ldbc
(cd "$root" && cargo test -q -p rhizome-sources --features backend-tests --test ldbc -- --nocapture)
echo "LDBC over sources: passed in $(( $(date +%s) - ldbc_started )) s"
# The command line over both sources: `rhizome query MAPPING.json` and
# `rhizome shell MAPPING.json`, with writes refused.
(cd "$root" && cargo build -q -p rhizome)
rhizome="${RHIZOME:-$root/target/debug/rhizome}"
expected=$'k.id,r.distance\n2,39\n1113,214'
for m in roads-postgres roads-redis; do
    got=$("$rhizome" query --format csv "$root/examples/sources/$m.json" \
        'MATCH (j:Junction {id: 1})-[r:ROAD]->(k) RETURN k.id, r.distance ORDER BY k.id')
    [ "$got" = "$expected" ] || { echo "rhizome query $m.json gave: $got" >&2; exit 1; }
    got=$(printf 'MATCH (j:Junction {id: 1})-[r:ROAD]->(k) RETURN k.id ORDER BY k.id;\n' |
        "$rhizome" shell --format csv "$root/examples/sources/$m.json")
    [ "$got" = $'k.id\n2\n1113' ] || { echo "rhizome shell $m.json gave: $got" >&2; exit 1; }
    if err=$("$rhizome" query "$root/examples/sources/$m.json" 'CREATE (n)' 2>&1); then
        echo "rhizome query $m.json ran a write" >&2; exit 1
    fi
    case "$err" in *ReadOnlySource*) ;; *) echo "unexpected error: $err" >&2; exit 1 ;; esac
done
# Row-number keys (`"key": null`) are a function of the row, the same in
# every process: two processes (one per backend) give the ids that
# docs/sources.md shows for the three buses from place 1 to place 2.
for m in places-postgres places-redis; do
    got=$("$rhizome" query --format csv "$root/examples/sources/$m.json" \
        'MATCH (:Place {id: 1})-[b:BUS]->(:Place {id: 2}) RETURN id(b) AS id, b.line AS line ORDER BY id')
    [ "$got" = $'id,line\n77359922345766,L1\n262006263529038,L2\n266511728322701,L1' ] ||
        { echo "rhizome query $m.json gave bus ids: $got" >&2; exit 1; }
done
# The LDBC mappings through `rhizome query`: a type over two relationship
# spaces (HAS_CREATOR from Post and Comment), a label over two node spaces.
ldbc_query='MATCH (p:Person {id: 4398046511146})<-[:HAS_CREATOR]-(m:Message) RETURN labels(m) AS l, count(*) AS n ORDER BY l'
pg_rows=$("$rhizome" query --format csv "$root/examples/sources/ldbc-postgres.json" "$ldbc_query")
redis_rows=$("$rhizome" query --format csv "$root/examples/sources/ldbc-redis.json" "$ldbc_query")
[ "$pg_rows" = "$redis_rows" ] && [ "$(printf '%s\n' "$pg_rows" | wc -l)" -eq 3 ] ||
    { echo "rhizome query over the LDBC mappings gave: $pg_rows / $redis_rows" >&2; exit 1; }

# `rhizome serve --source`: the official Python driver runs the same
# statements on a native import (the default database) and on both sources
# as databases of one server, over Bolt and HTTP; then Redis is stopped and
# only its database fails.
echo "== rhizome serve --source pg=... --source redis=..."
serve_started=$(date +%s)
work="$root/target/drivers"
. "$root/scripts/suites/drivers/python-venv.sh"
ensure_driver_venv
lux="$root/../shared/datasets/roads/luxembourg-dimacs10"
db="$RHIZOME_SOURCES_DIR/native-lux"
"$rhizome" import-dimacs "$db" --gr "$lux/luxembourg.gr" --co "$lux/luxembourg.co" >/dev/null
# `rhizome bench roads` end to end (its hot part, two random routes, about
# 20 s in a debug build): a route cost over either source that differs
# from native's fails the command.
echo "== rhizome bench roads --part hot"
"$rhizome" bench roads "$db" --postgres "$root/examples/sources/roads-postgres.json" \
    --redis "$root/examples/sources/roads-redis.json" --part hot --routes 2 --repeats 1 \
    >"$RHIZOME_SOURCES_DIR/bench.log" 2>&1 ||
    { cat "$RHIZOME_SOURCES_DIR/bench.log"; echo "rhizome bench roads failed" >&2; exit 1; }
grep -q "^hot routes: 2 routes" "$RHIZOME_SOURCES_DIR/bench.log" ||
    { cat "$RHIZOME_SOURCES_DIR/bench.log"; echo "rhizome bench roads printed no hot routes" >&2; exit 1; }
"$rhizome" serve "$db" --auth none --bolt 127.0.0.1:0 --http 127.0.0.1:0 \
    --source "pg=$root/examples/sources/roads-postgres.json" \
    --source "redis=$root/examples/sources/roads-redis.json" \
    --source "ldbcpg=$root/examples/sources/ldbc-postgres.json" \
    --source "ldbcredis=$root/examples/sources/ldbc-redis.json" \
    --address-file "$RHIZOME_SOURCES_DIR/bolt" --http-address-file "$RHIZOME_SOURCES_DIR/http" \
    2>"$RHIZOME_SOURCES_DIR/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1 300); do
    [ -s "$RHIZOME_SOURCES_DIR/http" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$RHIZOME_SOURCES_DIR/server.log"; echo "the server did not start" >&2; exit 1; }
    sleep 0.1
done
[ -s "$RHIZOME_SOURCES_DIR/http" ] || { cat "$RHIZOME_SOURCES_DIR/server.log"; echo "the server did not start" >&2; exit 1; }
RHIZOME_BOLT="$(cat "$RHIZOME_SOURCES_DIR/bolt")" RHIZOME_HTTP="$(cat "$RHIZOME_SOURCES_DIR/http")" \
    RHIZOME_REDIS_PID_FILE="$RHIZOME_SOURCES_DIR/redis/redis.pid" \
    "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$root/scripts/suites/sources/test_serve_sources.py" ||
    { tail -20 "$RHIZOME_SOURCES_DIR/server.log"; exit 1; }
# A mapping that does not load stops the server before it starts, naming
# the source, the file and the problem.
echo '{"name": "broken", "backend": "postgres"' >"$RHIZOME_SOURCES_DIR/broken.json"
if err=$(timeout 60 "$rhizome" serve "$db" --auth none --bolt 127.0.0.1:0 \
    --source "bad=$RHIZOME_SOURCES_DIR/broken.json" 2>&1); then
    echo "rhizome serve started with a broken mapping" >&2; exit 1
fi
case "$err" in *"graph source \`bad\`"*broken.json*"not valid"*) ;; *) echo "unexpected error: $err" >&2; exit 1 ;; esac
echo "rhizome serve --source: passed in $(( $(date +%s) - serve_started )) s"

echo "50-sources: passed in $(( $(date +%s) - started )) s"
