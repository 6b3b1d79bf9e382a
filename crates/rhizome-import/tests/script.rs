//! `scripts/import-ldbc.sh` spells out `ldbc_options` as flags; this test
//! keeps the two in step (the Rust function is canonical).

use rhizome_import::{ldbc_options, LdbcLayout};
use std::path::Path;

/// The quoted arguments of the `ARGS=( ... )` array after the `case` label `label`.
fn script_args(script: &str, label: &str) -> Vec<String> {
    let start = script
        .find(&format!("\n{label})\n"))
        .unwrap_or_else(|| panic!("no case {label}"));
    let rest = &script[start..];
    let open = rest.find("ARGS=(").expect("ARGS=(") + "ARGS=(".len();
    let close = rest[open..].find("\n    )").expect("closing )") + open;
    rest[open..close]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| l.trim_matches('"').to_string())
        .collect()
}

#[test]
fn script_matches_ldbc_options() {
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/import-ldbc.sh"),
    )
    .unwrap();
    for (label, kind) in [("sf0.1", LdbcLayout::Sf01), ("tiny", LdbcLayout::Tiny)] {
        let expected = ldbc_options(Path::new("$D"), kind).to_args();
        let found = script_args(&script, label);
        assert_eq!(
            found,
            expected,
            "scripts/import-ldbc.sh `{label}` differs from ldbc_options; expected lines:\n{}",
            expected
                .iter()
                .map(|a| format!("        \"{a}\""))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn script_runs_the_reference_property_renames() {
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/import-ldbc.sh"),
    )
    .unwrap();
    for statement in rhizome_import::REFERENCE_PROPERTY_RENAMES {
        assert!(
            script.contains(&format!("'{statement}'")),
            "scripts/import-ldbc.sh must run `{statement}` after the import"
        );
    }
}
