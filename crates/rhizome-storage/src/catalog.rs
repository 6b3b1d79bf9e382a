//! Names of labels, relationship types and property keys, and their dense ids.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Dense id of a label.
pub type LabelId = u32;
/// Dense id of a relationship type.
pub type RelTypeId = u32;
/// Dense id of a property key.
pub type PropertyKeyId = u32;

/// A list of names with a reverse lookup; ids are positions and never change.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(from = "Vec<String>", into = "Vec<String>")]
pub struct NameTable {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl From<Vec<String>> for NameTable {
    fn from(names: Vec<String>) -> NameTable {
        let ids = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u32))
            .collect();
        NameTable { names, ids }
    }
}

impl From<NameTable> for Vec<String> {
    fn from(table: NameTable) -> Vec<String> {
        table.names
    }
}

impl NameTable {
    /// The id of `name`, if known.
    pub fn id(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    /// The id of `name`, adding it if new.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(id) = self.id(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }

    /// The name of `id` (panics on an id that was never handed out).
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// All names, in id order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True if there are no names.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The schema vocabulary of a database.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Catalog {
    /// Node labels.
    pub labels: NameTable,
    /// Relationship types.
    pub rel_types: NameTable,
    /// Property keys (shared by nodes and relationships).
    pub property_keys: NameTable,
}

impl Catalog {
    /// Id of a label name.
    pub fn label_id(&self, name: &str) -> Option<LabelId> {
        self.labels.id(name)
    }

    /// Id of a relationship type name.
    pub fn rel_type_id(&self, name: &str) -> Option<RelTypeId> {
        self.rel_types.id(name)
    }

    /// Id of a property key name.
    pub fn property_key_id(&self, name: &str) -> Option<PropertyKeyId> {
        self.property_keys.id(name)
    }

    /// Name of a label id.
    pub fn label_name(&self, id: LabelId) -> &str {
        self.labels.name(id)
    }

    /// Name of a relationship type id.
    pub fn rel_type_name(&self, id: RelTypeId) -> &str {
        self.rel_types.name(id)
    }

    /// Name of a property key id.
    pub fn property_key_name(&self, id: PropertyKeyId) -> &str {
        self.property_keys.name(id)
    }
}
