//! The runtime's modules form layers: no import cycle inside the crate.
//!
//! Reads every `src/**/*.rs`, takes each `crate::…`, `super::…` and
//! `self::…` path outside comments and test modules, resolves it to the
//! longest module path it names, and fails naming a cycle if the graph of
//! "module A uses module B" has one. A module's own submodule declarations
//! (`pub mod x;`) are not uses.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`ops::filter`; `` for the crate root) of a source file.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("file under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments, string literals and its
/// `#[cfg(test)]` modules.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if text[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            i += text[i..].find("*/").map_or(bytes.len(), |e| e + 2);
        } else if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if bytes[i] == b'\'' && bytes.get(i + 2) == Some(&b'\'') {
            // A character literal such as '{' (not a lifetime).
            i += 3;
        } else {
            out.push(bytes[i] as char);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reads the path that starts at `chars[k]` (just after `crate::`,
/// `super::` or `self::`) onto `prefix`, expanding `{a, b::c}` groups, into
/// `out`; returns the position after it.
fn read_path(
    chars: &[char],
    mut k: usize,
    mut path: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        if chars.get(k) == Some(&'{') {
            // A group: each element is a path continuing this one.
            k += 1;
            loop {
                while chars.get(k).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    k += 1;
                }
                match chars.get(k) {
                    Some('}') => return k + 1,
                    None => return k,
                    _ => {
                        let next = read_path(chars, k, path.clone(), out);
                        // Skip what a path does not parse (`as` renames, `*`).
                        k = next.max(k + 1);
                        while chars.get(k).is_some_and(|c| !matches!(c, ',' | '}')) {
                            k += 1;
                        }
                    }
                }
            }
        }
        let start = k;
        while k < chars.len() && is_ident(chars[k]) {
            k += 1;
        }
        let ident: String = chars[start..k].iter().collect();
        match ident.as_str() {
            "" => {}
            "super" => {
                path.pop();
            }
            _ => path.push(ident),
        }
        if chars.get(k) != Some(&':') || chars.get(k + 1) != Some(&':') {
            out.push(path);
            return k;
        }
        k += 2;
    }
}

/// The modules `file`'s code uses.
fn uses(code: &str, this: &[String], modules: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let mut paths = Vec::new();
    for (keyword, base) in [
        ("crate::", Vec::new()),
        ("super::", this[..this.len().saturating_sub(1)].to_vec()),
        ("self::", this.to_vec()),
    ] {
        let chars: Vec<char> = code.chars().collect();
        let word: Vec<char> = keyword.chars().collect();
        let mut k = 0;
        while k + word.len() <= chars.len() {
            let preceded = k > 0 && (is_ident(chars[k - 1]) || chars[k - 1] == ':');
            if chars[k..k + word.len()] == word[..] && !preceded {
                k = read_path(&chars, k + word.len(), base.clone(), &mut paths);
            } else {
                k += 1;
            }
        }
    }
    paths
        .into_iter()
        .filter_map(|path| {
            (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|prefix| modules.contains(prefix))
        })
        .filter(|m| m.as_slice() != this)
        .collect()
}

/// A cycle in `graph`, if there is one, as the modules along it.
fn find_cycle(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        node: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        marks: &mut BTreeMap<Vec<String>, Mark>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        marks.insert(node.clone(), Mark::Open);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let start = stack.iter().position(|n| n == next).unwrap_or(0);
                    let mut cycle: Vec<String> = stack[start..].iter().map(|m| name(m)).collect();
                    cycle.push(name(next));
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(cycle) = visit(next, graph, marks, stack) {
                        return Some(cycle);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        marks.insert(node.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if marks.get(node).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new()) {
                return Some(cycle);
            }
        }
    }
    None
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
}

/// The module graph of the crate whose sources are in `src`.
fn module_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    files
        .iter()
        .map(|file| {
            let this = module_of(src, file);
            let code = code_of(&std::fs::read_to_string(file).expect("readable source"));
            let used = uses(&code, &this, &modules);
            (this, used)
        })
        .collect()
}

#[test]
fn the_runtime_has_no_import_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    // The graph is read at all: the pipeline builder uses the operators.
    assert!(graph[&vec!["pipeline".to_string(), "build".to_string()]]
        .contains(&vec!["ops".to_string(), "filter".to_string()]));
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle inside rhizome-exec: {}", cycle.join(" -> "));
    }
}

#[test]
fn a_cycle_is_found() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    std::fs::create_dir(src.join("ops")).expect("mkdir");
    std::fs::write(src.join("lib.rs"), "pub mod a;\npub mod ops;\n").expect("write");
    std::fs::write(
        src.join("a.rs"),
        "// use crate::ops::b; in a comment is no use\nuse crate::{ops::{b::B}, x};\n",
    )
    .expect("write");
    std::fs::write(src.join("ops/mod.rs"), "pub mod b;\n").expect("write");
    std::fs::write(src.join("ops/b.rs"), "fn f() { super::super::a::g() }\n").expect("write");
    let graph = module_graph(src);
    assert!(graph[&vec!["a".to_string()]].contains(&vec!["ops".to_string(), "b".to_string()]));
    let cycle = find_cycle(&graph).expect("a -> ops::b -> a is a cycle");
    assert_eq!(cycle.first(), cycle.last());
    std::fs::write(src.join("ops/b.rs"), "use crate::a::A;\n").expect("write");
    assert!(find_cycle(&module_graph(src)).is_some());
    std::fs::write(src.join("ops/b.rs"), "fn f() {}\n").expect("write");
    assert_eq!(find_cycle(&module_graph(src)), None);
}
