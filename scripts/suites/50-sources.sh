#!/usr/bin/env bash
# Graph sources against real PostgreSQL and Redis (rhizome-sources, feature
# backend-tests): starts both with scripts/sources.sh on free ports in a
# throw-away directory, loads the Luxembourg road network, runs the tests
# (equal route costs native vs PostgreSQL vs Redis with every prefetcher,
# the cache, mapping errors found by the backend, connections cut, stalled
# and killed mid-query), and stops both when it exits, also on failure.
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
(cd "$root" && cargo test -q -p rhizome-sources --features backend-tests --test backends --test cypher -- --test-threads=2)
echo "50-sources: passed in $(( $(date +%s) - started )) s"
