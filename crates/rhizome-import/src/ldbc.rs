//! The LDBC SNB data sets in `shared/datasets`, as [`ImportOptions`].
//!
//! This module is the single source of truth for how LDBC is imported;
//! `scripts/import-ldbc.sh` spells out the same options as `rhizome import`
//! flags and a test checks that they agree ([`ImportOptions::to_args`]).
//!
//! Schema names are those of LDBC's reference implementation: node labels
//! `Person`, `Message:Comment`, `Message:Post`, `Forum`, `Tag`, `TagClass`,
//! `Place` (plus `City`/`Country`/`Continent` from its `:LABEL` column) and
//! `Organisation` (plus `Company`/`University`); relationship types are the
//! file names' relation in upper snake case (`hasCreator` → `HAS_CREATOR`).
//! Ids are integers, each entity in its own id space; empty strings set no
//! property.

use crate::options::{IdType, ImportOptions, InputGroup};
use rhizome_common::{Error, ErrorKind, Result};
use std::path::Path;

/// Cypher statements that give an imported LDBC data set the property names
/// of LDBC's reference implementation where they differ from the CSV
/// headers: its loader calls the membership date of `HAS_MEMBER`
/// `creationDate`, the data files call it `joinDate`. Run them once after
/// the import (`scripts/import-ldbc.sh` and the LDBC benchmark do), so the
/// published queries run unchanged.
pub const REFERENCE_PROPERTY_RENAMES: &[&str] =
    &["MATCH ()-[m:HAS_MEMBER]->() SET m.creationDate = m.joinDate REMOVE m.joinDate"];

/// Which file layout an LDBC directory has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LdbcLayout {
    /// `ldbc-sf0.1`: Kuzu's test copy of SF0.1, files `Person.csv`,
    /// `Person_knows_Person.csv` and second parts `..._1.csv`, `|`-separated.
    Sf01,
    /// `ldbc-tiny`: LDBC CsvComposite output with neo4j-admin headers, files
    /// `static/place_0_0.csv`, `dynamic/person_knows_person_0_0.csv`.
    Tiny,
}

impl LdbcLayout {
    /// Parses `sf0.1` (also `sf01`, `sf0_1`) or `tiny`.
    pub fn parse(name: &str) -> Result<LdbcLayout> {
        match name.to_ascii_lowercase().as_str() {
            "sf0.1" | "sf01" | "sf0_1" | "ldbc-sf0.1" => Ok(LdbcLayout::Sf01),
            "tiny" | "ldbc-tiny" => Ok(LdbcLayout::Tiny),
            _ => Err(Error::new(
                ErrorKind::ArgumentError,
                format!("unknown LDBC layout `{name}`: expected `sf0.1` or `tiny`"),
            )),
        }
    }

    /// The directory name of this data set under `shared/datasets`.
    pub fn dir_name(self) -> &'static str {
        match self {
            LdbcLayout::Sf01 => "ldbc-sf0.1",
            LdbcLayout::Tiny => "ldbc-tiny",
        }
    }
}

/// The entities in import order, with their labels.
const ENTITIES: [(&str, &str); 8] = [
    ("Person", "Person"),
    ("Comment", "Message:Comment"),
    ("Post", "Message:Post"),
    ("Forum", "Forum"),
    ("Tag", "Tag"),
    ("TagClass", "TagClass"),
    ("Place", "Place"),
    ("Organisation", "Organisation"),
];

/// Every relationship file: (source entity, relation, target entity).
const RELATIONS: [(&str, &str, &str); 23] = [
    ("Comment", "hasCreator", "Person"),
    ("Comment", "hasTag", "Tag"),
    ("Comment", "isLocatedIn", "Place"),
    ("Comment", "replyOf", "Comment"),
    ("Comment", "replyOf", "Post"),
    ("Forum", "containerOf", "Post"),
    ("Forum", "hasMember", "Person"),
    ("Forum", "hasModerator", "Person"),
    ("Forum", "hasTag", "Tag"),
    ("Organisation", "isLocatedIn", "Place"),
    ("Person", "hasInterest", "Tag"),
    ("Person", "isLocatedIn", "Place"),
    ("Person", "knows", "Person"),
    ("Person", "likes", "Comment"),
    ("Person", "likes", "Post"),
    ("Person", "studyAt", "Organisation"),
    ("Person", "workAt", "Organisation"),
    ("Place", "isPartOf", "Place"),
    ("Post", "hasCreator", "Person"),
    ("Post", "hasTag", "Tag"),
    ("Post", "isLocatedIn", "Place"),
    ("Tag", "hasType", "TagClass"),
    ("TagClass", "isSubclassOf", "TagClass"),
];

