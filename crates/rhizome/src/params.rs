//! Query parameters given on the command line as `NAME=JSON`.
//!
//! JSON maps to Cypher values one to one: numbers that are integers in the
//! 64-bit range become INTEGER, other numbers FLOAT, strings STRING (never
//! re-interpreted as dates), arrays LIST and objects MAP.

use rhizome_common::Value;

/// Parses `NAME=JSON` (the form of `--param`). The error names the parameter.
pub fn parse_param(arg: &str) -> Result<(String, Value), String> {
    let Some((name, json)) = arg.split_once('=') else {
        return Err(format!("expected NAME=JSON, found `{arg}`"));
    };
    let name = name.trim();
    if name.is_empty() || name.starts_with('$') {
        return Err(format!(
            "parameter name missing or invalid in `{arg}` (write it without `$`, e.g. `age=42`)"
        ));
    }
    let parsed: serde_json::Value = serde_json::from_str(json).map_err(|e| {
        format!("parameter `{name}`: invalid JSON value `{json}`: {e} (strings need JSON quotes, e.g. {name}='\"Alice\"')")
    })?;
    let value = from_json(&parsed).map_err(|e| format!("parameter `{name}`: {e}"))?;
    Ok((name.to_string(), value))
}

/// Converts a JSON value to a Cypher value.
pub fn from_json(json: &serde_json::Value) -> Result<Value, String> {
    Ok(match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else if n.is_u64() {
                return Err(format!("integer {n} does not fit in 64 bits"));
            } else {
                Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(items) => {
            Value::List(items.iter().map(from_json).collect::<Result<_, _>>()?)
        }
        serde_json::Value::Object(map) => Value::Map(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), from_json(v)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_json_kind() {
        assert_eq!(parse_param("n=42").unwrap(), ("n".into(), Value::Int(42)));
        assert_eq!(parse_param("x=1.5").unwrap().1, Value::Float(1.5));
        assert_eq!(parse_param("x=1e3").unwrap().1, Value::Float(1000.0));
        assert_eq!(
            parse_param("name=\"Ada\"").unwrap().1,
            Value::String("Ada".into())
        );
        assert_eq!(
            parse_param("l=[1,null,true]").unwrap().1,
            Value::List(vec![Value::Int(1), Value::Null, Value::Bool(true)])
        );
        let Value::Map(m) = parse_param("m={\"a\":{\"b\":\"c=d\"}}").unwrap().1 else {
            panic!("not a map")
        };
        assert!(matches!(&m["a"], Value::Map(inner) if inner["b"] == Value::String("c=d".into())));
    }

    #[test]
    fn errors_name_the_parameter() {
        let err = parse_param("name=Ada").unwrap_err();
        assert!(err.contains("parameter `name`"), "{err}");
        assert!(err.contains("invalid JSON"), "{err}");
        assert!(parse_param("noequals").unwrap_err().contains("NAME=JSON"));
        assert!(parse_param("=1").is_err());
        let big = parse_param("big=18446744073709551615").unwrap_err();
        assert!(
            big.contains("parameter `big`") && big.contains("64 bits"),
            "{big}"
        );
    }
}
