//! `rhizome.import_csv`: the bulk importer (`rhizome import`) from Python.

use crate::errors::IntoPyResult;
use crate::running::run_released;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use rhizome_exec::scheduler::CancelToken;
use rhizome_import::{parse_delimiter, IdType, ImportOptions, InputGroup, NoProgress};
use std::path::PathBuf;

/// Input groups from `{"Label:Other": "file.csv" | [files]}`, a list of
/// `"Label=file.csv,more.csv"` specs (as `--nodes` takes), or `None`.
fn groups(what: &str, spec: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<InputGroup>> {
    let Some(spec) = spec.filter(|s| !s.is_none()) else {
        return Ok(Vec::new());
    };
    let py = spec.py();
    let mut out = Vec::new();
    if let Ok(dict) = spec.cast::<PyDict>() {
        for (names, files) in dict.iter() {
            let names: String = names.extract().map_err(|_| {
                PyTypeError::new_err(format!("{what}: keys must be label or type names"))
            })?;
            let files: Vec<PathBuf> = if let Ok(one) = files.extract::<PathBuf>() {
                vec![one]
            } else {
                files.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "{what}[{names:?}] must be a file path or a list of paths"
                    ))
                })?
            };
            let names: Vec<String> = names
                .split(':')
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
            out.push(InputGroup::new(names, files));
        }
        return Ok(out);
    }
    let specs: Vec<String> = if spec.is_instance_of::<PyString>() {
        vec![spec.extract()?]
    } else {
        spec.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "{what} must be a dict of names to files or a list of \"Name=file.csv\" specs"
            ))
        })?
    };
    for text in specs {
        out.push(InputGroup::parse(&text).py_err(py)?);
    }
    Ok(out)
}

fn byte(py: Python<'_>, what: &str, text: &str) -> PyResult<u8> {
    parse_delimiter(text)
        .map_err(|e| {
            rhizome_common::Error::new(
                rhizome_common::ErrorKind::ArgumentError,
                format!("{what}: {e}"),
            )
        })
        .py_err(py)
}

/// Imports CSV files in the `neo4j-admin database import` format into a new
/// database at `path` (see docs/import.md) and returns the report as a dict
/// (`nodes`, `relationships`, `labels`, `types`, `seconds`, ...).
#[pyfunction]
#[pyo3(signature = (
    path, nodes = None, relationships = None, *, delimiter = ",", array_delimiter = ";",
    quote = "\"", id_type = "string", ignore_empty_strings = false,
    skip_bad_relationships = false, skip_duplicate_nodes = false, overwrite = false,
    threads = 0
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn import_csv<'py>(
    py: Python<'py>,
    path: PathBuf,
    nodes: Option<&Bound<'py, PyAny>>,
    relationships: Option<&Bound<'py, PyAny>>,
    delimiter: &str,
    array_delimiter: &str,
    quote: &str,
    id_type: &str,
    ignore_empty_strings: bool,
    skip_bad_relationships: bool,
    skip_duplicate_nodes: bool,
    overwrite: bool,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let options = ImportOptions {
        nodes: groups("nodes", nodes)?,
        relationships: groups("relationships", relationships)?,
        delimiter: byte(py, "delimiter", delimiter)?,
        array_delimiter: byte(py, "array_delimiter", array_delimiter)?,
        quote: byte(py, "quote", quote)?,
        id_type: IdType::parse(id_type).py_err(py)?,
        ignore_empty_strings,
        skip_bad_relationships,
        skip_duplicate_nodes,
        overwrite,
        threads,
    };
    let cancel = CancelToken::root();
    let report = run_released(py, &cancel, move || {
        rhizome_import::import(&path, &options, &NoProgress)
    })?
    .py_err(py)?;
    let dict = PyDict::new(py);
    dict.set_item("nodes", report.nodes)?;
    dict.set_item("relationships", report.relationships)?;
    dict.set_item(
        "labels",
        report.label_counts.into_iter().collect::<Vec<_>>(),
    )?;
    dict.set_item("types", report.type_counts.into_iter().collect::<Vec<_>>())?;
    dict.set_item("skipped_nodes", report.skipped_nodes)?;
    dict.set_item("skipped_relationships", report.skipped_relationships)?;
    dict.set_item("rows", report.rows)?;
    dict.set_item("seconds", report.elapsed.as_secs_f64())?;
    dict.set_item("bytes_on_disk", report.bytes_on_disk)?;
    Ok(dict)
}
