//! `dbms.procedures()` and `dbms.functions()`: what tools (the web page's
//! completion among them) list to offer procedures and functions.
//!
//! `dbms.procedures()` reads the query's own procedure registry, so it
//! lists exactly what `CALL` can run on that database, itself included.

use rhizome_common::Value;
use rhizome_engine::procedures::Procedure;
use std::sync::Arc;

/// The introspection procedures the server registers on every database.
pub fn procedures() -> Vec<Procedure> {
    vec![
        Procedure {
            name: "dbms.procedures".into(),
            inputs: vec![],
            outputs: vec![
                ("name".into(), "STRING".into()),
                ("signature".into(), "STRING".into()),
                ("description".into(), "STRING".into()),
                ("mode".into(), "STRING".into()),
            ],
            defaults: vec![],
            body: Arc::new(|q, _| {
                let mut rows: Vec<Vec<Value>> = q
                    .procedures
                    .all()
                    .map(|p| {
                        vec![
                            Value::String(p.name.clone()),
                            Value::String(procedure_signature(p)),
                            Value::String(String::new()),
                            Value::String("READ".into()),
                        ]
                    })
                    .collect();
                rows.sort_by(|a, b| a[0].to_string().cmp(&b[0].to_string()));
                Ok(rows)
            }),
        },
        Procedure {
            name: "dbms.functions".into(),
            inputs: vec![],
            outputs: vec![
                ("name".into(), "STRING".into()),
                ("signature".into(), "STRING".into()),
                ("aggregating".into(), "BOOLEAN".into()),
            ],
            defaults: vec![],
            body: Arc::new(|_, _| Ok(function_rows())),
        },
    ]
}

/// `name(in :: TYPE, opt = DEFAULT :: TYPE, …) :: (out :: TYPE, …)`, the
/// form Neo4j prints.
pub fn procedure_signature(p: &Procedure) -> String {
    let list = |items: &[(String, String)]| {
        items
            .iter()
            .map(|(n, t)| format!("{n} :: {t}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let required = p.required_inputs();
    let inputs = p
        .inputs
        .iter()
        .enumerate()
        .map(|(i, (n, t))| match i.checked_sub(required) {
            Some(d) => format!("{n} = {} :: {t}", default_text(&p.defaults[d])),
            None => format!("{n} :: {t}"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!("{}({inputs}) :: ({})", p.name, list(&p.outputs))
}

/// A default value as Neo4j's signatures print it (`NaN`, `1`, `null`).
fn default_text(value: &Value) -> String {
    match value {
        Value::Float(x) if x.is_nan() => "NaN".to_string(),
        Value::Null => "null".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One row per scalar and aggregate function: its name, a signature that
/// gives its arity, and whether it aggregates.
fn function_rows() -> Vec<Vec<Value>> {
    let mut names: Vec<&str> = rhizome_functions::functions::function_names().collect();
    names.sort_unstable();
    names
        .into_iter()
        .filter_map(|name| {
            let sig = rhizome_functions::functions::function_signature(name)?;
            let args = match (sig.min_args, sig.max_args) {
                (min, max) if max == usize::MAX => format!("{min}.. arguments"),
                (min, max) if min == max => format!("{min} argument{}", plural(min)),
                (min, max) => format!("{min}..{max} arguments"),
            };
            Some(vec![
                Value::String(name.to_string()),
                Value::String(format!("{name}() :: {args}")),
                Value::Bool(sig.is_aggregate),
            ])
        })
        .collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_reads_like_neo4j() {
        let p = Procedure {
            name: "db.labels".into(),
            inputs: vec![],
            outputs: vec![("label".into(), "STRING".into())],
            defaults: vec![],
            body: Arc::new(|_, _| Ok(vec![])),
        };
        assert_eq!(procedure_signature(&p), "db.labels() :: (label :: STRING)");
        let p = Procedure {
            name: "apoc.algo.dijkstra".into(),
            inputs: vec![
                ("startNode".into(), "NODE?".into()),
                ("defaultWeight".into(), "FLOAT?".into()),
                ("numberOfWantedPaths".into(), "INTEGER?".into()),
            ],
            outputs: vec![("weight".into(), "FLOAT?".into())],
            defaults: vec![Value::Float(f64::NAN), Value::Int(1)],
            body: Arc::new(|_, _| Ok(vec![])),
        };
        assert_eq!(
            procedure_signature(&p),
            "apoc.algo.dijkstra(startNode :: NODE?, defaultWeight = NaN :: FLOAT?, \
             numberOfWantedPaths = 1 :: INTEGER?) :: (weight :: FLOAT?)"
        );
    }

    #[test]
    fn functions_include_scalars_and_aggregates() {
        let rows = function_rows();
        let find = |n: &str| rows.iter().find(|r| r[0] == Value::String(n.into()));
        assert_eq!(find("count").unwrap()[2], Value::Bool(true));
        assert_eq!(find("tolower").unwrap()[2], Value::Bool(false));
        assert!(rows.len() > 50);
    }
}
