//! Importing one `--nodes` group: ids into their id space, labels, property
//! columns, then one [`GraphBuilder::add_nodes`] call for the whole group.

use crate::csv_reader::{Block, Record, RecordReader};
use crate::header::{EntityKind, FieldKind, PropertyType};
use crate::id_space::{IdKey, IdSpaces};
use crate::options::{IdType, InputGroup};
use crate::parse::{parse_i64, show, ColumnChunk, FieldRules};
use crate::pipeline::{check_field_count, read_group_header, row_error, run_group, ReadSettings};
use crate::progress::ImportProgress;
use rhizome_common::{Error, ErrorKind, Result};
use rhizome_storage::column::ColumnBuilder;
use rhizome_storage::{GraphBuilder, NodeGroupInput, RowLabels};
use std::collections::HashMap;
use std::path::PathBuf;

/// Counts of one node group.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct NodeGroupStats {
    /// Data rows read.
    pub rows: u64,
    /// Nodes added.
    pub nodes: u64,
    /// Rows skipped as duplicates.
    pub skipped: u64,
}

/// The meaning of a node file's fields.
struct NodePlan {
    fields: usize,
    /// (field, space, property name) of the `:ID` column.
    id: Option<(usize, String, Option<String>)>,
    label: Option<usize>,
    props: Vec<(usize, PropertyType)>,
    /// Property names in column order: the id property (if named) comes where its field is.
    columns: Vec<String>,
    /// Index into `columns` of the id property.
    id_column: Option<usize>,
    /// For each entry of `props`, its index in `columns`.
    prop_columns: Vec<usize>,
}

/// Ids of one chunk.
enum IdChunk {
    None,
    Int(Vec<i64>),
    Str { bytes: Vec<u8>, ends: Vec<usize> },
}

struct NodeChunk {
    file_index: usize,
    file_offset: u64,
    lines: Vec<u64>,
    offsets: Vec<usize>,
    ids: IdChunk,
    labels: Option<(Vec<u8>, Vec<usize>)>,
    columns: Vec<ColumnChunk>,
}

/// Imports `group` into `builder`, registering ids in `spaces`.
pub(crate) fn import_node_group(
    builder: &mut GraphBuilder,
    group: &InputGroup,
    settings: ReadSettings,
    rules: FieldRules,
    skip_duplicates: bool,
    spaces: &mut IdSpaces,
    progress: &dyn ImportProgress,
) -> Result<NodeGroupStats> {
    let files = &group.files;
    let (header, header_fields) = read_group_header(files, EntityKind::Node, settings)?;
    let mut plan = NodePlan {
        fields: header.len(),
        id: None,
        label: None,
        props: Vec::new(),
        columns: Vec::new(),
        id_column: None,
        prop_columns: Vec::new(),
    };
    for (i, field) in header.fields.iter().enumerate() {
        match &field.kind {
            FieldKind::Id { space, property } => {
                if let Some(name) = property {
                    plan.id_column = Some(plan.columns.len());
                    plan.columns.push(name.clone());
                }
                plan.id = Some((i, space.clone(), property.clone()));
            }
            FieldKind::Label => plan.label = Some(i),
            FieldKind::Property { name, ty } => {
                plan.prop_columns.push(plan.columns.len());
                plan.columns.push(name.clone());
                plan.props.push((i, *ty));
            }
            FieldKind::Ignore => {}
            FieldKind::StartId { .. } | FieldKind::EndId { .. } | FieldKind::Type => {
                unreachable!("validated as a node header")
            }
        }
    }
    let id_type = spaces.id_type();
    let space_name = plan.id.as_ref().map(|(_, s, _)| s.clone());
    if let Some(name) = &space_name {
        spaces.space_mut(name);
    }
    let base_sequence = spaces.next_sequence();

    // Merge state.
    let mut stats = NodeGroupStats::default();
    let mut builders: Vec<ColumnBuilder> =
        plan.columns.iter().map(|_| ColumnBuilder::new()).collect();
    let mut label_sets: Vec<Vec<String>> = Vec::new();
    let mut label_set_of: HashMap<Vec<u8>, u32> = HashMap::new();
    let mut row_sets: Vec<u32> = Vec::new();
    let array_delimiter = rules.array_delimiter;
    let group_labels = &group.names;

    let plan = &plan;
    let parse = |block: &Block| parse_node_block(files, block, plan, settings, rules, id_type);
    let merge = |chunk: NodeChunk| -> Result<()> {
        let rows = chunk.lines.len();
        stats.rows += rows as u64;
        let mut id_map = space_name.as_deref().map(|name| spaces.space_mut(name));
        for row in 0..rows {
            if let (Some((field, space, _)), Some(id_map)) = (&plan.id, id_map.as_mut()) {
                let key = match &chunk.ids {
                    IdChunk::Int(v) => IdKey::Int(v[row]),
                    IdChunk::Str { bytes, ends } => {
                        IdKey::Str(&bytes[if row == 0 { 0 } else { ends[row - 1] }..ends[row]])
                    }
                    IdChunk::None => unreachable!("id column present"),
                };
                let sequence = base_sequence + stats.nodes;
                if !id_map.insert(key, sequence) {
                    if skip_duplicates {
                        stats.skipped += 1;
                        continue;
                    }
                    let shown = match key {
                        IdKey::Int(i) => i.to_string(),
                        IdKey::Str(s) => show(s),
                    };
                    let space_text = if space.is_empty() {
                        "the global id space".to_string()
                    } else {
                        format!("id space `{space}`")
                    };
                    return Err(Error::new(
                        ErrorKind::InputError,
                        format!("duplicate node id `{shown}` in {space_text} (field {}); use --skip-duplicate-nodes to skip such rows", field + 1),
                    )
                    .in_source(files[chunk.file_index].display().to_string())
                    .at(rhizome_common::Position {
                        offset: (chunk.file_offset + chunk.offsets[row] as u64) as usize,
                        line: chunk.lines[row] as u32,
                        column: *field as u32 + 1,
                    }));
                }
                if let Some(column) = plan.id_column {
                    match key {
                        IdKey::Int(i) => builders[column].push_i64(i),
                        IdKey::Str(s) => {
                            builders[column].push_str(std::str::from_utf8(s).unwrap_or_default())
                        }
                    }
                }
            }
            if let Some((text, ends)) = &chunk.labels {
                let field = &text[if row == 0 { 0 } else { ends[row - 1] }..ends[row]];
                let set = match label_set_of.get(field) {
                    Some(&set) => set,
                    None => {
                        let mut labels: Vec<String> = Vec::new();
                        for label in field.split(|&b| b == array_delimiter) {
                            let label = String::from_utf8_lossy(label).trim().to_string();
                            if !label.is_empty()
                                && !labels.contains(&label)
                                && !group_labels.contains(&label)
                            {
                                labels.push(label);
                            }
                        }
                        let set =
                            label_sets
                                .iter()
                                .position(|s| *s == labels)
                                .unwrap_or_else(|| {
                                    label_sets.push(labels);
                                    label_sets.len() - 1
                                }) as u32;
                        label_set_of.insert(field.to_vec(), set);
                        set
                    }
                };
                row_sets.push(set);
            }
            for (p, column) in chunk.columns.iter().enumerate() {
                column.append_row(row, &mut builders[plan.prop_columns[p]]);
            }
            stats.nodes += 1;
        }
        Ok(())
    };
    run_group(files, &header_fields, settings, progress, parse, merge)?;

    let properties = plan
        .columns
        .iter()
        .cloned()
        .zip(builders.into_iter().map(ColumnBuilder::finish))
        .collect();
    let input = NodeGroupInput {
        rows: stats.nodes,
        labels: group.names.clone(),
        row_labels: plan.label.map(|_| RowLabels {
            sets: label_sets,
            row_set: row_sets,
        }),
        properties,
    };
    // A named id column is a property; index it on every label of the group
    // (neo4j-admin leaves that to the user; our issue asks for it at import).
    if let Some((_, _, Some(name))) = &plan.id {
        let labels = input.labels.iter().chain(
            input
                .row_labels
                .iter()
                .flat_map(|r| r.sets.iter().flatten()),
        );
        let mut seen: Vec<&String> = Vec::new();
        for label in labels {
            if !seen.contains(&label) {
                seen.push(label);
                builder.add_index(label, name);
            }
        }
    }
    let ids = builder.add_nodes(input)?;
    spaces.assign(&ids);
    Ok(stats)
}

