#!/usr/bin/env bash
# Soak: 64 concurrent clients of the official Python driver for 2.5 minutes
# (SOAK_SECONDS) mixing reads and writes against `rhizome serve` on the
# demo graph. Fails on any unexpected error, and if the server's resident
# memory (VmRSS in /proc/PID/status, sampled every second) grows more than
# 10% from the end of the warm-up to its peak after it. The warm-up ends
# after both 30 s (SOAK_WARMUP) and 8,000 operations (SOAK_WARMUP_OPS): the
# allocator's per-thread pages fill with the work done, so a loaded machine
# needs longer. SOAK_MEMORY_REPORT_ONLY=1 reports growth over 10% as TARGET
# NOT MET instead of failing (for diagnosis).
# SOAK_SERVE_ARGS passes extra flags to `rhizome serve` (split on spaces);
# SOAK_BINARY serves with another rhizome binary (e.g. a release build).
# Prints latency percentiles per operation. Reuses the drivers' virtual
# environment under target/drivers/venv (created here if missing).
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$root/target/drivers"
started=$(date +%s)
mkdir -p "$work"
# shellcheck source=drivers/python-venv.sh
. "$root/scripts/suites/drivers/python-venv.sh"

echo "== Python driver (neo4j 6.x) in $work/venv"
ensure_driver_venv

echo "== rhizome serve on the demo graph"
# SOAK_BINARY: a rhizome binary to serve with instead of the debug build
# (measurements against a release server, or an older build to compare).
if [ -n "${SOAK_BINARY:-}" ]; then
    rhizome="$SOAK_BINARY"
else
    (cd "$root" && cargo build -q -p rhizome)
    rhizome="$root/target/debug/rhizome"
fi
db="$work/soak-db"
rm -rf "$db" "$work/soak-address" "$work/soak-server.log"
"$rhizome" demo "$db" </dev/null >/dev/null 2>&1
# shellcheck disable=SC2086 # SOAK_SERVE_ARGS: extra flags, split on spaces
"$rhizome" serve "$db" --auth none --bolt 127.0.0.1:0 --address-file "$work/soak-address" ${SOAK_SERVE_ARGS:-} \
    2>"$work/soak-server.log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    [ -s "$work/soak-address" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$work/soak-server.log"; echo "the server did not start"; exit 1; }
    sleep 0.1
done
[ -s "$work/soak-address" ] || { cat "$work/soak-server.log"; echo "the server did not start"; exit 1; }

echo "== ${SOAK_CLIENTS:-64} clients for ${SOAK_SECONDS:-150} s (warm-up ${SOAK_WARMUP:-30} s and ${SOAK_WARMUP_OPS:-8000} operations)"
"$work/venv/bin/python" "$root/scripts/suites/soak/soak.py" \
    --address "$(cat "$work/soak-address")" --pid "$server" \
    --clients "${SOAK_CLIENTS:-64}" --seconds "${SOAK_SECONDS:-150}" --warmup "${SOAK_WARMUP:-30}" \
    --warmup-ops "${SOAK_WARMUP_OPS:-8000}"

kill -TERM "$server"
wait "$server"
trap - EXIT
grep -q "stopped" "$work/soak-server.log" || { tail -20 "$work/soak-server.log"; echo "no clean shutdown"; exit 1; }
echo "soak suite passed in $(( $(date +%s) - started )) s"
