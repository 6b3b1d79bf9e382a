//! What to import and how: the library form of `rhizome import`'s options.

use rhizome_common::{Error, ErrorKind, Result};
use std::path::PathBuf;

/// How the values of `:ID`, `:START_ID` and `:END_ID` columns are read
/// (`--id-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdType {
    /// Any text is an id (the default). A named id column (`id:ID`) is
    /// stored as a string property.
    #[default]
    String,
    /// Ids are 64-bit integers; a field that is not one is an input error.
    /// A named id column is stored as an integer property.
    Integer,
}

impl IdType {
    /// Parses `string` or `integer` (case-insensitive; `actual` is not supported).
    pub fn parse(text: &str) -> Result<IdType> {
        match text.to_ascii_lowercase().as_str() {
            "string" => Ok(IdType::String),
            "integer" | "int" | "long" => Ok(IdType::Integer),
            _ => Err(Error::new(
                ErrorKind::ArgumentError,
                format!("unknown id type `{text}`: expected `string` or `integer`"),
            )),
        }
    }
}

/// One `--nodes` or `--relationships` option: the labels (nodes) or the
/// relationship type, and the files that make up the group. The header of the
/// first file applies to every file of the group; a later file may repeat it
/// (it is then skipped) or start with data on line 1.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InputGroup {
    /// Labels given to every node of the group, or (for relationships) at most
    /// one name: the type of every row whose `:TYPE` field is absent or empty.
    pub names: Vec<String>,
    /// The files, read in this order.
    pub files: Vec<PathBuf>,
}

impl InputGroup {
    /// A group from names and files.
    pub fn new<N: Into<String>, F: Into<PathBuf>>(
        names: impl IntoIterator<Item = N>,
        files: impl IntoIterator<Item = F>,
    ) -> InputGroup {
        InputGroup {
            names: names.into_iter().map(Into::into).collect(),
            files: files.into_iter().map(Into::into).collect(),
        }
    }

    /// Parses the value of a `--nodes` / `--relationships` option:
    /// `[<Name>[:<Name>...]=]<file>[,<file>...]`. The part before the first
    /// `=` is taken as names only if it contains no path separator, so paths
    /// with `=` in a directory name still work. Errors (`ArgumentError`) for
    /// an empty file list, an empty file name or an empty name.
    pub fn parse(spec: &str) -> Result<InputGroup> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::ArgumentError,
                format!("invalid input group `{spec}`: {why} (expected [<Name>[:<Name>...]=]<file>[,<file>...])"),
            )
        };
        let (names_part, files_part) = match spec.find('=') {
            Some(i) if !spec[..i].contains(['/', '\\', ',']) => (Some(&spec[..i]), &spec[i + 1..]),
            _ => (None, spec),
        };
        let mut names = Vec::new();
        if let Some(part) = names_part {
            for name in part.split(':') {
                let name = name.trim();
                if name.is_empty() {
                    return Err(bad("empty label or type name"));
                }
                names.push(name.to_string());
            }
        }
        if files_part.trim().is_empty() {
            return Err(bad("no file given"));
        }
        let mut files = Vec::new();
        for file in files_part.split(',') {
            if file.is_empty() {
                return Err(bad("empty file name"));
            }
            files.push(PathBuf::from(file));
        }
        Ok(InputGroup { names, files })
    }

    /// Renders the group back into the `--nodes` / `--relationships` value
    /// syntax accepted by [`InputGroup::parse`].
    pub fn to_spec(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        if self.names.is_empty() {
            files.join(",")
        } else {
            format!("{}={}", self.names.join(":"), files.join(","))
        }
    }
}

/// Everything `import` needs besides the destination. `Default` gives the
/// `neo4j-admin database import` defaults: `,` delimiter, `;` array
/// delimiter, `"` quote, string ids, empty strings kept, every bad row an
/// error, no overwrite, one parsing thread per core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// Node groups (`--nodes`), imported in this order before any relationship.
    pub nodes: Vec<InputGroup>,
    /// Relationship groups (`--relationships`).
    pub relationships: Vec<InputGroup>,
    /// Field delimiter (`--delimiter`).
    pub delimiter: u8,
    /// Delimiter between the elements of array fields and of `:LABEL` fields
    /// (`--array-delimiter`).
    pub array_delimiter: u8,
    /// Quote character (`--quote`); inside quotes, two quotes stand for one.
    pub quote: u8,
    /// How ids are read (`--id-type`).
    pub id_type: IdType,
    /// An empty field sets no property, in string columns too
    /// (`--ignore-empty-strings`).
    pub ignore_empty_strings: bool,
    /// Relationships whose start or end id is unknown are counted and left
    /// out instead of failing the import (`--skip-bad-relationships`).
    pub skip_bad_relationships: bool,
    /// Nodes whose id was already seen in their id space are counted and left
    /// out instead of failing the import (`--skip-duplicate-nodes`).
    pub skip_duplicate_nodes: bool,
    /// Replace an existing non-empty destination (`--overwrite-destination`).
    /// The old database is removed only after the new one is complete.
    pub overwrite: bool,
    /// Parsing threads; 0 means one per available core.
    pub threads: usize,
}

