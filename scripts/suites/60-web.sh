#!/usr/bin/env bash
# The web page in a real browser.
#
# Checks that web/dist (the bundle the server embeds) matches its sources
# (`npm ci` + `node build.mjs --check` in web/), installs Debian's Chromium
# with apt-get and `playwright-core` from npm under target/web-suite (from
# scripts/suites/web/package-lock.json), builds `rhizome`, starts two
# `rhizome serve --http` on free loopback ports — the demo graph, and a
# generated graph of 10,000 nodes and 50,000 relationships for the
# performance test — and runs scripts/suites/web/test_web.mjs headless
# against them. Screenshots of every step and metrics.json land in
# target/web-artifacts/. Servers are stopped by pid when the script exits.
#
# RHIZOME_WEB_RELEASE=1 serves from a release build, and then the
# click-to-first-frame time is held to its limit too (see docs/web.md).
#
# The performance limits (first frame 5 s, pan frame p95 100 ms) are
# enforced. On a 2-core machine loaded by other work the pan frame time
# (the browser's own compositing: the page does not redraw while panning)
# can pass 100 ms for a 20-node graph as for 10,000 nodes (see docs/web.md);
# RHIZOME_WEB_PERF_REPORT_ONLY=1 then records the figures and prints
# "TARGET NOT MET" instead of failing. That no renderer frame is drawn while
# dragging the small graph, and that the camera follows the drag, are always
# enforced.
set -euo pipefail
export RHIZOME_WEB_PERF_REPORT_ONLY="${RHIZOME_WEB_PERF_REPORT_ONLY:-0}"

root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$root/target/web-suite"
artifacts="$root/target/web-artifacts"
started=$(date +%s)
mkdir -p "$work"
rm -rf "$artifacts"
mkdir -p "$artifacts"

need_apt() {
    if [ -z "${apt_updated:-}" ]; then apt-get update -qq; apt_updated=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

command -v node >/dev/null && command -v npm >/dev/null || need_apt nodejs npm

echo "== web/dist matches web/src (npm ci && node build.mjs --check)"
(cd "$root/web" && npm ci --no-audit --no-fund --silent && node build.mjs --check)

echo "== Chromium (Debian) and playwright-core in $work"
command -v chromium >/dev/null || need_apt chromium
cp "$root/scripts/suites/web/package.json" "$root/scripts/suites/web/package-lock.json" "$work/"
(cd "$work" && { [ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund --silent; })
rm -f "$work/test_web.mjs"
cp "$root/scripts/suites/web/test_web.mjs" "$work/"

echo "== rhizome serve --http on the demo graph and on 10,000 nodes / 50,000 relationships"
if [ "${RHIZOME_WEB_RELEASE:-}" = 1 ]; then
    (cd "$root" && cargo build -q --release -p rhizome)
    rhizome="$root/target/release/rhizome"
    export RHIZOME_SERVER_BUILD=release
else
    (cd "$root" && cargo build -q -p rhizome)
    rhizome="$root/target/debug/rhizome"
    export RHIZOME_SERVER_BUILD=debug
fi
rm -rf "$work/demo-db" "$work/perf-db" "$work/perf-csv" "$work"/*.address "$work"/*.log
"$rhizome" demo "$work/demo-db" </dev/null >/dev/null 2>&1
mkdir -p "$work/perf-csv"
awk 'BEGIN { print "id:ID,name,:LABEL"; split("Person Company City Product", L, " ");
             for (i = 0; i < 10000; i++) printf "%d,node %d,%s\n", i, i, L[i % 4 + 1] }' >"$work/perf-csv/nodes.csv"
awk 'BEGIN { print ":START_ID,:END_ID,:TYPE"; srand(7); split("LINKS KNOWS OWNS", T, " ");
             for (j = 0; j < 50000; j++) { a = j % 10000; b = int(rand() * 10000); if (b == a) b = (a + 1) % 10000;
                                          printf "%d,%d,%s\n", a, b, T[j % 3 + 1] } }' >"$work/perf-csv/rels.csv"
"$rhizome" import "$work/perf-db" --nodes "$work/perf-csv/nodes.csv" --relationships "$work/perf-csv/rels.csv" >/dev/null

password="web-suite-pw"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done' EXIT
start_server() { # db name
    "$rhizome" serve "$1" --initial-password "$password" --bolt 127.0.0.1:0 --http 127.0.0.1:0 \
        --http-address-file "$work/$2.address" 2>"$work/$2.log" &
    pids+=($!)
    for _ in $(seq 200); do
        [ -s "$work/$2.address" ] && return 0
        kill -0 "${pids[-1]}" 2>/dev/null || break
        sleep 0.1
    done
    cat "$work/$2.log"
    echo "the $2 server did not start"
    exit 1
}
start_server "$work/demo-db" demo
start_server "$work/perf-db" perf

echo "== the page is served"
page=$(curl -s -o /dev/null -w "%{http_code} %{content_type}" "http://$(cat "$work/demo.address")/")
[ "$page" = "200 text/html; charset=utf-8" ] || { echo "GET / answered: $page"; exit 1; }

echo "== browser tests (headless Chromium, software rendering)"
(cd "$work" && RHIZOME_URL="http://$(cat "$work/demo.address")" \
    RHIZOME_PERF_URL="http://$(cat "$work/perf.address")" \
    RHIZOME_PASSWORD="$password" CHROMIUM="$(command -v chromium)" ARTIFACTS="$artifacts" \
    node test_web.mjs)

echo "web suite passed in $(( $(date +%s) - started )) s (screenshots and metrics.json in $artifacts)"
