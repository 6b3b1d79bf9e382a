//! Id spaces: the maps from the ids written in CSV files to node ids.
//!
//! Every `:ID(<space>)` column puts its ids into the named space (`""` is the
//! global space of `:ID` without a name); `:START_ID(<space>)` and
//! `:END_ID(<space>)` look them up in the same space. Spaces keep groups
//! apart whose ids overlap (LDBC numbers persons and posts from 0 each).
//!
//! While nodes are read, a space maps an id to a provisional *sequence
//! number* (the row's position among all accepted node rows); once storage
//! has assigned node ids, [`IdSpaces::finish`] rewrites every entry to its
//! node id, so relationship lookups are a single hash probe.

use crate::options::IdType;
use rhizome_common::{IdBuildHasher, NodeId};
use std::collections::HashMap;

type Build = IdBuildHasher;

/// The ids of one space.
#[derive(Debug)]
pub(crate) enum IdMap {
    /// `--id-type=integer`.
    Int(HashMap<i64, u64, Build>),
    /// `--id-type=string`: ids are compared as bytes.
    Str(HashMap<Box<[u8]>, u64, Build>),
    /// Integer ids that fill most of a range (such as `0..n`), after
    /// [`IdSpaces::finish`]: `ids[key - min]`, [`ABSENT`] where no node has the id.
    Dense {
        /// The smallest id.
        min: i64,
        /// Node id per id, from `min` on.
        ids: Vec<NodeId>,
    },
}

/// Marks a missing id in [`IdMap::Dense`].
const ABSENT: NodeId = NodeId::MAX;

/// A parsed id, borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdKey<'a> {
    /// An integer id.
    Int(i64),
    /// A string id.
    Str(&'a [u8]),
}

impl IdMap {
    fn new(id_type: IdType) -> IdMap {
        match id_type {
            IdType::Integer => IdMap::Int(HashMap::default()),
            IdType::String => IdMap::Str(HashMap::default()),
        }
    }

    /// Inserts `key` with `value`; `false` (and no change) if it is present.
    pub(crate) fn insert(&mut self, key: IdKey<'_>, value: u64) -> bool {
        match (self, key) {
            (IdMap::Int(map), IdKey::Int(k)) => match map.entry(k) {
                std::collections::hash_map::Entry::Occupied(_) => false,
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(value);
                    true
                }
            },
            (IdMap::Str(map), IdKey::Str(k)) => {
                if map.contains_key(k) {
                    return false;
                }
                map.insert(k.into(), value);
                true
            }
            _ => unreachable!("ids are inserted before the space is finished, with its id type"),
        }
    }

    /// The node id (after [`IdSpaces::finish`]) of `key`.
    #[inline]
    pub(crate) fn get(&self, key: IdKey<'_>) -> Option<NodeId> {
        match (self, key) {
            (IdMap::Int(map), IdKey::Int(k)) => map.get(&k).copied(),
            (IdMap::Str(map), IdKey::Str(k)) => map.get(k).copied(),
            (IdMap::Dense { min, ids }, IdKey::Int(k)) => {
                let index = k.checked_sub(*min)?;
                ids.get(usize::try_from(index).ok()?)
                    .copied()
                    .filter(|&id| id != ABSENT)
            }
            _ => None,
        }
    }

    /// Number of ids.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match self {
            IdMap::Int(map) => map.len(),
            IdMap::Str(map) => map.len(),
            IdMap::Dense { ids, .. } => ids.iter().filter(|&&id| id != ABSENT).count(),
        }
    }

    /// Rewrites sequence numbers to node ids; integer spaces whose ids
    /// cover at least half of their range become [`IdMap::Dense`].
    fn translate(&mut self, table: &[NodeId]) {
        match self {
            IdMap::Int(map) => {
                let (min, max) = map
                    .keys()
                    .fold((i64::MAX, i64::MIN), |(lo, hi), &k| (lo.min(k), hi.max(k)));
                let span = (max as i128 - min as i128 + 1).max(0) as u128;
                if !map.is_empty() && span <= 2 * map.len() as u128 + 1024 {
                    let mut ids = vec![ABSENT; span as usize];
                    for (&k, &seq) in map.iter() {
                        ids[(k - min) as usize] = table[seq as usize];
                    }
                    *self = IdMap::Dense { min, ids };
                } else {
                    map.values_mut().for_each(|v| *v = table[*v as usize]);
                }
            }
            IdMap::Str(map) => map.values_mut().for_each(|v| *v = table[*v as usize]),
            IdMap::Dense { .. } => {}
        }
    }
}

