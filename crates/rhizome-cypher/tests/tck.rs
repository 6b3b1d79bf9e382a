//! Walks every scenario of the openCypher TCK: queries the TCK expects to
//! compile must parse and pass analysis; queries it expects to fail at compile
//! time must fail with the same error kind and detail code.
//!
//! Known disagreements are listed in `tests/tck_known_disagreements.txt`
//! (a ratchet: the test fails on any disagreement not listed, and on listed
//! ones that now agree, so the file only shrinks).

mod common;

use common::{tck_cases, Expect};
use rhizome_cypher::{analyze_with, parse};

#[test]
fn tck_compile_time_agreement() {
    let cases = tck_cases();
    let (mut valid_total, mut valid_ok, mut err_total, mut err_ok) = (0, 0, 0, 0);
    let mut disagreements = Vec::new();
    for c in &cases {
        let result = parse(&c.query).and_then(|s| analyze_with(&s, &c.query, &c.options));
        match &c.expect {
            Expect::Valid => {
                valid_total += 1;
                match result {
                    Ok(_) => valid_ok += 1,
                    Err(e) => disagreements.push(format!(
                        "{} | expected valid, got {} | {}",
                        c.id,
                        e,
                        c.query.replace('\n', " ")
                    )),
                }
            }
            Expect::Error(kind, code) => {
                err_total += 1;
                match result {
                    Err(e) if e.kind.name() == kind && e.code == Some(code.as_str()) => err_ok += 1,
                    Err(e) => disagreements.push(format!(
                        "{} | expected {kind}:{code}, got {} | {}",
                        c.id,
                        e,
                        c.query.replace('\n', " ")
                    )),
                    Ok(_) => disagreements.push(format!(
                        "{} | expected {kind}:{code}, got success | {}",
                        c.id,
                        c.query.replace('\n', " ")
                    )),
                }
            }
        }
    }
    println!(
        "TCK agreement: valid queries accepted {valid_ok}/{valid_total} ({:.2}%), compile-time errors matched {err_ok}/{err_total} ({:.2}%)",
        100.0 * valid_ok as f64 / valid_total.max(1) as f64,
        100.0 * err_ok as f64 / err_total.max(1) as f64
    );
    for d in &disagreements {
        println!("DISAGREE {d}");
    }
    let known_text = include_str!("tck_known_disagreements.txt");
    let known: Vec<&str> = known_text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let unexpected: Vec<&String> = disagreements
        .iter()
        .filter(|d| !known.iter().any(|k| d.starts_with(k)))
        .collect();
    let fixed: Vec<&&str> = known
        .iter()
        .filter(|k| !disagreements.iter().any(|d| d.starts_with(**k)))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} new TCK disagreements (see output)",
        unexpected.len()
    );
    assert!(
        fixed.is_empty(),
        "known disagreements now agree; remove them from the ratchet file: {fixed:?}"
    );
}
