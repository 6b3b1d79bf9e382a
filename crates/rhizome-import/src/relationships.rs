//! Importing one `--relationships` group: endpoints resolved through their
//! id spaces (in the parsing threads: the spaces are complete and read-only
//! by then), rows split by type, one [`GraphBuilder::add_relationships`] call
//! per type of the group.

use crate::csv_reader::{Block, Record, RecordReader};
use crate::header::{EntityKind, FieldKind, PropertyType};
use crate::id_space::{IdKey, IdMap, IdSpaces};
use crate::options::{IdType, InputGroup};
use crate::parse::{parse_i64, show, ColumnChunk, FieldRules};
use crate::pipeline::{check_field_count, read_group_header, row_error, run_group, ReadSettings};
use crate::progress::ImportProgress;
use rhizome_common::{Error, ErrorKind, NodeId, Position, Result};
use rhizome_storage::column::ColumnBuilder;
use rhizome_storage::{GraphBuilder, RelGroupInput};
use std::path::PathBuf;

/// Counts of one relationship group.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct RelGroupStats {
    /// Data rows read.
    pub rows: u64,
    /// Relationships added.
    pub relationships: u64,
    /// Rows skipped for unknown endpoints.
    pub skipped: u64,
}

struct Endpoint<'s> {
    field: usize,
    space: String,
    map: &'s IdMap,
}

struct RelPlan<'s> {
    fields: usize,
    start: Endpoint<'s>,
    end: Endpoint<'s>,
    type_field: Option<usize>,
    default_type: Option<String>,
    props: Vec<(usize, String, PropertyType)>,
}

struct RelChunk {
    sources: Vec<NodeId>,
    targets: Vec<NodeId>,
    /// Per row, an index into `types` (only with a `:TYPE` column).
    row_types: Vec<u32>,
    types: Vec<String>,
    columns: Vec<ColumnChunk>,
    skipped: u64,
    rows: u64,
}

struct TypeAccumulator {
    name: String,
    sources: Vec<NodeId>,
    targets: Vec<NodeId>,
    columns: Vec<ColumnBuilder>,
}

/// Imports `group` into `builder`; `spaces` must hold every node id.
pub(crate) fn import_relationship_group(
    builder: &mut GraphBuilder,
    group: &InputGroup,
    settings: ReadSettings,
    rules: FieldRules,
    skip_bad: bool,
    spaces: &IdSpaces,
    progress: &dyn ImportProgress,
) -> Result<RelGroupStats> {
    let files = &group.files;
    if group.names.len() > 1 {
        return Err(Error::new(
            ErrorKind::ArgumentError,
            format!(
                "a relationship group has one type, not `{}`",
                group.names.join(":")
            ),
        ));
    }
    let (header, header_fields) = read_group_header(files, EntityKind::Relationship, settings)?;
    let header_error = |field: usize, message: String| {
        Error::new(ErrorKind::InputError, message)
            .in_source(files[0].display().to_string())
            .at(Position {
                offset: 0,
                line: 1,
                column: field as u32 + 1,
            })
    };
    let endpoint = |field: usize, space: &str| -> Result<Endpoint<'_>> {
        let map = spaces.space(space).ok_or_else(|| {
            let what = if space.is_empty() {
                "the global id space (`:ID` without a name)".to_string()
            } else {
                format!("id space `{space}`")
            };
            header_error(
                field,
                format!(
                    "header field {} (`{}`): unknown {what}: no node group declares it",
                    field + 1,
                    header.fields[field].text
                ),
            )
        })?;
        Ok(Endpoint {
            field,
            space: space.to_string(),
            map,
        })
    };
    let (mut start, mut end, mut type_field, mut props) = (None, None, None, Vec::new());
    for (i, field) in header.fields.iter().enumerate() {
        match &field.kind {
            FieldKind::StartId { space } => start = Some(endpoint(i, space)?),
            FieldKind::EndId { space } => end = Some(endpoint(i, space)?),
            FieldKind::Type => type_field = Some(i),
            FieldKind::Property { name, ty } => props.push((i, name.clone(), *ty)),
            FieldKind::Ignore => {}
            FieldKind::Id { .. } | FieldKind::Label => {
                unreachable!("validated as a relationship header")
            }
        }
    }
    let default_type = group.names.first().cloned();
    if default_type.is_none() && type_field.is_none() {
        return Err(header_error(
            0,
            "the relationships have no type: name one (--relationships=TYPE=file) or add a :TYPE column".to_string(),
        ));
    }
    let plan = RelPlan {
        fields: header.len(),
        start: start.expect("validated: :START_ID present"),
        end: end.expect("validated: :END_ID present"),
        type_field,
        default_type,
        props,
    };
    let mut stats = RelGroupStats::default();
    let mut accumulators: Vec<TypeAccumulator> = Vec::new();
    let plan = &plan;
    let id_type = spaces.id_type();
    let parse =
        |block: &Block| parse_rel_block(files, block, plan, settings, rules, id_type, skip_bad);
    let merge = |chunk: RelChunk| -> Result<()> {
        stats.rows += chunk.rows;
        stats.skipped += chunk.skipped;
        stats.relationships += chunk.sources.len() as u64;
        let mut index_of = |name: &str| -> usize {
            accumulators
                .iter()
                .position(|a| a.name == name)
                .unwrap_or_else(|| {
                    accumulators.push(TypeAccumulator {
                        name: name.to_string(),
                        sources: Vec::new(),
                        targets: Vec::new(),
                        columns: plan.props.iter().map(|_| ColumnBuilder::new()).collect(),
                    });
                    accumulators.len() - 1
                })
        };
        if plan.type_field.is_none() {
            let acc_index = index_of(
                plan.default_type
                    .as_deref()
                    .expect("checked: a type exists"),
            );
            let acc = &mut accumulators[acc_index];
            acc.sources.extend_from_slice(&chunk.sources);
            acc.targets.extend_from_slice(&chunk.targets);
            for (column, builder) in chunk.columns.iter().zip(&mut acc.columns) {
                for row in 0..column.len() {
                    column.append_row(row, builder);
                }
            }
        } else {
            let map: Vec<usize> = chunk.types.iter().map(|t| index_of(t)).collect();
            for (row, &t) in chunk.row_types.iter().enumerate() {
                let acc = &mut accumulators[map[t as usize]];
                acc.sources.push(chunk.sources[row]);
                acc.targets.push(chunk.targets[row]);
                for (column, builder) in chunk.columns.iter().zip(&mut acc.columns) {
                    column.append_row(row, builder);
                }
            }
        }
        Ok(())
    };
    run_group(files, &header_fields, settings, progress, parse, merge)?;
    for mut acc in accumulators {
        // Vectors grown by doubling may hold up to twice their length;
        // the builder keeps them until the database is written.
        acc.sources.shrink_to_fit();
        acc.targets.shrink_to_fit();
        let properties = plan
            .props
            .iter()
            .map(|(_, name, _)| name.clone())
            .zip(acc.columns.into_iter().map(ColumnBuilder::finish))
            .collect();
        builder.add_relationships(
            &acc.name,
            RelGroupInput {
                sources: acc.sources,
                targets: acc.targets,
                properties,
            },
        )?;
    }
    Ok(stats)
}

