//! Header lines of neo4j-admin style CSV files.
//!
//! A header field is `name`, `name:<type>`, `name:<type>[]`, `[name]:ID[(<space>)]`,
//! `:LABEL`, `:START_ID[(<space>)]`, `:END_ID[(<space>)]`, `:TYPE` or
//! `[name]:IGNORE`. Types and keywords are case-insensitive.

use rhizome_common::{Error, ErrorKind, Position, Result};
use std::path::Path;

/// The type of a property field's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarKind {
    /// `long`: 64-bit integer.
    Long,
    /// `int`: 32-bit integer (stored as 64 bits).
    Int,
    /// `short`: 16-bit integer.
    Short,
    /// `byte`: 8-bit integer.
    Byte,
    /// `float` / `double`: 64-bit float.
    Float,
    /// `boolean`: `true` or `false`, any case.
    Boolean,
    /// `string` / `char`.
    String,
    /// `date`: `YYYY-MM-DD`.
    Date,
    /// `datetime`: ISO 8601 with optional offset (UTC when absent).
    DateTime,
    /// `localdatetime`: ISO 8601 without offset.
    LocalDateTime,
    /// `localtime`: `HH:MM[:SS[.f]]`.
    LocalTime,
    /// `time`: `HH:MM[:SS[.f]]` with optional offset.
    Time,
    /// `duration`: ISO 8601 `PnYnMnWnDTnHnMnS`.
    Duration,
}

impl ScalarKind {
    fn parse(name: &str) -> Option<ScalarKind> {
        Some(match name.to_ascii_lowercase().as_str() {
            "long" => ScalarKind::Long,
            "int" | "integer" => ScalarKind::Int,
            "short" => ScalarKind::Short,
            "byte" => ScalarKind::Byte,
            "float" | "double" => ScalarKind::Float,
            "boolean" => ScalarKind::Boolean,
            "string" | "char" => ScalarKind::String,
            "date" => ScalarKind::Date,
            "datetime" => ScalarKind::DateTime,
            "localdatetime" => ScalarKind::LocalDateTime,
            "localtime" => ScalarKind::LocalTime,
            "time" => ScalarKind::Time,
            "duration" => ScalarKind::Duration,
            _ => return None,
        })
    }
}

/// The type of a property column: a scalar or an array of scalars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PropertyType {
    /// The (element) type.
    pub scalar: ScalarKind,
    /// True for `type[]`: the field holds elements separated by the array delimiter.
    pub array: bool,
}

/// What a header field means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldKind {
    /// `[name]:ID(space)`: the node id; with a name, also stored as a property.
    Id {
        /// The id space (`""` for the global one).
        space: String,
        /// The property name, if the id is also stored.
        property: Option<String>,
    },
    /// `:LABEL`: extra labels separated by the array delimiter.
    Label,
    /// `:START_ID(space)`.
    StartId {
        /// The id space.
        space: String,
    },
    /// `:END_ID(space)`.
    EndId {
        /// The id space.
        space: String,
    },
    /// `:TYPE`: the relationship type.
    Type,
    /// `:IGNORE`: the field is skipped.
    Ignore,
    /// A property.
    Property {
        /// The property key.
        name: String,
        /// The value type.
        ty: PropertyType,
    },
}

/// A parsed header field with its text (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeaderField {
    /// The field as written in the header.
    pub text: String,
    /// Its meaning.
    pub kind: FieldKind,
}

/// Whether a header belongs to a node or a relationship file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntityKind {
    /// A `--nodes` file.
    Node,
    /// A `--relationships` file.
    Relationship,
}

/// A parsed and validated header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    /// One entry per field of the file's rows.
    pub fields: Vec<HeaderField>,
}

