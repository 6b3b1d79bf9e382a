//! DIMACS road networks (9th DIMACS challenge `.gr` arcs and `.co`
//! coordinates) into a new database: nodes `:Junction {id, lat, lon}` and
//! relationships `:ROAD {distance}`, with an index on `Junction.id`.
//!
//! Formats (the user guide is `docs/import.md`):
//! - `.gr`: `c` comment lines, one `p sp N M` line, then `M` lines
//!   `a U V W`: an arc from node `U` to node `V` (1-based, `1..=N`) of
//!   length `W`, a non-negative integer (metres in the road networks).
//! - `.co`: `c` comment lines, one `p aux sp co N` line, then one line
//!   `v ID X Y` per node: longitude `X` and latitude `Y` in millionths of a
//!   degree (integers), longitude first.
//!
//! Node `k` of the file becomes node id `k - 1`, with `id = k` (an integer),
//! `lat = Y / 1e6` and `lon = X / 1e6` (floats, degrees). Each arc becomes
//! one `ROAD` relationship with `distance = W` (an integer); an undirected
//! network lists each edge as two arcs, so it has two relationships.
//!
//! Errors name the file and the line (and the column of the bad field):
//! unknown line kinds, a missing or repeated problem line, ids outside
//! `1..=N`, negative or non-integer lengths, coordinates out of range, a
//! node given twice or not at all, and arc counts that differ from `M`.
//! Parsing never allocates in proportion to the declared counts, only to the
//! lines actually read, so a hostile header cannot exhaust memory.

use crate::destination::Staging;
use crate::report::{self, ImportReport};
use rhizome_common::{Error, ErrorKind, Position, Result};
use rhizome_storage::column::ColumnBuilder;
use rhizome_storage::{GraphBuilder, NodeGroupInput, RelGroupInput};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The most nodes a DIMACS file may declare (ids are stored as `u32`).
pub const MAX_NODES: u64 = 1 << 31;

/// The arcs of a `.gr` file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GrFile {
    /// `N` of the `p sp N M` line.
    pub node_count: u64,
    /// Arc sources, 1-based node numbers.
    pub sources: Vec<u32>,
    /// Arc targets, parallel to `sources`.
    pub targets: Vec<u32>,
    /// Arc lengths, parallel to `sources`.
    pub lengths: Vec<i64>,
}

/// The coordinates of a `.co` file, indexed by node number - 1.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CoFile {
    /// Latitude of node `k` at index `k - 1`, degrees.
    pub lat: Vec<f64>,
    /// Longitude of node `k` at index `k - 1`, degrees.
    pub lon: Vec<f64>,
}

/// What [`import_dimacs`] reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimacsOptions {
    /// The `.gr` file (arcs).
    pub gr: PathBuf,
    /// The `.co` file (coordinates), if any.
    pub co: Option<PathBuf>,
    /// Label of the nodes (default `Junction`).
    pub label: String,
    /// Type of the relationships (default `ROAD`).
    pub rel_type: String,
    /// Replace an existing database at the destination.
    pub overwrite: bool,
}

impl DimacsOptions {
    /// Options for `gr` (and `co`) with the default label and type.
    pub fn new(gr: impl Into<PathBuf>, co: Option<PathBuf>) -> DimacsOptions {
        DimacsOptions {
            gr: gr.into(),
            co,
            label: "Junction".into(),
            rel_type: "ROAD".into(),
            overwrite: false,
        }
    }
}

/// One whitespace-separated field of a line, with its byte column.
struct Field<'a> {
    text: &'a str,
    column: usize,
}

/// A line cut into fields, remembering its number for errors.
struct Line<'a> {
    number: usize,
    fields: Vec<Field<'a>>,
}

