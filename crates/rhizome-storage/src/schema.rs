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

/// The indexes and constraints of one database state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    /// Property indexes, in creation order.
    pub indexes: Vec<IndexDef>,
    /// Uniqueness constraints (each also listed in `indexes`), in creation order.
    pub constraints: Vec<IndexDef>,
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
        };
        assert!(schema.has_index(label, key) && schema.is_unique(label, key));
        assert!(!schema.has_index(label, key + 1));
        assert_eq!(def.describe(&catalog), ":Person(id)");
        let json = serde_json::to_string(&schema).unwrap();
        assert_eq!(serde_json::from_str::<Schema>(&json).unwrap(), schema);
    }
}
