#!/usr/bin/env bash
# `rhizome bench server` with the Python driver's figures: creates the
# drivers' virtual environment (target/drivers/venv, the official `neo4j`
# driver) when it is missing, builds `rhizome` in release mode and runs the
# benchmark. Extra arguments go to `rhizome bench server`.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$root/target/drivers"
mkdir -p "$work"
# shellcheck source=suites/drivers/python-venv.sh
. "$root/scripts/suites/drivers/python-venv.sh"
ensure_driver_venv
(cd "$root" && cargo build -q --release -p rhizome)
cd "$root"
exec "$root/target/release/rhizome" bench server --python "$work/venv/bin/python" "$@"
