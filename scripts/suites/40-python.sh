#!/usr/bin/env bash
# The Python package (crates/rhizome-python): builds it with maturin, installs
# the wheel into a virtual environment under target/, and runs its pytest
# suite. Fails (never skips) when Python, the venv module or a package
# (maturin, pytest, pyarrow, pandas, polars) cannot be installed.
#
# The wheel is a debug build by default (it reuses the workspace's debug
# build, so this takes about a minute after `cargo test`);
# RHIZOME_PYTHON_RELEASE=1 builds it in release mode as `pip install
# ./crates/rhizome-python` does.
#
# Usage: scripts/suites/40-python.sh [pytest args...]
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
crate="$root/crates/rhizome-python"
venv="$root/target/python-venv"
wheels="$root/target/python-wheels"
start=$SECONDS

python_ok() {
    command -v python3 >/dev/null 2>&1 &&
        python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null
}
if ! python_ok; then
    echo "== installing python3 and python3-venv (Debian)"
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "FAILED: Python >= 3.10 with the venv module is needed and apt-get is not available" >&2
        exit 1
    fi
    apt-get update -qq && apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
    python_ok || { echo "FAILED: no Python >= 3.10 with venv after installing" >&2; exit 1; }
fi

if [[ ! -x "$venv/bin/python" ]]; then
    echo "== creating $venv"
    python3 -m venv "$venv"
fi
py="$venv/bin/python"
echo "== installing maturin, pytest, pytest-timeout, pyarrow, pandas, polars into the venv"
"$py" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
"$py" -m pip install -q --disable-pip-version-check \
    'maturin>=1.5,<2' pytest pytest-timeout 'pyarrow>=15' pandas polars

profile=(--profile dev)
if [[ "${RHIZOME_PYTHON_RELEASE:-0}" == 1 ]]; then
    profile=(--release)
fi
echo "== building the wheel (${profile[*]})"
rm -rf "$wheels"
(cd "$crate" && nice "$venv/bin/maturin" build "${profile[@]}" --interpreter "$py" --out "$wheels")
"$py" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheels"/rhizome-*.whl

echo "== pytest"
cd "$crate"
# Run from the installed wheel, not the source tree.
# A test that hangs fails after 5 minutes with every thread's stack printed
# (a CI run on 2026-11-26 hung once in the Ctrl-C test; the cause is not found).
"$py" -m pytest -q -p no:cacheprovider --timeout 300 tests "$@"
echo "python suite: $((SECONDS - start))s"
