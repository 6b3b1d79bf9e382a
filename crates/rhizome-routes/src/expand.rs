//! APOC's relationship filter strings: `'ROAD'`, `'ROAD>'`, `'<ROAD'`,
//! `'ROAD|<FERRY|RAIL>'`, `''`.
//!
//! Each `|`-separated item is a type name, optionally with `<` in front
//! (incoming relationships only) or `>` after it (outgoing only); without
//! either, both directions. An empty item or an empty string means every
//! type; `'>'` and `'<'` alone mean every type in that direction.

use rhizome_common::{Error, ErrorKind, Result};

/// Which way relationships are followed from the node being expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeDirection {
    /// `TYPE>`: from the node to the neighbour.
    Outgoing,
    /// `<TYPE`: from the neighbour to the node.
    Incoming,
    /// `TYPE`: either way.
    Both,
}

/// One item of a filter: a type (`None` for every type) and a direction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExpandSpec {
    /// The type name, or `None` for every type.
    pub rel_type: Option<String>,
    /// The direction.
    pub direction: TypeDirection,
}

/// Parses a filter string; `what` names the argument in errors.
pub fn parse_filter(text: &str, what: &str) -> Result<Vec<ExpandSpec>> {
    let mut out: Vec<ExpandSpec> = Vec::new();
    for item in text.split('|') {
        let item = item.trim();
        let (incoming, rest) = match item.strip_prefix('<') {
            Some(rest) => (true, rest),
            None => (false, item),
        };
        let (outgoing, name) = match rest.strip_suffix('>') {
            Some(name) => (true, name),
            None => (false, rest),
        };
        let direction = match (incoming, outgoing) {
            (true, true) => {
                return Err(Error::new(
                    ErrorKind::ArgumentError,
                    format!(
                        "{what}: `{item}` has both `<` and `>`; write `{name}` for both directions"
                    ),
                ))
            }
            (true, false) => TypeDirection::Incoming,
            (false, true) => TypeDirection::Outgoing,
            (false, false) => TypeDirection::Both,
        };
        let name = name.trim();
        if name.contains(['<', '>']) {
            return Err(Error::new(
                ErrorKind::ArgumentError,
                format!(
                    "{what}: `{item}` is not a type with an optional `<` in front or `>` after it"
                ),
            ));
        }
        let spec = ExpandSpec {
            rel_type: (!name.is_empty()).then(|| name.to_string()),
            direction,
        };
        if !out.contains(&spec) {
            out.push(spec);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(t: Option<&str>, d: TypeDirection) -> ExpandSpec {
        ExpandSpec {
            rel_type: t.map(str::to_string),
            direction: d,
        }
    }

    #[test]
    fn apoc_filters_parse() {
        use TypeDirection::*;
        assert_eq!(
            parse_filter("ROAD", "f").unwrap(),
            vec![spec(Some("ROAD"), Both)]
        );
        assert_eq!(
            parse_filter("KNOWS|<WORKS_WITH| IS_MANAGER_OF>", "f").unwrap(),
            vec![
                spec(Some("KNOWS"), Both),
                spec(Some("WORKS_WITH"), Incoming),
                spec(Some("IS_MANAGER_OF"), Outgoing)
            ]
        );
        assert_eq!(parse_filter("", "f").unwrap(), vec![spec(None, Both)]);
        assert_eq!(parse_filter(">", "f").unwrap(), vec![spec(None, Outgoing)]);
        assert_eq!(parse_filter("A|A", "f").unwrap().len(), 1);
    }

    #[test]
    fn malformed_filters_are_argument_errors() {
        for bad in ["<ROAD>", "RO>AD", "<<ROAD", "ROAD>>"] {
            let e = parse_filter(bad, "relTypesAndDirections").unwrap_err();
            assert_eq!(e.kind, ErrorKind::ArgumentError, "{bad}");
            assert!(e.message.starts_with("relTypesAndDirections: "), "{e}");
        }
    }
}