impl Default for ImportOptions {
    fn default() -> ImportOptions {
        ImportOptions {
            nodes: Vec::new(),
            relationships: Vec::new(),
            delimiter: b',',
            array_delimiter: b';',
            quote: b'"',
            id_type: IdType::String,
            ignore_empty_strings: false,
            skip_bad_relationships: false,
            skip_duplicate_nodes: false,
            overwrite: false,
            threads: 0,
        }
    }
}

impl ImportOptions {
    /// The number of parsing threads to use: `threads`, or the number of
    /// available cores when it is 0.
    pub fn effective_threads(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }

    /// The `rhizome import` arguments (after `<DB_DIR>`) that express these
    /// options, one argument per element, omitting options at their default
    /// (`threads` and `overwrite` are not rendered).
    pub fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for group in &self.nodes {
            args.push(format!("--nodes={}", group.to_spec()));
        }
        for group in &self.relationships {
            args.push(format!("--relationships={}", group.to_spec()));
        }
        let render = |b: u8| match b {
            b'\t' => "TAB".to_string(),
            b => (b as char).to_string(),
        };
        if self.delimiter != b',' {
            args.push(format!("--delimiter={}", render(self.delimiter)));
        }
        if self.array_delimiter != b';' {
            args.push(format!(
                "--array-delimiter={}",
                render(self.array_delimiter)
            ));
        }
        if self.quote != b'"' {
            args.push(format!("--quote={}", render(self.quote)));
        }
        if self.id_type == IdType::Integer {
            args.push("--id-type=integer".to_string());
        }
        if self.ignore_empty_strings {
            args.push("--ignore-empty-strings".to_string());
        }
        if self.skip_bad_relationships {
            args.push("--skip-bad-relationships".to_string());
        }
        if self.skip_duplicate_nodes {
            args.push("--skip-duplicate-nodes".to_string());
        }
        args
    }
}

/// Parses a `--delimiter`, `--array-delimiter` or `--quote` value: a single
/// ASCII character, or `\t` / `TAB` (any case) for a tab. Errors
/// (`ArgumentError`) for anything else, including multi-byte characters.
pub fn parse_delimiter(text: &str) -> Result<u8> {
    if text == "\\t" || text.eq_ignore_ascii_case("tab") {
        return Ok(b'\t');
    }
    let bytes = text.as_bytes();
    if bytes.len() == 1 && bytes[0].is_ascii() && bytes[0] != b'\n' && bytes[0] != b'\r' {
        return Ok(bytes[0]);
    }
    Err(Error::new(
        ErrorKind::ArgumentError,
        format!("invalid delimiter `{text}`: expected a single ASCII character, `\\t` or `TAB`"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_group_specs() {
        let g = InputGroup::parse("Message:Comment=a.csv,b.csv").unwrap();
        assert_eq!(g.names, vec!["Message", "Comment"]);
        assert_eq!(
            g.files,
            vec![PathBuf::from("a.csv"), PathBuf::from("b.csv")]
        );
        let g = InputGroup::parse("/data/x=1/a.csv").unwrap();
        assert!(g.names.is_empty());
        assert_eq!(g.files, vec![PathBuf::from("/data/x=1/a.csv")]);
        let g = InputGroup::parse("KNOWS=k.csv").unwrap();
        assert_eq!(g.to_spec(), "KNOWS=k.csv");
        assert!(InputGroup::parse("A=").is_err());
        assert!(InputGroup::parse("A::B=f").is_err());
        assert!(InputGroup::parse("A=f,,g").is_err());
    }

    #[test]
    fn parses_delimiters_and_id_types() {
        assert_eq!(parse_delimiter("|").unwrap(), b'|');
        assert_eq!(parse_delimiter("\\t").unwrap(), b'\t');
        assert_eq!(parse_delimiter("TAB").unwrap(), b'\t');
        assert!(parse_delimiter("ab").is_err());
        assert!(parse_delimiter("é").is_err());
        assert_eq!(IdType::parse("INTEGER").unwrap(), IdType::Integer);
        assert!(IdType::parse("actual").is_err());
    }

    #[test]
    fn renders_args() {
        let options = ImportOptions {
            nodes: vec![InputGroup::new(["A"], ["a.csv"])],
            delimiter: b'\t',
            id_type: IdType::Integer,
            ..ImportOptions::default()
        };
        assert_eq!(
            options.to_args(),
            vec!["--nodes=A=a.csv", "--delimiter=TAB", "--id-type=integer"]
        );
    }
}