/// Splits `name:TYPE(args)` into (name, keyword, args); `None` when the field
/// has no `:` suffix.
fn split_field(field: &str) -> Option<(&str, &str, Option<&str>)> {
    // The id space may contain ':' itself, so look for the type separator
    // before an opening parenthesis.
    let search_end = field.find('(').unwrap_or(field.len());
    let colon = field[..search_end].rfind(':')?;
    let name = &field[..colon];
    let rest = &field[colon + 1..];
    match rest.find('(') {
        Some(open) if rest.ends_with(')') => {
            Some((name, &rest[..open], Some(&rest[open + 1..rest.len() - 1])))
        }
        _ => Some((name, rest, None)),
    }
}

/// Parses one header field; `Err` holds the reason.
fn parse_field(field: &str) -> Result<FieldKind, String> {
    let trimmed = field.trim();
    let Some((name, keyword, args)) = split_field(trimmed) else {
        if trimmed.is_empty() {
            return Err("empty header field".to_string());
        }
        return Ok(FieldKind::Property {
            name: trimmed.to_string(),
            ty: PropertyType {
                scalar: ScalarKind::String,
                array: false,
            },
        });
    };
    let upper = keyword.to_ascii_uppercase();
    let space = || args.unwrap_or("").to_string();
    let no_args = |kind: FieldKind| {
        if args.is_some() {
            Err(format!("`:{keyword}` takes no argument"))
        } else {
            Ok(kind)
        }
    };
    let no_name = |kind: FieldKind| -> Result<FieldKind, String> {
        if name.is_empty() {
            Ok(kind)
        } else {
            Err(format!(
                "`:{keyword}` takes no property name (write `:{keyword}`)"
            ))
        }
    };
    match upper.as_str() {
        "ID" => Ok(FieldKind::Id {
            space: space(),
            property: (!name.is_empty()).then(|| name.to_string()),
        }),
        "START_ID" => no_name(FieldKind::StartId { space: space() }),
        "END_ID" => no_name(FieldKind::EndId { space: space() }),
        "LABEL" => no_name(no_args(FieldKind::Label)?),
        "TYPE" => no_name(no_args(FieldKind::Type)?),
        "IGNORE" => no_args(FieldKind::Ignore),
        _ => {
            if args.is_some() {
                return Err(format!("unknown header type `{keyword}`"));
            }
            let (base, array) = match keyword.strip_suffix("[]") {
                Some(base) => (base, true),
                None => (keyword, false),
            };
            let scalar = ScalarKind::parse(base).ok_or_else(|| {
                format!(
                    "unknown header type `{keyword}` (expected int, long, float, double, boolean, string, date, datetime, localdatetime, localtime, time, duration, an array form like `string[]`, or ID, LABEL, START_ID, END_ID, TYPE, IGNORE)"
                )
            })?;
            if name.is_empty() {
                return Err(format!("property field `{field}` has no name"));
            }
            Ok(FieldKind::Property {
                name: name.to_string(),
                ty: PropertyType { scalar, array },
            })
        }
    }
}

/// True if a first line with these fields is a header: every field with a
/// `:` suffix parses as a typed header field, and at least one has such a
/// suffix. Data lines with URLs or times (`http://x`, `12:30`) are not headers.
pub(crate) fn looks_like_header(fields: &[&str]) -> bool {
    let mut typed = false;
    for field in fields {
        if split_field(field.trim()).is_some() {
            if parse_field(field).is_err() {
                return false;
            }
            typed = true;
        }
    }
    typed
}

fn header_error(file: &Path, field: usize, message: String) -> Error {
    Error::new(ErrorKind::InputError, message)
        .in_source(file.display().to_string())
        .at(Position {
            offset: 0,
            line: 1,
            column: field as u32 + 1,
        })
}

impl Header {
    /// Parses and validates the header `fields` of `file` for `entity`.
    /// Errors point at line 1 and the 1-based field number.
    pub(crate) fn parse(file: &Path, fields: &[&str], entity: EntityKind) -> Result<Header> {
        let mut parsed = Vec::with_capacity(fields.len());
        for (i, field) in fields.iter().enumerate() {
            let kind = parse_field(field).map_err(|why| {
                header_error(
                    file,
                    i,
                    format!("bad header field {} (`{field}`): {why}", i + 1),
                )
            })?;
            parsed.push(HeaderField {
                text: field.to_string(),
                kind,
            });
        }
        let header = Header { fields: parsed };
        header.validate(file, entity)?;
        Ok(header)
    }

