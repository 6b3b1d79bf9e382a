//! Schema commands: `CREATE INDEX`, `DROP INDEX`, `CREATE CONSTRAINT … IS
//! UNIQUE`, `DROP CONSTRAINT`, `SHOW INDEXES` and `SHOW CONSTRAINTS`.
//!
//! They are not planned: the changing ones run directly against a
//! [`WriteTxn`] (so they commit, roll back and are logged like any write),
//! the `SHOW` ones read the schema of a snapshot. Indexes are single-key
//! range indexes on node properties; uniqueness constraints are backed by
//! such an index (created with the constraint if missing, kept when the
//! constraint is dropped).

use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_cypher::ast::{
    ConstraintKind, DropTarget, Ident, QueryPrefix, Statement, StatementKind,
};
use rhizome_storage::{GraphRead, IndexDef, SchemaObjectKind, Snapshot, WriteTxn};

/// What kind of schema command a statement is, if it is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SchemaCommand {
    /// Changes the schema (needs a write transaction).
    Change,
    /// Lists indexes or constraints (reads a snapshot).
    Show,
}

/// Classifies `statement`; `EXPLAIN`/`PROFILE` of a schema command is a
/// `SemanticError` (there is no plan to show).
pub(crate) fn classify(statement: &Statement) -> Result<Option<SchemaCommand>> {
    let command = match statement.kind {
        StatementKind::CreateIndex(_)
        | StatementKind::DropIndex(_)
        | StatementKind::CreateConstraint(_)
        | StatementKind::DropConstraint(_) => SchemaCommand::Change,
        StatementKind::ShowIndexes | StatementKind::ShowConstraints => SchemaCommand::Show,
        _ => return Ok(None),
    };
    if let Some(prefix) = statement.prefix {
        let word = match prefix {
            QueryPrefix::Explain => "EXPLAIN",
            QueryPrefix::Profile => "PROFILE",
        };
        return Err(Error::new(
            ErrorKind::SemanticError,
            format!("{word} cannot be used with a schema command: it has no query plan"),
        ));
    }
    Ok(Some(command))
}

fn schema_error(code: &'static str, message: String) -> Error {
    Error::new(ErrorKind::SchemaError, message).with_code(code)
}

/// The one property key of a single-key index or constraint.
fn single_key<'a>(properties: &'a [Ident], what: &str) -> Result<&'a str> {
    match properties {
        [key] => Ok(&key.name),
        _ => Err(schema_error(
            "UnsupportedSchema",
            format!(
                "{what} on {} properties are not supported; create one per property",
                properties.len()
            ),
        )),
    }
}

/// The (label, key) pair as ids, if both names are known to `snapshot`.
fn def_of(snapshot: &Snapshot, label: &str, key: &str) -> Option<IndexDef> {
    let catalog = snapshot.catalog();
    Some(IndexDef {
        label: catalog.label_id(label)?,
        key: catalog.property_key_id(key)?,
    })
}

/// Runs a changing schema command in `txn`. Existing objects and names are
/// errors (`SchemaError`) unless `IF NOT EXISTS` / `IF EXISTS` was given.
pub(crate) fn change(kind: &StatementKind, txn: &mut WriteTxn) -> Result<()> {
    match kind {
        StatementKind::CreateIndex(spec) => {
            if spec.relationship {
                return Err(schema_error(
                    "UnsupportedSchema",
                    "indexes on relationship properties are not supported".into(),
                ));
            }
            let key = single_key(&spec.properties, "indexes")?;
            let name = spec.name.as_ref().map(|n| n.name.as_str());
            create(
                SchemaObjectKind::Index,
                &spec.label.name,
                key,
                name,
                spec.if_not_exists,
                txn,
            )
        }
        StatementKind::CreateConstraint(spec) => {
            if spec.kind != ConstraintKind::Unique {
                return Err(schema_error(
                    "UnsupportedSchema",
                    "only uniqueness constraints (`REQUIRE v.p IS UNIQUE`) are supported".into(),
                ));
            }
            let key = single_key(&spec.properties, "uniqueness constraints")?;
            let name = spec.name.as_ref().map(|n| n.name.as_str());
            let label = &spec.label.name;
            create(
                SchemaObjectKind::Constraint,
                label,
                key,
                name,
                spec.if_not_exists,
                txn,
            )
        }
        StatementKind::DropIndex(target) => drop(SchemaObjectKind::Index, target, txn),
        StatementKind::DropConstraint(target) => drop(SchemaObjectKind::Constraint, target, txn),
        _ => Err(Error::new(
            ErrorKind::Internal,
            "schema::change called with a statement that does not change the schema",
        )),
    }
}