impl Line<'_> {
    fn error(&self, column: usize, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InputError, message).at(Position {
            offset: 0,
            line: self.number.min(u32::MAX as usize) as u32,
            column: column.min(u32::MAX as usize) as u32,
        })
    }

    /// Field `i` (after the kind letter) or an error naming what is missing.
    fn field(&self, i: usize, what: &str) -> Result<&Field<'_>> {
        self.fields.get(i).ok_or_else(|| {
            let end = self.fields.last().map_or(1, |f| f.column + f.text.len());
            self.error(end, format!("line ends where {what} was expected"))
        })
    }

    fn no_more_than(&self, n: usize) -> Result<()> {
        match self.fields.get(n) {
            Some(extra) => Err(self.error(
                extra.column,
                format!("unexpected `{}` at the end of the line", clip(extra.text)),
            )),
            None => Ok(()),
        }
    }

    fn int(&self, i: usize, what: &str) -> Result<i64> {
        let f = self.field(i, what)?;
        f.text.parse::<i64>().map_err(|_| {
            self.error(
                f.column,
                format!("{what} must be an integer, found `{}`", clip(f.text)),
            )
        })
    }

    /// A node number in `1..=n`.
    fn node(&self, i: usize, what: &str, n: u64) -> Result<u32> {
        let value = self.int(i, what)?;
        if value < 1 || value as u64 > n {
            let f = &self.fields[i];
            return Err(self.error(
                f.column,
                format!("{what} {value} is not a node: the problem line declares nodes 1..={n}"),
            ));
        }
        Ok(value as u32)
    }
}

/// At most 40 characters of `text`, for messages.
fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Cuts `bytes` into lines of fields; empty lines and `c` comments are
/// skipped. A line that is not UTF-8 is an error.
fn lines(bytes: &[u8]) -> impl Iterator<Item = Result<Line<'_>>> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(i, raw)| {
            let number = i + 1;
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let text = match std::str::from_utf8(raw) {
                Ok(t) => t,
                Err(e) => {
                    return Some(Err(Error::new(
                        ErrorKind::InputError,
                        "the line is not valid UTF-8 text",
                    )
                    .at(Position {
                        offset: 0,
                        line: number.min(u32::MAX as usize) as u32,
                        column: e.valid_up_to() as u32 + 1,
                    })))
                }
            };
            let mut fields = Vec::new();
            let mut start = None;
            for (at, ch) in text.char_indices().chain([(text.len(), ' ')]) {
                match (ch.is_ascii_whitespace(), start) {
                    (true, Some(s)) => {
                        fields.push(Field {
                            text: &text[s..at],
                            column: text[..s].chars().count() + 1,
                        });
                        start = None;
                    }
                    (false, None) => start = Some(at),
                    _ => {}
                }
            }
            match fields.first().map(|f| f.text) {
                None | Some("c") => None,
                Some(_) => Some(Ok(Line { number, fields })),
            }
        })
}

/// Checks the `p` line: `p <words...> N [M]`; returns the counts.
fn problem_line(line: &Line<'_>, words: &[&str], counts: usize) -> Result<Vec<u64>> {
    let expected = format!(
        "`p {} N{}`",
        words.join(" "),
        if counts == 2 { " M" } else { "" }
    );
    for (i, word) in words.iter().enumerate() {
        let f = line.field(i + 1, &format!("the problem line {expected}"))?;
        if f.text != *word {
            return Err(line.error(
                f.column,
                format!(
                    "the problem line must be {expected}, found `{}`",
                    clip(f.text)
                ),
            ));
        }
    }
    let mut values = Vec::new();
    for (k, what) in ["the node count N", "the arc count M"]
        .iter()
        .take(counts)
        .enumerate()
    {
        let i = words.len() + 1 + k;
        let v = line.int(i, what)?;
        if v < 0 || (k == 0 && v as u64 > MAX_NODES) {
            return Err(line.error(
                line.fields[i].column,
                format!("{what} must be between 0 and {MAX_NODES}, found {v}"),
            ));
        }
        values.push(v as u64);
    }
    line.no_more_than(words.len() + 1 + counts)?;
    Ok(values)
}

fn kind_error(line: &Line<'_>, allowed: &str) -> Error {
    let f = &line.fields[0];
    line.error(
        f.column,
        format!(
            "unexpected line kind `{}`: expected {allowed}",
            clip(f.text)
        ),
    )
}

