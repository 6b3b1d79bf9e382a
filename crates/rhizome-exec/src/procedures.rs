//! Procedures callable with `CALL`: built-ins (`db.labels`, ...) and any
//! registered by the embedding program (the TCK runner registers its test
//! procedures here).

use crate::context::QueryContext;
use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_storage::GraphRead;
use std::collections::HashMap;
use std::sync::Arc;

/// The body of a procedure: arguments in, rows of output fields out.
pub type ProcedureFn =
    Arc<dyn Fn(&QueryContext, &[Value]) -> Result<Vec<Vec<Value>>> + Send + Sync>;

/// A procedure's declared interface.
#[derive(Clone)]
pub struct Procedure {
    /// Qualified name, e.g. `db.labels`.
    pub name: String,
    /// Input parameter names and Cypher type names (`INTEGER?`, `STRING?`, ...).
    pub inputs: Vec<(String, String)>,
    /// Output field names and type names, in order.
    pub outputs: Vec<(String, String)>,
    /// The implementation.
    pub body: ProcedureFn,
}

/// All procedures known to a query.
#[derive(Clone, Default)]
pub struct Procedures {
    by_name: HashMap<String, Procedure>,
}

impl Procedures {
    /// The built-in procedures.
    pub fn builtin() -> Procedures {
        let mut p = Procedures::default();
        let names = |f: fn(&rhizome_storage::Catalog) -> &[String]| -> ProcedureFn {
            Arc::new(move |q: &QueryContext, _: &[Value]| {
                Ok(f(q.snapshot.catalog())
                    .iter()
                    .map(|n| vec![Value::String(n.clone())])
                    .collect())
            })
        };
        p.register(Procedure {
            name: "db.labels".into(),
            inputs: vec![],
            outputs: vec![("label".into(), "STRING".into())],
            body: names(|c| c.labels.names()),
        });
        p.register(Procedure {
            name: "db.relationshipTypes".into(),
            inputs: vec![],
            outputs: vec![("relationshipType".into(), "STRING".into())],
            body: names(|c| c.rel_types.names()),
        });
        p.register(Procedure {
            name: "db.propertyKeys".into(),
            inputs: vec![],
            outputs: vec![("propertyKey".into(), "STRING".into())],
            body: names(|c| c.property_keys.names()),
        });
        p
    }

    /// Adds or replaces a procedure.
    pub fn register(&mut self, procedure: Procedure) {
        self.by_name.insert(procedure.name.clone(), procedure);
    }

    /// The procedure named `name`.
    pub fn get(&self, name: &str) -> Option<&Procedure> {
        self.by_name.get(name)
    }

    /// All procedures.
    pub fn all(&self) -> impl Iterator<Item = &Procedure> {
        self.by_name.values()
    }

    /// Calls `name` with `args`, checking the argument count.
    pub fn call(&self, q: &QueryContext, name: &str, args: &[Value]) -> Result<Vec<Vec<Value>>> {
        let procedure = self.get(name).ok_or_else(|| {
            Error::new(
                ErrorKind::ProcedureError,
                format!("there is no procedure named `{name}`"),
            )
            .with_code("ProcedureNotFound")
        })?;
        if args.len() != procedure.inputs.len() {
            return Err(Error::new(
                ErrorKind::SemanticError,
                format!(
                    "procedure `{name}` takes {} argument(s), got {}",
                    procedure.inputs.len(),
                    args.len()
                ),
            )
            .with_code("InvalidNumberOfArguments"));
        }
        (procedure.body)(q, args)
    }
}
