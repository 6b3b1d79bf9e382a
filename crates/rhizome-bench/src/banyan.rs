//! The Banyan workload (issue 22): the complex queries CQ1–CQ6 of the
//! Banyan paper over the LDBC SNB schema, and the rule that picks their
//! parameter persons from the data.
//!
//! The query texts live in `crates/rhizome-bench/banyan/cq1.cypher` …
//! `cq6.cypher`, exactly as the issue writes them (`$personId`, `$n`).
//! They are checked against answers computed from the CSV files without
//! the engine in `tests/banyan.rs`, and timed through the server by
//! [`crate::service`].

use crate::ldbc::Params;
use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_engine::{Engine, QueryOptions};
use std::collections::BTreeMap;

/// One of the six complex queries of the Banyan paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cq {
    /// CQ1: distinct persons at the end of a 5-hop KNOWS trail.
    Cq1,
    /// CQ2: persons within 1..5 KNOWS hops working at a company of the start person.
    Cq2,
    /// CQ3: friends and friends of friends with a message tagged with a
    /// tag of a class whose name contains `Country`, by id.
    Cq3,
    /// CQ4: friends from whom a person working at a company of the start
    /// person is within 1..4 KNOWS hops.
    Cq4,
    /// CQ5: CQ2 whose results also pass CQ3's `EXISTS`.
    Cq5,
    /// CQ6: ends of 5-hop KNOWS trails whose every person after the start
    /// passes CQ3's `EXISTS`.
    Cq6,
}

impl Cq {
    /// All six, in order.
    pub const ALL: [Cq; 6] = [Cq::Cq1, Cq::Cq2, Cq::Cq3, Cq::Cq4, Cq::Cq5, Cq::Cq6];

    /// `CQ1` … `CQ6`.
    pub fn name(self) -> &'static str {
        match self {
            Cq::Cq1 => "CQ1",
            Cq::Cq2 => "CQ2",
            Cq::Cq3 => "CQ3",
            Cq::Cq4 => "CQ4",
            Cq::Cq5 => "CQ5",
            Cq::Cq6 => "CQ6",
        }
    }

    /// Parses `CQ1` … `CQ6` (any case).
    pub fn parse(name: &str) -> Result<Cq> {
        Cq::ALL
            .into_iter()
            .find(|q| q.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::ArgumentError,
                    format!("unknown query `{name}`: expected CQ1 … CQ6"),
                )
            })
    }

    /// The Cypher text (from `crates/rhizome-bench/banyan/`).
    pub fn text(self) -> &'static str {
        match self {
            Cq::Cq1 => include_str!("../banyan/cq1.cypher"),
            Cq::Cq2 => include_str!("../banyan/cq2.cypher"),
            Cq::Cq3 => include_str!("../banyan/cq3.cypher"),
            Cq::Cq4 => include_str!("../banyan/cq4.cypher"),
            Cq::Cq5 => include_str!("../banyan/cq5.cypher"),
            Cq::Cq6 => include_str!("../banyan/cq6.cypher"),
        }
    }

    /// The parameters of a run: the start person and the limit.
    pub fn params(person: i64, n: i64) -> Params {
        BTreeMap::from([
            ("personId".to_string(), Value::Int(person)),
            ("n".to_string(), Value::Int(n)),
        ])
    }
}

/// The limits `$n` the workload is measured at (issue 22: 1, 10, 100, 10⁴).
pub const LIMITS: [i64; 4] = [1, 10, 100, 10_000];

/// Parameter persons per query.
pub const PERSONS: usize = 10;

/// The smallest and largest KNOWS degree of a parameter person.
pub const DEGREE_BAND: (i64, i64) = (2, 10);

/// The candidates of the parameter rule: persons with at least one
/// `WORK_AT` and a KNOWS degree (relationships either way) within
/// [`DEGREE_BAND`], by id.
pub const CANDIDATES: &str = "MATCH (p:Person) WHERE EXISTS { (p)-[:WORK_AT]->() } \
     WITH p, COUNT { (p)-[:KNOWS]-() } AS degree WHERE degree >= $lo AND degree <= $hi \
     RETURN p.id AS id ORDER BY id";

/// Picks `count` elements of the sorted `candidates`: element
/// `i * len / count` for `i` in `0..count` (every k-th, starting with the
/// first); all of them if there are fewer.
pub fn every_kth<T: Clone>(candidates: &[T], count: usize) -> Vec<T> {
    let m = count.min(candidates.len());
    (0..m)
        .map(|i| candidates[i * candidates.len() / m].clone())
        .collect()
}

/// The parameter persons: [`every_kth`] of the [`CANDIDATES`] (the same
/// persons for all six queries). Deterministic for a given data set.
pub fn banyan_persons(engine: &Engine, count: usize) -> Result<Vec<i64>> {
    let params = BTreeMap::from([
        ("lo".to_string(), Value::Int(DEGREE_BAND.0)),
        ("hi".to_string(), Value::Int(DEGREE_BAND.1)),
    ]);
    let rows = engine
        .execute(CANDIDATES, params, &QueryOptions::default())?
        .rows;
    let ids = rows
        .into_iter()
        .map(|r| match r.into_iter().next() {
            Some(Value::Int(id)) => Ok(id),
            other => Err(Error::internal(format!(
                "a person id that is not an integer: {other:?}"
            ))),
        })
        .collect::<Result<Vec<i64>>>()?;
    if ids.is_empty() {
        return Err(Error::new(
            ErrorKind::ArgumentError,
            "no person with a WORK_AT and 2 to 10 KNOWS relationships: is this an LDBC data set?",
        ));
    }
    Ok(every_kth(&ids, count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_every_text_has_both_parameters() {
        for q in Cq::ALL {
            assert_eq!(Cq::parse(&q.name().to_lowercase()).unwrap(), q);
            assert!(q.text().contains("$personId"), "{}", q.name());
            assert!(q.text().contains("LIMIT $n"), "{}", q.name());
        }
        assert!(Cq::parse("CQ7").unwrap_err().message.contains("CQ1 … CQ6"));
    }

    #[test]
    fn every_kth_spreads_over_the_list() {
        let v: Vec<i64> = (0..25).collect();
        assert_eq!(every_kth(&v, 5), vec![0, 5, 10, 15, 20]);
        assert_eq!(every_kth(&v, 2), vec![0, 12]);
        assert_eq!(every_kth(&v[..3], 10), vec![0, 1, 2]);
        assert!(every_kth::<i64>(&[], 10).is_empty());
    }
}
