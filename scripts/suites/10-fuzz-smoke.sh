#!/usr/bin/env bash
# Bounded-time fuzz smoke of the parsers and decoders we wrote, for CI.
#
# 1. Always: the stable-Rust smoke test (mutated TCK queries through parser,
#    analyser and printer round trip; deterministic, a few seconds). The
#    storage decoders have proptest garbage tests in `cargo test`.
# 2. If `cargo +nightly fuzz` is available: each cargo-fuzz target for
#    FUZZ_SECONDS seconds (default 30): the Cypher parser and compiler
#    (seeded with every TCK query), the write-ahead log reader and the
#    property value codec, the Bolt chunk decoder, PackStream decoder and
#    message parser, the DIMACS road-network parsers (rhizome-import:dimacs,
#    which also has a proptest smoke), and the graph source mapping parser
#    (rhizome-sources:mapping, seeded with examples/sources/*.json). libFuzzer exits non-zero on any crash,
#    timeout or leak, failing the script.
#
# Usage: scripts/suites/10-fuzz-smoke.sh            (FUZZ_SECONDS=30 by default)
#        FUZZ_SECONDS=600 scripts/suites/10-fuzz-smoke.sh
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${FUZZ_SECONDS:-30}"

# The stable smokes are ordinary tests; run them with `--workspace` so they
# reuse the workspace build of `cargo test --workspace` (a `-p CRATE` run
# unifies features differently and recompiles the crate and its dependents).
echo "== stable smoke: mutated TCK queries; Bolt chunks, PackStream, messages, sessions"
(cd "$root" && cargo test -q --workspace --test fuzz_smoke)
echo "== stable smoke: DIMACS parsers (proptest), source mappings, query options"
(cd "$root" && cargo test -q --workspace --lib -- \
    dimacs::tests::parsers_never_panic \
    mapping::tests::garbage_never_panics \
    query_options::tests::arbitrary_text_never_panics)

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz (nightly) not available: install with 'cargo install cargo-fuzz' to run the libFuzzer targets"
    exit 0
fi

tck="${RHIZOME_TCK_DIR:-$root/../shared/tck}"
for spec in rhizome-cypher:parse rhizome-cypher:compile rhizome-storage:wal rhizome-storage:value \
    rhizome-server:chunks rhizome-server:packstream rhizome-server:message rhizome-import:dimacs \
    rhizome-sources:mapping rhizome-sources:query_options; do
    crate="${spec%%:*}"
    target="${spec#*:}"
    fuzz="$root/crates/$crate/fuzz"
    corpus="$fuzz/corpus/$target"
    mkdir -p "$corpus"
    if [ "$spec" = rhizome-sources:mapping ] && [ -z "$(ls -A "$corpus")" ]; then
        cp "$root"/examples/sources/*.json "$corpus/"
    fi
    if [ "$spec" = rhizome-sources:query_options ] && [ -z "$(ls -A "$corpus")" ]; then
        printf 'CYPHER prefetch=lookahead:4 MATCH (n) RETURN n' >"$corpus/lookahead"
        printf 'PROFILE CYPHER prefetch=box_degrees:0.01 RETURN 1' >"$corpus/box"
    fi
    if [ "$crate" = rhizome-cypher ] && [ -z "$(ls -A "$corpus")" ] && [ -d "$tck/features" ]; then
        # Seed with the TCK's query doc strings, one file per query.
        n=0
        while IFS= read -r -d '' file; do
            awk -v dir="$corpus" -v base="$(basename "$file" .feature)" '
                /^[ \t]*"""[ \t]*$/ { if (inq) { close(out); inq = 0 } else { n++; out = dir "/" base "-" n; printf "" > out; inq = 1 } next }
                inq { sub(/^      /, ""); print >> out }' "$file"
            n=$((n + 1))
        done < <(find "$tck/features" -name '*.feature' -print0)
    fi
    echo "== cargo fuzz run $target ($crate) for ${seconds}s"
    (cd "$fuzz" && cargo +nightly fuzz run "$target" "$corpus" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
done
echo "fuzz smoke passed"
