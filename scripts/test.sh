#!/usr/bin/env bash
# Runs Rhizome's whole test suite, stopping at the first failure, and prints
# how long each step took (the CI budget is 45 minutes on 2 cores):
#   1. formatting (cargo fmt --check)
#   2. lints (cargo clippy, warnings are errors)
#   3. the tests of every crate (unit, integration, end-to-end)
#   4. the slow suites marked #[ignore], if any
#   5. every suite script in scripts/suites/ in name order (fuzz smoke,
#      real clients and services, ...); each installs what it needs
# Needs a Rust toolchain (rustfmt and clippy are added if missing); the suite
# scripts install their own packages (Debian, PyPI, npm) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

suite_start=$SECONDS
timings=()
step_name=""
step_start=0

begin_step() {
    step_name="$*"
    step_start=$SECONDS
    printf '\n==> %s\n' "$step_name"
}

end_step() {
    local took=$((SECONDS - step_start))
    timings+=("$(printf '%5ds  %s' "$took" "$step_name")")
    printf '==> %s: %ds\n' "$step_name" "$took"
}

report() {
    local status=$?
    printf '\n==> step times\n'
    for line in "${timings[@]}"; do printf '%s\n' "$line"; done
    if [[ $status -ne 0 && -n "$step_name" ]]; then
        printf '  FAILED after %ds: %s\n' "$((SECONDS - step_start))" "$step_name"
    fi
    printf '%5ds  total\n' "$((SECONDS - suite_start))"
}
trap report EXIT

if command -v rustup >/dev/null 2>&1; then
    for component in rustfmt clippy; do
        if ! rustup component list --installed 2>/dev/null | grep -q "^${component}"; then
            begin_step "installing the ${component} component"
            rustup component add "${component}"
            end_step
        fi
    done
fi

begin_step "cargo fmt --all --check"
cargo fmt --all --check
end_step

begin_step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
end_step

begin_step "cargo test --workspace"
cargo test --workspace
end_step

if grep -rqs --include='*.rs' '#\[ignore' crates; then
    begin_step "cargo test --workspace -- --ignored (slow suites)"
    # The Banyan check on SF0.1 imports SF0.1 in a debug build and takes
    # longer than CI's budget allows; it is run by hand (docs/scheduling.md).
    cargo test --workspace -- --ignored --skip sf01_answers_match_the_csv_reference
    end_step
fi

for suite in scripts/suites/*.sh; do
    [[ -e "$suite" ]] || continue
    begin_step "$suite"
    bash "$suite"
    end_step
done

step_name=""
printf '\n==> all checks passed\n'