    fn validate(&self, file: &Path, entity: EntityKind) -> Result<()> {
        let mut seen_names: Vec<&str> = Vec::new();
        let (mut ids, mut starts, mut ends, mut labels, mut types) = (0, 0, 0, 0, 0);
        for (i, field) in self.fields.iter().enumerate() {
            let wrong = |what: &str| {
                header_error(
                    file,
                    i,
                    format!(
                        "header field {} (`{}`): {what} is not allowed in a {} file",
                        i + 1,
                        field.text,
                        match entity {
                            EntityKind::Node => "node",
                            EntityKind::Relationship => "relationship",
                        }
                    ),
                )
            };
            let twice = |what: &str| {
                header_error(
                    file,
                    i,
                    format!(
                        "header field {} (`{}`): more than one {what} column",
                        i + 1,
                        field.text
                    ),
                )
            };
            let property_name = match &field.kind {
                FieldKind::Id { property, .. } => {
                    if entity == EntityKind::Relationship {
                        return Err(wrong(":ID"));
                    }
                    ids += 1;
                    if ids > 1 {
                        return Err(twice(":ID"));
                    }
                    property.as_deref()
                }
                FieldKind::Label => {
                    if entity == EntityKind::Relationship {
                        return Err(wrong(":LABEL"));
                    }
                    labels += 1;
                    if labels > 1 {
                        return Err(twice(":LABEL"));
                    }
                    None
                }
                FieldKind::StartId { .. } | FieldKind::EndId { .. } | FieldKind::Type => {
                    if entity == EntityKind::Node {
                        return Err(wrong(&field.text));
                    }
                    let (count, what) = match field.kind {
                        FieldKind::StartId { .. } => (&mut starts, ":START_ID"),
                        FieldKind::EndId { .. } => (&mut ends, ":END_ID"),
                        _ => (&mut types, ":TYPE"),
                    };
                    *count += 1;
                    if *count > 1 {
                        return Err(twice(what));
                    }
                    None
                }
                FieldKind::Ignore => None,
                FieldKind::Property { name, .. } => Some(name.as_str()),
            };
            if let Some(name) = property_name {
                if seen_names.contains(&name) {
                    return Err(header_error(
                        file,
                        i,
                        format!(
                            "header field {} (`{}`): property `{name}` appears twice",
                            i + 1,
                            field.text
                        ),
                    ));
                }
                seen_names.push(name);
            }
        }
        if entity == EntityKind::Relationship {
            let missing = |what: &str| {
                header_error(file, 0, format!("relationship header has no {what} field")).at(
                    Position {
                        offset: 0,
                        line: 1,
                        column: 1,
                    },
                )
            };
            if starts == 0 {
                return Err(missing(":START_ID"));
            }
            if ends == 0 {
                return Err(missing(":END_ID"));
            }
        }
        Ok(())
    }

