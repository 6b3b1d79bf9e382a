//! The query options a statement over a source may begin with, in the
//! form of Neo4j's `CYPHER key=value` prefix: `CYPHER prefetch=lookahead:4
//! MATCH ...` chooses the statement's prefetcher (see `docs/sources.md`).
//! `EXPLAIN` / `PROFILE` may come before or after the options.

use crate::mapping::{parse_prefetch, Prefetch};
use rhizome_common::{Error, ErrorKind, Result};

/// What a statement's query options chose.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QueryOptions {
    /// The statement's prefetcher (`CYPHER prefetch=...`), if it names one.
    pub prefetch: Option<Prefetch>,
}

fn option_error(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::SyntaxError, format!("query option {what}"))
        .with_code("InvalidQueryOption")
}

/// The prefetcher of `prefetch=VALUE`: `none`, `lookahead:K` (1-16),
/// `key_block:N` (1-1,000,000), `box_degrees:D` (above 0, at most 10),
/// `ellipse:S` (1-10) or `ellipse:S:W` (the start weighted W, 1-4).
pub fn parse_prefetch_option(value: &str) -> Result<Prefetch> {
    let number = |n: &str| {
        n.parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .ok_or_else(|| option_error(format_args!("`prefetch={value}`: `{n}` is not a number")))
    };
    let json = match value.split_once(':') {
        None if value.eq_ignore_ascii_case("none") => serde_json::Value::String("none".into()),
        Some((name, rest)) if !name.is_empty() => {
            let name = name.to_ascii_lowercase();
            match rest.split_once(':') {
                Some((s, w)) if name == "ellipse" => {
                    serde_json::json!({ "ellipse": number(s)?, "start_weight": number(w)? })
                }
                _ => serde_json::json!({ name: number(rest)? }),
            }
        }
        _ => {
            return Err(option_error(format_args!(
                "`prefetch={value}`: expected none, lookahead:K, key_block:N, box_degrees:D, ellipse:S or ellipse:S:W"
            )))
        }
    };
    parse_prefetch(&json, "prefetch").map_err(|e| {
        // "mapping key `prefetch.x`: why" -> "why"
        let why = e
            .message
            .split_once("`: ")
            .map_or(e.message.as_str(), |(_, w)| w);
        option_error(format_args!("`prefetch={value}`: {why}"))
    })
}