fn parse_node_block(
    files: &[PathBuf],
    block: &Block,
    plan: &NodePlan,
    settings: ReadSettings,
    rules: FieldRules,
    id_type: IdType,
) -> Result<(NodeChunk, u64)> {
    let mut chunk = NodeChunk {
        file_index: block.file_index,
        file_offset: block.file_offset,
        lines: Vec::new(),
        offsets: Vec::new(),
        ids: match (&plan.id, id_type) {
            (None, _) => IdChunk::None,
            (Some(_), IdType::Integer) => IdChunk::Int(Vec::new()),
            (Some(_), IdType::String) => IdChunk::Str {
                bytes: Vec::new(),
                ends: Vec::new(),
            },
        },
        labels: plan.label.map(|_| (Vec::new(), Vec::new())),
        columns: plan
            .props
            .iter()
            .map(|(_, ty)| ColumnChunk::new(*ty))
            .collect(),
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
        let (line, offset) = (record.line, record.offset);
        check_field_count(files, block, line, offset, record.len(), plan.fields)?;
        if let Some((field, space, _)) = &plan.id {
            let value = record.field(data, *field);
            let bad = |why: String| row_error(files, block, line, offset, field + 1, why);
            if value.is_empty() {
                return Err(bad(format!(
                    "field {} (:ID({space})): empty node id",
                    field + 1
                )));
            }
            match &mut chunk.ids {
                IdChunk::Int(v) => v.push(parse_i64(value).ok_or_else(|| {
                    bad(format!(
                        "field {} (:ID({space})): `{}` is not an integer id (--id-type=integer)",
                        field + 1,
                        show(value)
                    ))
                })?),
                IdChunk::Str { bytes, ends } => {
                    if std::str::from_utf8(value).is_err() {
                        return Err(bad(format!(
                            "field {}: the id is not valid UTF-8",
                            field + 1
                        )));
                    }
                    bytes.extend_from_slice(value);
                    ends.push(bytes.len());
                }
                IdChunk::None => {}
            }
        }
        if let (Some(field), Some((text, ends))) = (plan.label, &mut chunk.labels) {
            text.extend_from_slice(record.field(data, field));
            ends.push(text.len());
        }
        for ((field, _), column) in plan.props.iter().zip(&mut chunk.columns) {
            column
                .push_field(record.field(data, *field), rules)
                .map_err(|why| {
                    row_error(
                        files,
                        block,
                        line,
                        offset,
                        field + 1,
                        format!("field {} ({}): {why}", field + 1, plan_name(plan, *field)),
                    )
                })?;
        }
        chunk.lines.push(line);
        chunk.offsets.push(offset);
    }
    let rows = chunk.lines.len() as u64;
    Ok((chunk, rows))
}

fn plan_name(plan: &NodePlan, field: usize) -> &str {
    plan.props
        .iter()
        .position(|(f, _)| *f == field)
        .map_or("?", |p| plan.columns[plan.prop_columns[p]].as_str())
}