/// All id spaces of an import.
#[derive(Debug)]
pub(crate) struct IdSpaces {
    id_type: IdType,
    spaces: HashMap<String, IdMap>,
    /// Node id of each sequence number.
    translation: Vec<NodeId>,
    finished: bool,
}

impl IdSpaces {
    /// No spaces yet.
    pub(crate) fn new(id_type: IdType) -> IdSpaces {
        IdSpaces {
            id_type,
            spaces: HashMap::new(),
            translation: Vec::new(),
            finished: false,
        }
    }

    /// The id type all spaces use.
    pub(crate) fn id_type(&self) -> IdType {
        self.id_type
    }

    /// The space `name`, created if new.
    pub(crate) fn space_mut(&mut self, name: &str) -> &mut IdMap {
        let id_type = self.id_type;
        self.spaces
            .entry(name.to_string())
            .or_insert_with(|| IdMap::new(id_type))
    }

    /// The space `name`, if any node group declared it.
    pub(crate) fn space(&self, name: &str) -> Option<&IdMap> {
        self.spaces.get(name)
    }

    /// Next free sequence number.
    pub(crate) fn next_sequence(&self) -> u64 {
        self.translation.len() as u64
    }

    /// Records the node ids of the sequence numbers `next_sequence()..`.
    pub(crate) fn assign(&mut self, ids: &[NodeId]) {
        self.translation.extend_from_slice(ids);
    }

    /// Rewrites every entry from its sequence number to its node id. Call
    /// once, after the last node group.
    pub(crate) fn finish(&mut self) {
        if self.finished {
            return;
        }
        let table = std::mem::take(&mut self.translation);
        for map in self.spaces.values_mut() {
            map.translate(&table);
        }
        self.finished = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_keep_equal_ids_apart() {
        let mut spaces = IdSpaces::new(IdType::Integer);
        assert!(spaces.space_mut("Person").insert(IdKey::Int(1), 0));
        assert!(spaces.space_mut("Post").insert(IdKey::Int(1), 1));
        assert!(!spaces.space_mut("Person").insert(IdKey::Int(1), 2));
        spaces.assign(&[10, 20]);
        spaces.finish();
        assert_eq!(spaces.space("Person").unwrap().get(IdKey::Int(1)), Some(10));
        assert_eq!(spaces.space("Post").unwrap().get(IdKey::Int(1)), Some(20));
        assert_eq!(spaces.space("Post").unwrap().get(IdKey::Int(2)), None);
        assert!(spaces.space("Forum").is_none());
    }

    #[test]
    fn dense_integer_spaces_become_arrays() {
        let mut spaces = IdSpaces::new(IdType::Integer);
        let dense = spaces.space_mut("D");
        for k in [5i64, 6, 8] {
            assert!(dense.insert(IdKey::Int(k), (k - 5) as u64));
        }
        let sparse = spaces.space_mut("S");
        assert!(sparse.insert(IdKey::Int(-1), 3));
        assert!(sparse.insert(IdKey::Int(i64::MAX), 4));
        spaces.assign(&[100, 101, 102, 103, 104]);
        spaces.finish();
        let dense = spaces.space("D").unwrap();
        assert!(matches!(dense, IdMap::Dense { .. }));
        assert_eq!(dense.get(IdKey::Int(5)), Some(100));
        assert_eq!(dense.get(IdKey::Int(8)), Some(103));
        assert_eq!(dense.get(IdKey::Int(7)), None);
        assert_eq!(dense.get(IdKey::Int(4)), None);
        assert_eq!(dense.get(IdKey::Int(i64::MIN)), None);
        assert_eq!(dense.get(IdKey::Int(i64::MAX)), None);
        assert_eq!(dense.len(), 3);
        let sparse = spaces.space("S").unwrap();
        assert!(matches!(sparse, IdMap::Int(_)));
        assert_eq!(sparse.get(IdKey::Int(i64::MAX)), Some(104));
    }

    #[test]
    fn string_ids_compare_as_bytes() {
        let mut spaces = IdSpaces::new(IdType::String);
        let map = spaces.space_mut("");
        assert!(map.insert(IdKey::Str(b"a1"), 0));
        assert!(map.insert(IdKey::Str(b"01"), 1));
        assert!(map.insert(IdKey::Str(b"1"), 2));
        assert!(!map.insert(IdKey::Str(b"a1"), 3));
        assert_eq!(map.len(), 3);
        spaces.assign(&[5, 6, 7]);
        spaces.finish();
        assert_eq!(spaces.space("").unwrap().get(IdKey::Str(b"1")), Some(7));
    }
}
