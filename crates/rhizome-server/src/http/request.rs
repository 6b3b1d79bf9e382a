//! The JSON body of a Query API request, decoded with clear errors.

use super::json;
use rhizome_common::Value;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A statement to run, from a request body.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryRequest {
    /// The Cypher text (`None`: the request runs nothing, e.g. a bare
    /// commit or a transaction opened without a statement).
    pub statement: Option<String>,
    /// Its parameters.
    pub parameters: BTreeMap<String, Value>,
    /// Whether the answer carries `counters`.
    pub include_counters: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Raw {
    statement: Option<String>,
    #[serde(default)]
    parameters: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default)]
    include_counters: Option<bool>,
    /// Accepted and not needed: one server sees its own writes at once.
    #[serde(default)]
    #[allow(dead_code)]
    bookmarks: Option<Vec<String>>,
    /// `READ` or `WRITE`: a routing hint; one server serves both.
    #[serde(default)]
    access_mode: Option<String>,
    #[serde(default)]
    impersonated_user: Option<String>,
}

/// Decodes `body` (empty is allowed when `statement_required` is false).
/// `typed` reads typed JSON parameters. The error says what is wrong and
/// where (serde's line and column).
pub fn decode(body: &[u8], typed: bool, statement_required: bool) -> Result<QueryRequest, String> {
    let blank = body.iter().all(|b| b.is_ascii_whitespace());
    let raw: Raw = if blank {
        if statement_required {
            return Err("the request body is empty: expected a JSON object such as \
                 {\"statement\": \"RETURN 1\", \"parameters\": {}}"
                .into());
        }
        Raw {
            statement: None,
            parameters: None,
            include_counters: None,
            bookmarks: None,
            access_mode: None,
            impersonated_user: None,
        }
    } else {
        serde_json::from_slice(body).map_err(|e| format!("malformed JSON request body: {e}"))?
    };
    if raw.impersonated_user.is_some() {
        return Err("`impersonatedUser` is not supported by Rhizome".into());
    }
    if let Some(mode) = &raw.access_mode {
        if !mode.eq_ignore_ascii_case("READ") && !mode.eq_ignore_ascii_case("WRITE") {
            return Err(format!("`accessMode` must be READ or WRITE, not `{mode}`"));
        }
    }
    if statement_required && raw.statement.is_none() {
        return Err("the request body has no `statement`".into());
    }
    let parameters = match &raw.parameters {
        Some(p) => json::parameters(p, typed)?,
        None => BTreeMap::new(),
    };
    Ok(QueryRequest {
        statement: raw.statement,
        parameters,
        include_counters: raw.include_counters.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_request() {
        let r = decode(
            br#"{"statement": "RETURN $x", "parameters": {"x": 1}, "includeCounters": true,
                 "bookmarks": ["b"], "accessMode": "READ"}"#,
            false,
            true,
        )
        .unwrap();
        assert_eq!(r.statement.as_deref(), Some("RETURN $x"));
        assert_eq!(r.parameters["x"], Value::Int(1));
        assert!(r.include_counters);
    }

    #[test]
    fn clear_errors() {
        let e = decode(b"{\"statement\": ", false, true).unwrap_err();
        assert!(e.contains("malformed JSON") && e.contains("line 1"), "{e}");
        let e = decode(b"{\"query\": \"RETURN 1\"}", false, true).unwrap_err();
        assert!(e.contains("unknown field `query`"), "{e}");
        let e = decode(b"", false, true).unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = decode(b"{}", false, true).unwrap_err();
        assert!(e.contains("no `statement`"), "{e}");
        let e = decode(b"[1]", false, true).unwrap_err();
        assert!(e.contains("malformed"), "{e}");
        let e = decode(
            b"{\"statement\": \"x\", \"accessMode\": \"ALL\"}",
            false,
            true,
        )
        .unwrap_err();
        assert!(e.contains("accessMode"), "{e}");
        assert_eq!(decode(b"  ", false, false).unwrap().statement, None);
    }
}