/// Relationship files of SF0.1 that come in two parts (`X.csv`, `X_1.csv`).
const SF01_TWO_PARTS: [&str; 6] = [
    "Comment_hasCreator_Person",
    "Comment_hasTag_Tag",
    "Comment_isLocatedIn_Place",
    "Person_knows_Person",
    "Person_likes_Comment",
    "Person_likes_Post",
];

/// Relationship files missing from this copy of SF0.1 (see its SOURCE.md);
/// imported when present.
const SF01_OPTIONAL: [&str; 1] = ["Forum_hasMember_Person"];

/// `hasCreator` → `HAS_CREATOR`.
pub fn relationship_type_name(relation: &str) -> String {
    let mut out = String::with_capacity(relation.len() + 4);
    for (i, c) in relation.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn is_static(entity: &str) -> bool {
    matches!(entity, "Organisation" | "Place" | "Tag" | "TagClass")
}

/// The options that import the LDBC data set in `dataset_dir` of layout
/// `kind`: `|` delimiter, `;` array delimiter, integer ids, empty strings
/// ignored, one node group per entity and one relationship group per
/// relationship file (both parts of a two-part SF0.1 file in one group).
/// Files are not checked here; [`crate::import`] reports missing ones.
pub fn ldbc_options(dataset_dir: &Path, kind: LdbcLayout) -> ImportOptions {
    let mut options = ImportOptions {
        delimiter: b'|',
        array_delimiter: b';',
        id_type: IdType::Integer,
        ignore_empty_strings: true,
        ..ImportOptions::default()
    };
    let entity_file = |entity: &str| match kind {
        LdbcLayout::Sf01 => dataset_dir.join(format!("{entity}.csv")),
        LdbcLayout::Tiny => dataset_dir
            .join(if is_static(entity) {
                "static"
            } else {
                "dynamic"
            })
            .join(format!("{}_0_0.csv", entity.to_ascii_lowercase())),
    };
    for (entity, labels) in ENTITIES {
        options
            .nodes
            .push(InputGroup::new(labels.split(':'), [entity_file(entity)]));
    }
    for (source, relation, target) in RELATIONS {
        let type_name = relationship_type_name(relation);
        let files = match kind {
            LdbcLayout::Sf01 => {
                let stem = format!("{source}_{relation}_{target}");
                let main = dataset_dir.join(format!("{stem}.csv"));
                if SF01_OPTIONAL.contains(&stem.as_str()) && !main.exists() {
                    continue;
                }
                let mut files = vec![main];
                if SF01_TWO_PARTS.contains(&stem.as_str()) {
                    files.push(dataset_dir.join(format!("{stem}_1.csv")));
                }
                files
            }
            LdbcLayout::Tiny => vec![dataset_dir
                .join(if is_static(source) {
                    "static"
                } else {
                    "dynamic"
                })
                .join(format!(
                    "{}_{relation}_{}_0_0.csv",
                    source.to_ascii_lowercase(),
                    target.to_ascii_lowercase()
                ))],
        };
        options
            .relationships
            .push(InputGroup::new([type_name], files));
    }
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_upper_snake_case() {
        assert_eq!(relationship_type_name("hasCreator"), "HAS_CREATOR");
        assert_eq!(relationship_type_name("isSubclassOf"), "IS_SUBCLASS_OF");
        assert_eq!(relationship_type_name("knows"), "KNOWS");
    }

    #[test]
    fn layouts_name_the_files() {
        let tiny = ldbc_options(Path::new("/d"), LdbcLayout::Tiny);
        assert_eq!(tiny.nodes.len(), 8);
        assert_eq!(tiny.relationships.len(), 23);
        assert_eq!(tiny.nodes[1].names, vec!["Message", "Comment"]);
        assert_eq!(tiny.nodes[6].files[0], Path::new("/d/static/place_0_0.csv"));
        assert_eq!(
            tiny.relationships[12].files[0],
            Path::new("/d/dynamic/person_knows_person_0_0.csv")
        );
        let sf = ldbc_options(Path::new("/nonexistent"), LdbcLayout::Sf01);
        assert_eq!(sf.relationships.len(), 22);
        assert_eq!(sf.relationships[0].files.len(), 2);
        assert_eq!(sf.relationships[0].names, vec!["HAS_CREATOR"]);
        assert_eq!(LdbcLayout::parse("SF0.1").unwrap(), LdbcLayout::Sf01);
        assert!(LdbcLayout::parse("sf1").is_err());
    }
}
