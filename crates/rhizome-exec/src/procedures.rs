//! Procedures callable with `CALL`: built-ins (`db.labels`, ...) and any
//! registered by the embedding program (the TCK runner registers its test
//! procedures here). The registry types live in [`crate::context`], beside
//! the query context a procedure's body receives.

use crate::context::QueryContext;
pub use crate::context::{Procedure, ProcedureFn, Procedures};
use rhizome_common::Value;
use rhizome_storage::GraphRead;
use std::sync::Arc;

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
            defaults: vec![],
            body: names(|c| c.labels.names()),
        });
        p.register(Procedure {
            name: "db.relationshipTypes".into(),
            inputs: vec![],
            outputs: vec![("relationshipType".into(), "STRING".into())],
            defaults: vec![],
            body: names(|c| c.rel_types.names()),
        });
        p.register(Procedure {
            name: "db.propertyKeys".into(),
            inputs: vec![],
            outputs: vec![("propertyKey".into(), "STRING".into())],
            defaults: vec![],
            body: names(|c| c.property_keys.names()),
        });
        p
    }
}