/// `CREATE INDEX` / `CREATE CONSTRAINT` on (`label`, `key`).
fn create(
    kind: SchemaObjectKind,
    label: &str,
    key: &str,
    name: Option<&str>,
    if_not_exists: bool,
    txn: &mut WriteTxn,
) -> Result<()> {
    let snapshot = txn.snapshot();
    let schema = snapshot.schema();
    let catalog = snapshot.catalog();
    let existing = def_of(&snapshot, label, key).filter(|d| schema.objects(kind).contains(d));
    let taken = name.and_then(|n| schema.find(n, catalog));
    if if_not_exists && (existing.is_some() || taken.is_some()) {
        return Ok(());
    }
    if let Some(def) = existing {
        return Err(schema_error(
            "EquivalentSchemaRuleAlreadyExists",
            format!(
                "the {} on :{label}({key}) already exists: `{}`",
                kind.noun(),
                schema.name_of(kind, def, catalog)
            ),
        ));
    }
    match kind {
        SchemaObjectKind::Index => txn.create_index(label, key, name),
        SchemaObjectKind::Constraint => txn.create_unique_constraint(label, key, name),
    }
    .map(|_| ())
}

/// `DROP INDEX` / `DROP CONSTRAINT` by name or by `ON :Label(key)`.
fn drop(kind: SchemaObjectKind, target: &DropTarget, txn: &mut WriteTxn) -> Result<()> {
    let snapshot = txn.snapshot();
    let catalog = snapshot.catalog();
    let noun = kind.noun();
    let (label, key) = match target {
        DropTarget::Named { name, if_exists } => {
            match snapshot.schema().find(&name.name, catalog) {
                Some((found, def)) if found == kind => (
                    catalog.label_name(def.label).to_string(),
                    catalog.property_key_name(def.key).to_string(),
                ),
                Some((found, def)) => {
                    return Err(schema_error(
                        "SchemaKindMismatch",
                        format!(
                            "`{}` is the {} on {}, not an {noun}; use DROP {}",
                            name.name,
                            found.noun(),
                            def.describe(catalog),
                            found.noun().to_ascii_uppercase()
                        ),
                    ))
                }
                None if *if_exists => return Ok(()),
                None => {
                    return Err(schema_error(
                        "SchemaRuleNotFound",
                        format!("there is no {noun} called `{}`", name.name),
                    ))
                }
            }
        }
        DropTarget::On { label, properties } => (
            label.name.clone(),
            single_key(properties, "indexes")?.to_string(),
        ),
    };
    let dropped = match kind {
        SchemaObjectKind::Index => txn.drop_index(&label, &key)?,
        SchemaObjectKind::Constraint => txn.drop_constraint(&label, &key)?,
    };
    if dropped {
        Ok(())
    } else {
        Err(schema_error(
            "SchemaRuleNotFound",
            format!("there is no {noun} on :{label}({key})"),
        ))
    }
}

/// The columns and rows of `SHOW INDEXES` / `SHOW CONSTRAINTS` on `snapshot`.
pub(crate) fn show(kind: &StatementKind, snapshot: &Snapshot) -> (Vec<String>, Vec<Vec<Value>>) {
    let schema = snapshot.schema();
    let catalog = snapshot.catalog();
    let text = |s: &str| Value::String(s.to_string());
    let list = |s: &str| Value::List(vec![text(s)]);
    let show_indexes = matches!(kind, StatementKind::ShowIndexes);
    let (object, other) = if show_indexes {
        (SchemaObjectKind::Index, SchemaObjectKind::Constraint)
    } else {
        (SchemaObjectKind::Constraint, SchemaObjectKind::Index)
    };
    let rows = schema
        .objects(object)
        .iter()
        .enumerate()
        .map(|(i, def)| {
            let name = schema.name_of(object, *def, catalog);
            let label = catalog.label_name(def.label);
            let key = catalog.property_key_name(def.key);
            // The constraint an index backs, or the index backing a constraint.
            let partner = if schema.objects(other).contains(def) {
                text(&schema.name_of(other, *def, catalog))
            } else {
                Value::Null
            };
            let mut row = vec![Value::Int(i as i64 + 1), text(&name)];
            if show_indexes {
                row.extend([text("ONLINE"), Value::Float(100.0), text("RANGE")]);
            } else {
                row.push(text("UNIQUENESS"));
            }
            row.extend([text("NODE"), list(label), list(key), partner]);
            row
        })
        .collect();
    let columns: &[&str] = if show_indexes {
        &[
            "id",
            "name",
            "state",
            "populationPercent",
            "type",
            "entityType",
            "labelsOrTypes",
            "properties",
            "owningConstraint",
        ]
    } else {
        &[
            "id",
            "name",
            "type",
            "entityType",
            "labelsOrTypes",
            "properties",
            "ownedIndex",
        ]
    };
    (columns.iter().map(|c| c.to_string()).collect(), rows)
}
