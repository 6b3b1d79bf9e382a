#!/usr/bin/env bash
# The official Neo4j drivers against `rhizome serve`.
#
# Installs what is missing — a Python virtual environment under
# target/drivers/venv with `neo4j` 6.x and pytest, and `neo4j-driver` 6.x from
# npm under target/drivers/node — builds `rhizome`, imports the demo graph
# into a fresh directory, starts `rhizome serve` on a free loopback port and
# runs scripts/suites/drivers/test_python*.py (pytest) and
# scripts/suites/drivers/node/test_node*.mjs (node --test) against it, plus
# a server with authentication (test_python_auth.py, test_node_auth.mjs)
# and one over TLS with a certificate made here by openssl (bolt+s:// and
# encrypted drivers trusting it). The
# servers are stopped by pid when the script exits, also on failure.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$root/target/drivers"
started=$(date +%s)
mkdir -p "$work"

need_apt() {
    if [ -z "${apt_updated:-}" ]; then apt-get update -qq; apt_updated=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

echo "== Python driver (neo4j 6.x) in $work/venv"
command -v python3 >/dev/null || need_apt python3
if [ ! -x "$work/venv/bin/python" ]; then
    python3 -m venv "$work/venv" 2>/dev/null || { need_apt python3-venv; python3 -m venv "$work/venv"; }
fi
"$work/venv/bin/python" -c "import neo4j, pytest, pytz; assert neo4j.__version__.startswith('6.')" 2>/dev/null ||
    "$work/venv/bin/pip" install -q 'neo4j>=6,<7' pytest pytz

echo "== JavaScript driver (neo4j-driver 6.x) in $work/node"
command -v node >/dev/null && command -v npm >/dev/null || need_apt nodejs npm
mkdir -p "$work/node"
cp "$root/scripts/suites/drivers/node/package.json" "$root/scripts/suites/drivers/node/test_node.mjs" "$work/node/"
(cd "$work/node" && { [ -d node_modules/neo4j-driver ] || npm install --no-audit --no-fund --silent; })

echo "== rhizome serve on the demo graph"
(cd "$root" && cargo build -q -p rhizome)
rhizome="$root/target/debug/rhizome"
db="$work/demo-db"
rm -rf "$db" "$work/address" "$work/server.log"
"$rhizome" demo "$db" </dev/null >/dev/null 2>&1
"$rhizome" serve "$db" --auth none --bolt 127.0.0.1:0 --memory-limit 256MiB \
    --address-file "$work/address" 2>"$work/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    [ -s "$work/address" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$work/server.log"; echo "the server did not start"; exit 1; }
    sleep 0.1
done
[ -s "$work/address" ] || { cat "$work/server.log"; echo "the server did not start"; exit 1; }
export RHIZOME_BOLT="$(cat "$work/address")"
echo "server at bolt://$RHIZOME_BOLT (log: $work/server.log)"

echo "== rhizome serve --auth basic on a database of its own"
authdb="$work/auth-db"
rm -rf "$authdb" "$work/auth-address"
"$rhizome" demo "$authdb" </dev/null >/dev/null 2>&1
"$rhizome" serve "$authdb" --initial-password admin-pw --bolt 127.0.0.1:0 \
    --address-file "$work/auth-address" 2>"$work/auth-server.log" &
auth_server=$!
trap 'kill "$server" "$auth_server" 2>/dev/null; wait "$server" "$auth_server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$work/auth-address" ] && break; sleep 0.1; done
[ -s "$work/auth-address" ] || { cat "$work/auth-server.log"; echo "the auth server did not start"; exit 1; }
export RHIZOME_BOLT_AUTH="$(cat "$work/auth-address")"

echo "== rhizome serve over TLS with a certificate made here"
command -v openssl >/dev/null || need_apt openssl
tlsdb="$work/tls-db"
rm -rf "$tlsdb" "$work/tls-address" "$work/tls"
mkdir -p "$work/tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$work/tls/key.pem" -out "$work/tls/cert.pem" 2>/dev/null
"$rhizome" demo "$tlsdb" </dev/null >/dev/null 2>&1
"$rhizome" serve "$tlsdb" --auth none --bolt 127.0.0.1:0 --address-file "$work/tls-address" \
    --tls-cert "$work/tls/cert.pem" --tls-key "$work/tls/key.pem" 2>"$work/tls-server.log" &
tls_server=$!
trap 'kill "$server" "$auth_server" "$tls_server" 2>/dev/null; wait "$server" "$auth_server" "$tls_server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$work/tls-address" ] && break; sleep 0.1; done
[ -s "$work/tls-address" ] || { cat "$work/tls-server.log"; echo "the TLS server did not start"; exit 1; }
export RHIZOME_BOLT_TLS_PORT="$(sed 's/.*://' "$work/tls-address")"
export RHIZOME_TLS_CERT="$work/tls/cert.pem"

echo "== pytest"
"$work/venv/bin/python" -m pytest -q "$root/scripts/suites/drivers/test_python.py" \
    "$root/scripts/suites/drivers/test_python_auth.py" \
    "$root/scripts/suites/drivers/test_python_tls.py" \
    "$root/scripts/suites/drivers/test_python_plans.py"

echo "== node --test"
cp "$root/scripts/suites/drivers/node/test_node_tls.mjs" "$root/scripts/suites/drivers/node/test_node_auth.mjs" "$work/node/"
(cd "$work/node" && node --test test_node.mjs test_node_tls.mjs test_node_auth.mjs)

echo "== clean shutdown"
kill -TERM "$server" "$auth_server" "$tls_server"
wait "$server" "$auth_server" "$tls_server"
trap - EXIT
grep -q "TLS handshake failed" "$work/tls-server.log" || { cat "$work/tls-server.log"; echo "a failed TLS handshake was not logged"; exit 1; }
grep -q "failed login for user \`neo4j\`" "$work/auth-server.log" || { cat "$work/auth-server.log"; echo "failed login not logged"; exit 1; }
grep -q "stopped" "$work/server.log" || { cat "$work/server.log"; echo "no clean shutdown"; exit 1; }
# One line per connection event: opened with its Bolt version, closed with why.
grep -q "connected (Bolt 5.4)" "$work/server.log" || { cat "$work/server.log"; echo "no connection logged"; exit 1; }
grep -q "disconnected (" "$work/server.log" || { cat "$work/server.log"; echo "no disconnection logged"; exit 1; }
echo "drivers suite passed in $(( $(date +%s) - started )) s"