/// Takes a graph source's own options off the statement's leading
/// `CYPHER key=value ...` prefix ([`rhizome_cypher::query_options`]): what
/// they chose, and the statement with them replaced by spaces (positions
/// kept). Every other option (the scheduling hint, `docs/scheduling.md`)
/// stays for the engine, which rejects what it does not know. A bad
/// `prefetch` value, or `prefetch` given twice, is a `SyntaxError` (code
/// `InvalidQueryOption`).
pub fn split(query: &str) -> Result<(QueryOptions, String)> {
    let mut options = QueryOptions::default();
    let mut taken = Vec::new();
    for option in rhizome_cypher::query_options::query_options(query).options {
        if !option.name.eq_ignore_ascii_case("prefetch") {
            continue;
        }
        if options.prefetch.is_some() {
            return Err(option_error("`prefetch` is given twice"));
        }
        options.prefetch = Some(parse_prefetch_option(option.value)?);
        taken.push(option.span);
    }
    if taken.is_empty() {
        return Ok((options, query.to_string()));
    }
    Ok((options, rhizome_cypher::query_options::blank(query, taken)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_split_off_and_explain_profile_kept() {
        let words = |q: &str| q.split_whitespace().collect::<Vec<_>>().join(" ");
        let (o, q) = split("CYPHER prefetch=lookahead:4 MATCH (n) RETURN n").unwrap();
        assert_eq!(o.prefetch, Some(Prefetch::Lookahead(4)));
        assert_eq!(words(&q), "CYPHER MATCH (n) RETURN n");
        let (o, q) = split("PROFILE cypher PREFETCH=none MATCH (n) RETURN n").unwrap();
        assert_eq!(o.prefetch, Some(Prefetch::None));
        assert_eq!(words(&q), "PROFILE cypher MATCH (n) RETURN n");
        let (o, q) = split("  CYPHER prefetch=key_block:64\n PROFILE MATCH (n) RETURN n").unwrap();
        assert_eq!(o.prefetch, Some(Prefetch::KeyBlock(64)));
        assert_eq!(words(&q), "CYPHER PROFILE MATCH (n) RETURN n");
        // Positions are kept, and the engine's options stay for the engine.
        let query = "CYPHER prefetch=box_degrees:0.01 scheduling=dfs RETURN 1";
        let (o, q) = split(query).unwrap();
        assert_eq!(o.prefetch, Some(Prefetch::BoxBlock(0.01)));
        assert_eq!(q.len(), query.len());
        assert_eq!(words(&q), "CYPHER scheduling=dfs RETURN 1");
        let (o, q) = split("CYPHER runtime=slotted RETURN 1").unwrap();
        assert_eq!(o.prefetch, None);
        assert_eq!(q, "CYPHER runtime=slotted RETURN 1");
        let (o, _) = split("CYPHER prefetch=ellipse:1.25 RETURN 1").unwrap();
        assert_eq!(o.prefetch, Some(Prefetch::ellipse(1.25)));
        let (o, _) = split("CYPHER prefetch=ellipse:1.4:1.3 RETURN 1").unwrap();
        assert_eq!(
            o.prefetch,
            Some(Prefetch::Ellipse(crate::mapping::RegionShape {
                stretch: 1.4,
                start_weight: 1.3
            }))
        );
        assert_eq!(o.prefetch.unwrap().to_string(), "ellipse:1.4:1.3");
        // Without options the statement is untouched.
        let (o, q) = split("PROFILE MATCH (cypher) RETURN cypher").unwrap();
        assert_eq!(o.prefetch, None);
        assert_eq!(q, "PROFILE MATCH (cypher) RETURN cypher");
    }

    #[test]
    fn bad_options_are_clear_errors() {
        for (query, says) in [
            ("CYPHER prefetch=lookahead:99 RETURN 1", "from 1 to 16"),
            ("CYPHER prefetch=lookahead:x RETURN 1", "not a number"),
            (
                "CYPHER prefetch=far:3 RETURN 1",
                "lookahead, key_block, box_degrees",
            ),
            ("CYPHER prefetch=lookahead RETURN 1", "expected none"),
            ("CYPHER prefetch=none prefetch=none RETURN 1", "twice"),
            ("CYPHER prefetch=key_block:0 RETURN 1", "block size"),
            (
                "CYPHER prefetch=ellipse:0.9 RETURN 1",
                "stretch from 1 to 10",
            ),
            (
                "CYPHER prefetch=ellipse:1.4:0.5 RETURN 1",
                "weight from 1 to 4",
            ),
            ("CYPHER prefetch=ellipse:1.4:x RETURN 1", "not a number"),
            ("CYPHER prefetch=lookahead:4:2 RETURN 1", "not a number"),
        ] {
            let e = split(query).unwrap_err();
            assert_eq!(e.kind, ErrorKind::SyntaxError, "{query}: {e}");
            assert_eq!(e.code, Some("InvalidQueryOption"), "{query}: {e}");
            assert!(e.message.contains(says), "{query}: {e}");
        }
    }

    #[test]
    fn arbitrary_text_never_panics() {
        // A stable-Rust smoke test over pseudo-random option text.
        let alphabet: Vec<char> =
            "CYPHERprefetch=lookahead:key_block box_degrees ellipse 0.5-1e309\u{e9}\n\t"
                .chars()
                .collect();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let len = (state % 40) as usize;
            let text: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            let _ = split(&format!("CYPHER {text}"));
            let _ = split(&text);
        }
    }
}