/// Parses a `.gr` file's bytes.
pub fn parse_gr(bytes: &[u8]) -> Result<GrFile> {
    let mut out = GrFile::default();
    let mut declared: Option<(u64, u64, usize)> = None;
    for line in lines(bytes) {
        let line = line?;
        match line.fields[0].text {
            "p" => {
                if let Some((_, _, at)) = declared {
                    return Err(line.error(
                        1,
                        format!("a second problem line (the first is on line {at})"),
                    ));
                }
                let counts = problem_line(&line, &["sp"], 2)?;
                declared = Some((counts[0], counts[1], line.number));
            }
            "a" => {
                let Some((n, m, _)) = declared else {
                    return Err(line.error(1, "an arc before the problem line `p sp N M`"));
                };
                if out.sources.len() as u64 >= m {
                    return Err(line.error(
                        1,
                        format!("more arcs than the {m} the problem line declares"),
                    ));
                }
                let source = line.node(1, "the arc's source", n)?;
                let target = line.node(2, "the arc's target", n)?;
                let length = line.int(3, "the arc's length")?;
                if length < 0 {
                    return Err(line.error(
                        line.fields[3].column,
                        format!("the arc's length must not be negative, found {length}"),
                    ));
                }
                line.no_more_than(4)?;
                out.sources.push(source);
                out.targets.push(target);
                out.lengths.push(length);
            }
            _ => {
                return Err(kind_error(
                    &line,
                    "`c` (comment), `p` (problem) or `a` (arc)",
                ))
            }
        }
    }
    let Some((n, m, at)) = declared else {
        return Err(Error::new(
            ErrorKind::InputError,
            "no problem line `p sp N M` in the file",
        ));
    };
    if out.sources.len() as u64 != m {
        return Err(Error::new(
            ErrorKind::InputError,
            format!(
                "the problem line (line {at}) declares {m} arcs, the file has {}",
                out.sources.len()
            ),
        ));
    }
    out.node_count = n;
    Ok(out)
}

/// Parses a `.co` file's bytes; every node `1..=N` must have exactly one line.
pub fn parse_co(bytes: &[u8]) -> Result<CoFile> {
    let mut declared: Option<(u64, usize)> = None;
    // (node, lon, lat, line) as read; ordered and checked at the end.
    let mut rows: Vec<(u32, f64, f64, usize)> = Vec::new();
    for line in lines(bytes) {
        let line = line?;
        match line.fields[0].text {
            "p" => {
                if let Some((_, at)) = declared {
                    return Err(line.error(
                        1,
                        format!("a second problem line (the first is on line {at})"),
                    ));
                }
                let counts = problem_line(&line, &["aux", "sp", "co"], 1)?;
                declared = Some((counts[0], line.number));
            }
            "v" => {
                let Some((n, _)) = declared else {
                    return Err(line.error(1, "a node before the problem line `p aux sp co N`"));
                };
                let node = line.node(1, "the node id", n)?;
                let mut degrees = [0.0; 2];
                for (k, (what, limit)) in [("the longitude", 180.0), ("the latitude", 90.0)]
                    .into_iter()
                    .enumerate()
                {
                    let micro = line.int(2 + k, what)?;
                    let value = micro as f64 / 1e6;
                    if !(-limit..=limit).contains(&value) {
                        return Err(line.error(
                            line.fields[2 + k].column,
                            format!(
                                "{what} {micro} (millionths of a degree) is outside ±{limit} degrees"
                            ),
                        ));
                    }
                    degrees[k] = value;
                }
                line.no_more_than(4)?;
                rows.push((node, degrees[0], degrees[1], line.number));
            }
            _ => {
                return Err(kind_error(
                    &line,
                    "`c` (comment), `p` (problem) or `v` (coordinates)",
                ))
            }
        }
    }
    let Some((n, at)) = declared else {
        return Err(Error::new(
            ErrorKind::InputError,
            "no problem line `p aux sp co N` in the file",
        ));
    };
    rows.sort_by_key(|r| (r.0, r.3));
    for pair in rows.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(Error::new(
                ErrorKind::InputError,
                format!(
                    "node {} has coordinates twice (lines {} and {})",
                    pair[0].0, pair[0].3, pair[1].3
                ),
            )
            .at(Position {
                offset: 0,
                line: pair[1].3.min(u32::MAX as usize) as u32,
                column: 1,
            }));
        }
    }
    if rows.len() as u64 != n {
        // Ids are distinct and in 1..=n, so fewer rows means some are missing.
        let missing = (1..=n as u32)
            .zip(rows.iter().map(|r| r.0).chain(std::iter::repeat(0)))
            .find(|(want, got)| want != got)
            .map_or(0, |(want, _)| want);
        return Err(Error::new(
            ErrorKind::InputError,
            format!(
                "the problem line (line {at}) declares {n} nodes, the file has coordinates for {}; node {missing} has none",
                rows.len()
            ),
        ));
    }
    Ok(CoFile {
        lat: rows.iter().map(|r| r.2).collect(),
        lon: rows.iter().map(|r| r.1).collect(),
    })
}