fn parse_rel_block(
    files: &[PathBuf],
    block: &Block,
    plan: &RelPlan<'_>,
    settings: ReadSettings,
    rules: FieldRules,
    id_type: IdType,
    skip_bad: bool,
) -> Result<(RelChunk, u64)> {
    let mut chunk = RelChunk {
        sources: Vec::new(),
        targets: Vec::new(),
        row_types: Vec::new(),
        types: Vec::new(),
        columns: plan
            .props
            .iter()
            .map(|(_, _, ty)| ColumnChunk::new(*ty))
            .collect(),
        skipped: 0,
        rows: 0,
    };
    let data = &block.data[..];
    let mut reader = RecordReader::new(data, block.first_line, settings.delimiter, settings.quote);
    let mut record = Record::default();
    while reader.next_record(&mut record).map_err(|e| {
        e.into_error(
            &files[block.file_index].display().to_string(),
            block.file_offset,
        )
    })? {
        chunk.rows += 1;
        let (line, offset) = (record.line, record.offset);
        check_field_count(files, block, line, offset, record.len(), plan.fields)?;
        let resolve = |endpoint: &Endpoint<'_>, what: &str| -> Result<Option<NodeId>> {
            let field = endpoint.field;
            let value = record.field(data, field);
            let key = match id_type {
                IdType::Integer => IdKey::Int(parse_i64(value).ok_or_else(|| {
                    row_error(
                        files,
                        block,
                        line,
                        offset,
                        field + 1,
                        format!(
                            "field {} ({what}): `{}` is not an integer id (--id-type=integer)",
                            field + 1,
                            show(value)
                        ),
                    )
                })?),
                IdType::String => IdKey::Str(value),
            };
            match endpoint.map.get(key) {
                Some(id) => Ok(Some(id)),
                None if skip_bad => Ok(None),
                None => {
                    let space = if endpoint.space.is_empty() {
                        "the global id space".to_string()
                    } else {
                        format!("id space `{}`", endpoint.space)
                    };
                    Err(row_error(
                    files,
                    block,
                    line,
                    offset,
                    field + 1,
                    format!(
                        "field {} ({what}): no node has id `{}` in {space}; use --skip-bad-relationships to skip such rows",
                        field + 1,
                        show(value)
                    ),
                ))
                }
            }
        };
        let source = resolve(&plan.start, ":START_ID")?;
        let target = resolve(&plan.end, ":END_ID")?;
        let (Some(source), Some(target)) = (source, target) else {
            chunk.skipped += 1;
            continue;
        };
        if let Some(field) = plan.type_field {
            let value = record.field(data, field).trim_ascii();
            let name: &[u8] = if value.is_empty() {
                match &plan.default_type {
                    Some(name) => name.as_bytes(),
                    None => {
                        return Err(row_error(
                            files,
                            block,
                            line,
                            offset,
                            field + 1,
                            format!(
                            "field {} (:TYPE): empty relationship type and the group names no type",
                            field + 1
                        ),
                        ))
                    }
                }
            } else {
                value
            };
            // Types repeat: compare bytes, allocate only for a new type.
            let index = match chunk.types.iter().position(|t| t.as_bytes() == name) {
                Some(i) => i,
                None => {
                    let text = std::str::from_utf8(name).map_err(|_| {
                        row_error(
                            files,
                            block,
                            line,
                            offset,
                            field + 1,
                            format!("field {} (:TYPE): not valid UTF-8", field + 1),
                        )
                    })?;
                    chunk.types.push(text.to_string());
                    chunk.types.len() - 1
                }
            };
            chunk.row_types.push(index as u32);
        }
        for ((field, name, _), column) in plan.props.iter().zip(&mut chunk.columns) {
            column
                .push_field(record.field(data, *field), rules)
                .map_err(|why| {
                    row_error(
                        files,
                        block,
                        line,
                        offset,
                        field + 1,
                        format!("field {} ({name}): {why}", field + 1),
                    )
                })?;
        }
        chunk.sources.push(source);
        chunk.targets.push(target);
    }
    let rows = chunk.rows;
    Ok((chunk, rows))
}
