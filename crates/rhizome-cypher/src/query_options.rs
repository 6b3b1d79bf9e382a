//! The `CYPHER key=value …` prefix a statement may begin with, before or
//! after `EXPLAIN` / `PROFILE`, as Neo4j writes query options. This module
//! only finds the words; each consumer reads the options it knows (the
//! planner's scheduling hint, a graph source's prefetcher) and blanks them
//! out with [`blank`], so error positions still point into the text the
//! user wrote.

use std::ops::Range;

/// One `name=value` option of a statement's `CYPHER` prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryOption<'a> {
    /// The option's name, as written.
    pub name: &'a str,
    /// Its value, as written (may be empty).
    pub value: &'a str,
    /// Where `name=value` stands in the statement (byte offsets).
    pub span: Range<usize>,
}

/// The `CYPHER` prefixes of a statement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryOptions<'a> {
    /// Every option, in the order written.
    pub options: Vec<QueryOption<'a>>,
    /// Where each `CYPHER` word stands (byte offsets); empty if the
    /// statement has no prefix.
    pub keywords: Vec<Range<usize>>,
}

/// The `CYPHER` prefixes at the start of `query`: any number of `CYPHER`
/// words, each followed by `name=value` words, mixed with `EXPLAIN` /
/// `PROFILE`. Stops at the first other word; never fails (what an option
/// means is its consumer's to check).
pub fn query_options(query: &str) -> QueryOptions<'_> {
    let word_at = |at: usize| {
        let rest = &query[at..];
        let start = at + (rest.len() - rest.trim_start().len());
        let end = query[start..]
            .find(char::is_whitespace)
            .map_or(query.len(), |e| start + e);
        (start, end)
    };
    let mut found = QueryOptions::default();
    let mut at = 0;
    loop {
        let (start, end) = word_at(at);
        let word = &query[start..end];
        if word.eq_ignore_ascii_case("EXPLAIN") || word.eq_ignore_ascii_case("PROFILE") {
            at = end;
            continue;
        }
        if word.is_empty() || !word.eq_ignore_ascii_case("CYPHER") {
            return found;
        }
        found.keywords.push(start..end);
        at = end;
        loop {
            let (start, end) = word_at(at);
            let Some((name, value)) = query[start..end].split_once('=') else {
                break;
            };
            found.options.push(QueryOption {
                name,
                value,
                span: start..end,
            });
            at = end;
        }
    }
}

/// `query` with every byte range in `spans` replaced by spaces (so the
/// positions of the rest stay the same).
pub fn blank(query: &str, spans: impl IntoIterator<Item = Range<usize>>) -> String {
    let mut text = query.to_string();
    for span in spans {
        text.replace_range(span.clone(), &" ".repeat(span.len()));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_keywords_are_found_around_explain_and_profile() {
        let q = "PROFILE cypher scheduling=dfs\n max_si=4 CYPHER prefetch=none MATCH (n) RETURN n";
        let found = query_options(q);
        let names: Vec<(&str, &str)> = found.options.iter().map(|o| (o.name, o.value)).collect();
        assert_eq!(
            names,
            [("scheduling", "dfs"), ("max_si", "4"), ("prefetch", "none")]
        );
        assert_eq!(found.keywords.len(), 2);
        for o in &found.options {
            assert_eq!(&q[o.span.clone()], format!("{}={}", o.name, o.value));
        }
        let all = found
            .keywords
            .iter()
            .cloned()
            .chain(found.options.iter().map(|o| o.span.clone()));
        let text = blank(q, all);
        assert_eq!(text.len(), q.len());
        assert_eq!(
            text.split_whitespace().collect::<Vec<_>>().join(" "),
            "PROFILE MATCH (n) RETURN n"
        );
    }

    #[test]
    fn a_statement_without_prefix_has_none() {
        for q in [
            "",
            "  ",
            "MATCH (cypher) RETURN cypher",
            "EXPLAIN RETURN 1",
            "CYPHERx=1 RETURN 1",
        ] {
            assert_eq!(query_options(q), QueryOptions::default(), "{q:?}");
        }
        // The words after the options are the statement's, even with `=`.
        let found = query_options("CYPHER a=1 RETURN 1=1");
        assert_eq!(found.options.len(), 1);
    }

    #[test]
    fn arbitrary_text_never_panics() {
        let alphabet: Vec<char> = "CYPHERexplain= \n\t=\u{e9}\u{2003}ab1".chars().collect();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let len = (state % 30) as usize;
            let text: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            let found = query_options(&text);
            let spans = found
                .keywords
                .iter()
                .cloned()
                .chain(found.options.iter().map(|o| o.span.clone()));
            assert_eq!(blank(&text, spans).len(), text.len());
        }
    }
}