/// Reads and parses `path` with `parse`, naming the file in errors.
fn read_file<T>(path: &Path, parse: fn(&[u8]) -> Result<T>) -> Result<T> {
    let bytes = std::fs::read(path).map_err(|e| {
        Error::io(format!("cannot read {}", path.display()), e)
            .in_source(path.display().to_string())
    })?;
    parse(&bytes).map_err(|e| e.in_source(path.display().to_string()))
}

/// Imports a DIMACS network into a new database at `db_dir` (same
/// destination rules as [`crate::import`]: nothing is left behind on error,
/// an existing database is replaced only with `overwrite`).
pub fn import_dimacs(db_dir: &Path, options: &DimacsOptions) -> Result<ImportReport> {
    let started = Instant::now();
    let staging = Staging::prepare(db_dir, options.overwrite)?;
    let gr = read_file(&options.gr, parse_gr)?;
    let co = match &options.co {
        Some(path) => {
            let co = read_file(path, parse_co)?;
            if co.lat.len() as u64 != gr.node_count {
                return Err(Error::new(
                    ErrorKind::InputError,
                    format!(
                        "{} declares {} nodes but {} declares {}",
                        path.display(),
                        co.lat.len(),
                        options.gr.display(),
                        gr.node_count
                    ),
                )
                .in_source(path.display().to_string()));
            }
            Some(co)
        }
        None => None,
    };
    let report = build(&gr, co.as_ref(), options, staging.temp_dir()?)?;
    staging.commit(options.overwrite)?;
    Ok(ImportReport {
        rows: gr.sources.len() as u64 + gr.node_count,
        elapsed: started.elapsed(),
        peak_memory_bytes: report::peak_memory_bytes(),
        ..report
    })
}

/// Writes the graph into the (new) directory `dir`.
fn build(
    gr: &GrFile,
    co: Option<&CoFile>,
    options: &DimacsOptions,
    dir: &Path,
) -> Result<ImportReport> {
    let mut builder = GraphBuilder::new();
    let mut ids = ColumnBuilder::new();
    for k in 1..=gr.node_count {
        ids.push_i64(k as i64);
    }
    let mut properties = vec![("id".to_string(), ids.finish())];
    if let Some(co) = co {
        for (key, values) in [("lat", &co.lat), ("lon", &co.lon)] {
            let mut column = ColumnBuilder::new();
            for &v in values.iter() {
                column.push_f64(v);
            }
            properties.push((key.to_string(), column.finish()));
        }
    }
    let node_ids = builder.add_nodes(NodeGroupInput {
        rows: gr.node_count,
        labels: vec![options.label.clone()],
        row_labels: None,
        properties,
    })?;
    let mut distance = ColumnBuilder::new();
    for &w in &gr.lengths {
        distance.push_i64(w);
    }
    let node = |k: u32| node_ids[k as usize - 1];
    builder.add_relationships(
        &options.rel_type,
        RelGroupInput {
            sources: gr.sources.iter().map(|&k| node(k)).collect(),
            targets: gr.targets.iter().map(|&k| node(k)).collect(),
            properties: vec![("distance".to_string(), distance.finish())],
        },
    )?;
    builder.add_index(&options.label, "id");
    let summary = builder.write(dir)?;
    Ok(ImportReport {
        label_counts: summary.label_counts,
        type_counts: summary.type_counts,
        nodes: summary.node_count,
        relationships: summary.relationship_count,
        bytes_on_disk: summary.bytes_on_disk,
        ..ImportReport::default()
    })
}

#[cfg(test)]
mod tests;
