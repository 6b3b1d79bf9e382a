//! Indexes and uniqueness constraints, created at bulk import or at run time.
//!
//! The schema is part of every delta version ([`crate::Snapshot::schema`]),
//! logged in the WAL when it changes, and written to the manifest at each
//! checkpoint (indexes as segment arrays, constraints as a list). A
//! uniqueness constraint on (label, key) always has an index on the same pair
//! backing it: creating the constraint creates the index if missing;
//! dropping the constraint leaves the index.

use crate::catalog::{Catalog, LabelId, PropertyKeyId};
use serde::{Deserialize, Serialize};

/// A (label, property key) pair an index or constraint covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IndexDef {
    /// The label.
    pub label: LabelId,
    /// The property key.
    pub key: PropertyKeyId,
}

impl IndexDef {
    /// `:Label(key)`, with names from `catalog`.
    pub fn describe(&self, catalog: &Catalog) -> String {
        format!(
            ":{}({})",
            catalog.label_name(self.label),
            catalog.property_key_name(self.key)
        )
    }
}

/// Whether a schema object is an index or a uniqueness constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SchemaObjectKind {
    /// A property index.
    Index,
    /// A uniqueness constraint.
    Constraint,
}

impl SchemaObjectKind {
    /// `index` or `constraint`, as used in default names and messages.
    pub fn noun(self) -> &'static str {
        match self {
            SchemaObjectKind::Index => "index",
            SchemaObjectKind::Constraint => "constraint",
        }
    }
}

/// A name a user gave to an index or constraint when creating it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaName {
    /// The name; unique among all indexes and constraints of a database.
    pub name: String,
    /// What it names.
    pub kind: SchemaObjectKind,
    /// The (label, key) pair of the named object.
    pub def: IndexDef,
}

/// The indexes and constraints of one database state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    /// Property indexes, in creation order.
    pub indexes: Vec<IndexDef>,
    /// Uniqueness constraints (each also listed in `indexes`), in creation order.
    pub constraints: Vec<IndexDef>,
    /// Names given at creation; objects without an entry have the default
    /// name of [`Schema::name_of`].
    #[serde(default)]
    pub names: Vec<SchemaName>,
}

impl Schema {
    /// True if (label, key) is indexed.
    pub fn has_index(&self, label: LabelId, key: PropertyKeyId) -> bool {
        self.indexes.contains(&IndexDef { label, key })
    }

    /// True if (label, key) must be unique.
    pub fn is_unique(&self, label: LabelId, key: PropertyKeyId) -> bool {
        self.constraints.contains(&IndexDef { label, key })
    }

    /// The objects of `kind`, in creation order.
    pub fn objects(&self, kind: SchemaObjectKind) -> &[IndexDef] {
        match kind {
            SchemaObjectKind::Index => &self.indexes,
            SchemaObjectKind::Constraint => &self.constraints,
        }
    }

    /// The name of an object: the one given at creation, else
    /// `<kind>_<Label>_<key>` (e.g. `index_Person_id`).
    pub fn name_of(&self, kind: SchemaObjectKind, def: IndexDef, catalog: &Catalog) -> String {
        match self.names.iter().find(|n| n.kind == kind && n.def == def) {
            Some(n) => n.name.clone(),
            None => format!(
                "{}_{}_{}",
                kind.noun(),
                catalog.label_name(def.label),
                catalog.property_key_name(def.key)
            ),
        }
    }

    /// The object called `name` (given or default name), if any.
    pub fn find(&self, name: &str, catalog: &Catalog) -> Option<(SchemaObjectKind, IndexDef)> {
        [SchemaObjectKind::Constraint, SchemaObjectKind::Index]
            .into_iter()
            .flat_map(|kind| self.objects(kind).iter().map(move |def| (kind, *def)))
            .find(|(kind, def)| self.name_of(*kind, *def, catalog) == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_and_names() {
        let mut catalog = Catalog::default();
        let label = catalog.labels.intern("Person");
        let key = catalog.property_keys.intern("id");
        let def = IndexDef { label, key };
        let schema = Schema {
            indexes: vec![def],
            constraints: vec![def],
            names: vec![SchemaName {
                name: "person_id".into(),
                kind: SchemaObjectKind::Constraint,
                def,
            }],
        };
        assert!(schema.has_index(label, key) && schema.is_unique(label, key));
        assert!(!schema.has_index(label, key + 1));
        assert_eq!(def.describe(&catalog), ":Person(id)");
        assert_eq!(
            schema.name_of(SchemaObjectKind::Index, def, &catalog),
            "index_Person_id"
        );
        assert_eq!(
            schema.find("person_id", &catalog),
            Some((SchemaObjectKind::Constraint, def))
        );
        assert_eq!(
            schema.find("index_Person_id", &catalog),
            Some((SchemaObjectKind::Index, def))
        );
        assert_eq!(schema.find("nope", &catalog), None);
        let json = serde_json::to_string(&schema).unwrap();
        assert_eq!(serde_json::from_str::<Schema>(&json).unwrap(), schema);
    }
}