    /// Number of fields every row must have.
    pub(crate) fn len(&self) -> usize {
        self.fields.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(fields: &[&str], entity: EntityKind) -> Result<Header> {
        Header::parse(Path::new("f.csv"), fields, entity)
    }

    #[test]
    fn parses_every_field_form() {
        let h = parse(
            &[
                "id:ID(Person)",
                ":LABEL",
                "name",
                "age:int",
                "tags:string[]",
                "x:IGNORE",
                "d:Date",
                "w:DOUBLE",
                "b:boolean",
                "t:localtime",
                "u:Duration",
                "s:short",
                "by:byte",
            ],
            EntityKind::Node,
        )
        .unwrap();
        assert_eq!(
            h.fields[0].kind,
            FieldKind::Id {
                space: "Person".into(),
                property: Some("id".into())
            }
        );
        assert_eq!(h.fields[1].kind, FieldKind::Label);
        assert_eq!(
            h.fields[2].kind,
            FieldKind::Property {
                name: "name".into(),
                ty: PropertyType {
                    scalar: ScalarKind::String,
                    array: false
                }
            }
        );
        assert_eq!(
            h.fields[3].kind,
            FieldKind::Property {
                name: "age".into(),
                ty: PropertyType {
                    scalar: ScalarKind::Int,
                    array: false
                }
            }
        );
        assert_eq!(
            h.fields[4].kind,
            FieldKind::Property {
                name: "tags".into(),
                ty: PropertyType {
                    scalar: ScalarKind::String,
                    array: true
                }
            }
        );
        assert_eq!(h.fields[5].kind, FieldKind::Ignore);
        assert!(matches!(
            h.fields[6].kind,
            FieldKind::Property {
                ty: PropertyType {
                    scalar: ScalarKind::Date,
                    ..
                },
                ..
            }
        ));
        assert!(matches!(
            h.fields[7].kind,
            FieldKind::Property {
                ty: PropertyType {
                    scalar: ScalarKind::Float,
                    ..
                },
                ..
            }
        ));
        assert!(matches!(
            h.fields[10].kind,
            FieldKind::Property {
                ty: PropertyType {
                    scalar: ScalarKind::Duration,
                    ..
                },
                ..
            }
        ));
        let h = parse(&[":ID"], EntityKind::Node).unwrap();
        assert_eq!(
            h.fields[0].kind,
            FieldKind::Id {
                space: String::new(),
                property: None
            }
        );
        let h = parse(
            &[":START_ID(A:B)", ":end_id(C)", ":TYPE", "since:LONG"],
            EntityKind::Relationship,
        )
        .unwrap();
        assert_eq!(
            h.fields[0].kind,
            FieldKind::StartId {
                space: "A:B".into()
            }
        );
        assert_eq!(h.fields[1].kind, FieldKind::EndId { space: "C".into() });
        assert_eq!(h.fields[2].kind, FieldKind::Type);
    }

    #[test]
    fn rejects_bad_headers_with_field_positions() {
        let err = parse(&["id:ID", "age:integr"], EntityKind::Node).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InputError);
        assert_eq!(err.position.unwrap().column, 2);
        assert!(
            err.message.contains("unknown header type `integr`"),
            "{}",
            err.message
        );
        let err = parse(&[":START_ID", "w:int"], EntityKind::Relationship).unwrap_err();
        assert!(err.message.contains(":END_ID"), "{}", err.message);
        let err = parse(&[":END_ID", "w:int"], EntityKind::Relationship).unwrap_err();
        assert!(err.message.contains(":START_ID"), "{}", err.message);
        assert!(parse(&[":ID", ":ID"], EntityKind::Node).is_err());
        assert!(parse(&[":ID", ":START_ID"], EntityKind::Node).is_err());
        assert!(parse(
            &[":START_ID", ":END_ID", ":LABEL"],
            EntityKind::Relationship
        )
        .is_err());
        assert!(parse(&["a", "a:int"], EntityKind::Node).is_err());
        assert!(parse(&["a", ""], EntityKind::Node).is_err());
    }

    #[test]
    fn detects_header_lines() {
        assert!(looks_like_header(&[":START_ID(Person)", ":END_ID(Person)"]));
        assert!(looks_like_header(&[
            "id:ID(Place)",
            "name",
            "url",
            ":LABEL"
        ]));
        assert!(!looks_like_header(&[
            "933",
            "2199023256077",
            "20100422123057947"
        ]));
        assert!(!looks_like_header(&[
            "0",
            "India",
            "http://dbpedia.org/resource/India",
            "Country"
        ]));
        assert!(!looks_like_header(&["1", "12:30"]));
        assert!(!looks_like_header(&["name", "age"]));
    }
}
