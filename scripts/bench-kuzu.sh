#!/usr/bin/env bash
# `rhizome bench aggregate` beside Kuzu measured on this machine: installs
# Kuzu 0.11.3 into a virtual environment (target/kuzu/venv; python3 and
# python3-venv from apt-get when missing), builds `rhizome` in release mode,
# loads the chain graph into Kuzu and measures the suite's chain queries
# with 1 and 2 threads (scripts/bench/kuzu_chain.py; the result is cached
# as DATA_DIR/kuzu-chain-N-D/reference.tsv), then runs the benchmark, which
# prints each figure beside Kuzu's from that file and from issue 21.
#
# Usage: scripts/bench-kuzu.sh [--kuzu-runs R] [--only NAMES] [other bench aggregate options]
#        (the data directory is $RHIZOME_BENCH_DATA or target/rhizome-bench-data)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$root/target/kuzu"
data="${RHIZOME_BENCH_DATA:-$root/target/rhizome-bench-data}"
kuzu_runs=5
only=""
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --kuzu-runs) kuzu_runs="$2"; shift 2 ;;
        --only) only="$2"; args+=("$1" "$2"); shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done

need_apt() {
    if [ -z "${apt_updated:-}" ]; then apt-get update -qq; apt_updated=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
command -v python3 >/dev/null || need_apt python3
mkdir -p "$work"
if [ ! -x "$work/venv/bin/python" ]; then
    python3 -m venv "$work/venv" 2>/dev/null || { need_apt python3-venv; python3 -m venv "$work/venv"; }
fi
"$work/venv/bin/python" -c "import kuzu; assert kuzu.__version__ == '0.11.3'" 2>/dev/null ||
    "$work/venv/bin/pip" install -q 'kuzu==0.11.3'

(cd "$root" && cargo build -q --release -p rhizome)
bin="$root/target/release/rhizome"
"$work/venv/bin/python" "$root/scripts/bench/kuzu_chain.py" --rhizome "$bin" \
    --data-dir "$data" --runs "$kuzu_runs" --only "$only"
exec "$bin" bench aggregate --data-dir "$data" "${args[@]}"
