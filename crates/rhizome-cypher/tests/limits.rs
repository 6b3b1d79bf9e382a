//! Deep and long inputs end in clean errors (or succeed) without overflowing
//! the stack, and malformed inputs never panic.

use rhizome_cypher::printer::print_statement;
use rhizome_cypher::{compile, parse};

fn nested(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("RETURN {}{}{}", open.repeat(n), inner, close.repeat(n))
}

fn assert_clean(text: &str) {
    match compile(text) {
        Ok(_) => {}
        Err(e) => {
            assert_eq!(e.kind, rhizome_common::ErrorKind::SyntaxError, "{e}");
            assert!(e.position.is_some());
        }
    }
    if let Ok(ast) = parse(text) {
        let printed = print_statement(&ast);
        assert_eq!(parse(&printed).ok(), Some(ast));
    }
}

#[test]
fn deep_nesting_is_rejected_cleanly() {
    let n = 100_000;
    let deep = [
        nested("(", "1", ")", n),
        nested("[", "1", "]", n),
        nested("{a: ", "1", "}", n),
        nested("f(", "1", ")", n),
        nested("NOT ", "true", "", n),
        nested("- ", "x", "", n),
        nested("CASE WHEN true THEN ", "1", " END", n),
        nested("[x IN ", "[1]", " | x]", n),
        nested("EXISTS { MATCH (n) WHERE ", "true", " }", n),
        format!(
            "MATCH (n) {}RETURN 1{}",
            "CALL { ".repeat(n),
            " }".repeat(n)
        ),
        format!(
            "MATCH (n) {}CREATE (){}",
            "FOREACH (x IN [1] | ".repeat(n),
            ")".repeat(n)
        ),
    ];
    for text in &deep {
        eprintln!("deep: {}", &text[..40.min(text.len())]);
        let e = parse(text).expect_err("too deep");
        assert!(e.message.contains("nested too deeply"), "{e}");
    }
}

#[test]
fn nesting_below_the_limit_works_on_a_small_stack() {
    // Run on a 2 MiB thread, like a default spawned thread.
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(|| {
            for text in [
                nested("[", "1", "]", 450),
                nested("(", "1", ")", 450),
                nested("{a: ", "1", "}", 450),
                nested("NOT ", "true", "", 450),
                nested("coalesce(", "[1]", ")", 450),
            ] {
                let ast = parse(&text).unwrap_or_else(|e| panic!("{e}"));
                compile(&text).unwrap_or_else(|e| panic!("{e}"));
                let printed = print_statement(&ast);
                assert_eq!(parse(&printed).ok(), Some(ast));
            }
        })
        .expect("spawn")
        .join()
        .expect("no panic");
}

#[test]
fn long_flat_chains_are_bounded() {
    let n = 100_000;
    for text in [
        format!("RETURN 1{}", " + 1".repeat(n)),
        format!("RETURN a{}", ".b".repeat(n)),
        format!("RETURN a{}", "[0]".repeat(n)),
        format!("RETURN 1{}", " < 1".repeat(n)),
        format!("RETURN true{}", " AND true".repeat(n)),
    ] {
        assert_clean(&text);
    }
    // Moderate depth just under the limit works and round-trips.
    assert_clean(&nested("(", "1", ")", 100));
    assert_clean(&nested("[", "1", "]", 100));
    assert_clean(&format!("RETURN 1{}", " + 1".repeat(100)));
}

#[test]
fn garbage_never_panics() {
    let samples = [
        "",
        ";",
        "RETURN",
        "MATCH (",
        "MATCH (n)-[",
        "RETURN 'unterminated",
        "RETURN `x",
        "/* open",
        "RETURN 0x",
        "RETURN 0o9",
        "RETURN 1e999999",
        "RETURN $",
        "CALL",
        "CALL {",
        "MATCH (n) RETURN n SKIP",
        "RETURN [x IN",
        "RETURN {a:",
        "MATCH p = shortestPath(",
        "RETURN \u{0}",
        "RETURN '\\u12'",
        "RETURN ä—",
        "UNWIND [1] AS x UNION",
        "MERGE (a) ON",
        "CREATE INDEX FOR",
        "DROP",
        "SHOW",
        "TERMINATE TRANSACTIONS",
        "RETURN count(*",
        "RETURN reduce(",
        "RETURN all(x IN",
        "MATCH (a)<-->(b) RETURN a",
        "RETURN -",
    ];
    for s in samples {
        let _ = compile(s).map_err(|e| e.render_with_source(s));
    }
}
