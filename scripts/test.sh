#!/usr/bin/env bash
# Runs Rhizome's whole test suite, stopping at the first failure:
#   1. formatting (cargo fmt --check)
#   2. lints (cargo clippy, warnings are errors)
#   3. the tests of every crate (unit, integration, end-to-end)
#   4. the slow suites marked #[ignore], if any
#   5. the parser fuzz smoke test (scripts/fuzz-smoke.sh), if present
# Needs only a Rust toolchain (rustfmt and clippy are added if missing).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

if command -v rustup >/dev/null 2>&1; then
    for component in rustfmt clippy; do
        if ! rustup component list --installed 2>/dev/null | grep -q "^${component}"; then
            step "installing the ${component} component"
            rustup component add "${component}"
        fi
    done
fi

step "cargo fmt --all --check"
cargo fmt --all --check

step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test --workspace"
cargo test --workspace

if grep -rqs --include='*.rs' '#\[ignore' crates; then
    step "cargo test --workspace -- --ignored (slow suites)"
    cargo test --workspace -- --ignored
fi

if [[ -f scripts/fuzz-smoke.sh ]]; then
    step "scripts/fuzz-smoke.sh"
    bash scripts/fuzz-smoke.sh
fi

step "all checks passed"
