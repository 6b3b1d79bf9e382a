//! End-to-end tests of the `rhizome` binary: each runs the built command in a
//! temporary directory and checks its standard output, standard error and
//! exit code.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod support;
use support::{path_str, Run};

/// Runs `rhizome args...` with `stdin` piped in, isolated from the user's
/// data directory and history.
fn rhizome(home: &Path, args: &[&str], stdin: &str) -> Run {
    Run::fed(
        Command::new(env!("CARGO_BIN_EXE_rhizome"))
            .args(args)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("RHIZOME_HISTORY", ""),
        stdin,
    )
}

/// A temporary directory with the demo database in `demo/`.
fn with_demo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("demo");
    rhizome(tmp.path(), &["demo", path_str(&db)], "").assert_code(0);
    (tmp, db)
}

#[test]
fn demo_with_piped_schema_prints_and_exits() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("demo");
    let script =
        ":schema\nMATCH (u:User)-[:LIVES_IN]->(c:City {name: 'Lisbon'})\nRETURN count(u) AS n;\n";
    let run = rhizome(tmp.path(), &["demo", path_str(&db)], script);
    run.assert_code(0);
    assert!(run.stdout.contains("| 3 |\n"), "{}", run.stdout);
    for expected in [
        ":Person", ":Movie", ":User", ":City", ":RATED", ":FOLLOWS", "since",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected} in\n{}",
            run.stdout
        );
    }
    assert!(run.stderr.contains("110 nodes"), "{}", run.stderr);
    // A second run reuses the database.
    let again = rhizome(tmp.path(), &["demo", path_str(&db)], ":stats\n");
    again.assert_code(0);
    assert!(
        again.stdout.contains("relationships:  235"),
        "{}",
        again.stdout
    );
    assert!(!again.stderr.contains("Imported"), "{}", again.stderr);
}

#[test]
fn demo_defaults_to_the_user_data_directory() {
    let tmp = tempfile::tempdir().unwrap();
    rhizome(tmp.path(), &["demo"], ":quit\n").assert_code(0);
    let manifest_dir = tmp.path().join("data").join("rhizome").join("demo");
    assert!(manifest_dir.is_dir());
    assert!(std::fs::read_dir(&manifest_dir).unwrap().next().is_some());
}

#[test]
fn demo_refuses_a_directory_it_did_not_create() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("notes.txt"), "keep me").unwrap();
    let run = rhizome(tmp.path(), &["demo", path_str(tmp.path())], "");
    run.assert_code(1);
    assert!(run.stderr.starts_with("ArgumentError: "), "{}", run.stderr);
    assert!(run.stderr.contains("--reset"), "{}", run.stderr);
}

#[test]
fn shell_runs_piped_statements_and_reports_failures() {
    let (tmp, db) = with_demo();
    let script = ":stats\nRETURN 1 +\n  2 * ;\n:nonsense\nRETURN 'a;b' AS x;\n";
    let run = rhizome(tmp.path(), &["shell", path_str(&db)], script);
    assert!(run.stdout.contains("nodes:          110"), "{}", run.stdout);
    // Multi-line statement with a syntax error, positioned on line 2.
    assert!(
        run.stderr.contains("SyntaxError: ") && run.stderr.contains(" at 2:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("unknown command `:nonsense`"),
        "{}",
        run.stderr
    );
    // The `;` inside the string does not split the statement.
    assert!(run.stdout.contains("| 'a;b' |"), "{}", run.stdout);
    assert!(run.stdout.contains("1 row, elapsed "), "{}", run.stdout);
    run.assert_code(1);

    let ok = rhizome(
        tmp.path(),
        &["shell", path_str(&db)],
        ":help\n:param who=\"Ada\"\n:param ids=[1, 2]\n:params\n:quit\nRETURN 1;\n",
    );
    ok.assert_code(0);
    assert!(ok.stdout.contains(":schema"), "{}", ok.stdout);
    assert!(ok.stdout.contains(":param who => 'Ada'"), "{}", ok.stdout);
    assert!(ok.stdout.contains(":param ids => [1, 2]"), "{}", ok.stdout);
    // Nothing runs after :quit.
    assert!(ok.stderr.is_empty(), "{}", ok.stderr);

    let bad = rhizome(tmp.path(), &["shell", path_str(&db)], ":param who=Ada\n");
    bad.assert_code(1);
    assert!(bad.stderr.contains("parameter `who`"), "{}", bad.stderr);
}

#[test]
fn query_on_missing_database_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nowhere");
    let run = rhizome(tmp.path(), &["query", path_str(&missing), "RETURN 1"], "");
    run.assert_code(1);
    assert!(
        run.stderr.starts_with("IoError: no database at"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("rhizome import"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

#[test]
fn a_statement_over_its_memory_limit_fails_clearly_in_query_and_shell() {
    let (tmp, db) = with_demo();
    let huge = "UNWIND range(1, 50000000) AS i RETURN collect(i) AS all";
    let args = ["query", path_str(&db), "--memory-limit", "16MiB", huge];
    let run = rhizome(tmp.path(), &args, "");
    run.assert_code(1);
    assert!(
        run.stderr.contains("memory limit of 16.0 MiB"),
        "{}",
        run.stderr
    );
    let shell = ["shell", path_str(&db), "--memory-limit", "16MiB"];
    let run = rhizome(tmp.path(), &shell, &format!("{huge};\nRETURN 1 AS one;\n"));
    assert!(run.stderr.contains("memory limit"), "{}", run.stderr);
    assert!(
        run.stdout.contains("one"),
        "the shell carries on: {}",
        run.stdout
    );
}

#[test]
fn query_syntax_error_has_classification_position_and_caret() {
    let (tmp, db) = with_demo();
    let run = rhizome(
        tmp.path(),
        &["query", path_str(&db), "MATCH (n RETURN n"],
        "",
    );
    run.assert_code(1);
    let first = run.stderr.lines().next().unwrap();
    assert!(first.starts_with("SyntaxError: "), "{}", run.stderr);
    assert!(first.contains(" at 1:"), "{}", run.stderr);
    assert!(
        run.stderr.contains("\n  MATCH (n RETURN n\n"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.trim_end().ends_with('^'), "{}", run.stderr);
}

#[test]
fn query_analysis_error_is_reported_with_code_and_position() {
    let (tmp, db) = with_demo();
    let run = rhizome(tmp.path(), &["query", path_str(&db), "RETURN x"], "");
    run.assert_code(1);
    // The openCypher TCK classifies an undefined variable as a compile-time
    // SyntaxError with the detail code UndefinedVariable.
    let first = run.stderr.lines().next().unwrap();
    assert!(
        first.contains("[UndefinedVariable] at 1:8"),
        "{}",
        run.stderr
    );
}

/// Keanu Reeves's films in the demo graph, as `query` prints them.
fn keanu(format: &str) -> Run {
    let (tmp, db) = with_demo();
    rhizome(
        tmp.path(),
        &[
            "query",
            path_str(&db),
            "--format",
            format,
            "--param",
            "name=\"Keanu Reeves\"",
            "--timeout",
            "30",
            "--threads",
            "2",
            "MATCH (p:Person {name: $name})-[r:ACTED_IN]->(m:Movie) \
             RETURN m.title AS title, m.released AS year, r.roles AS roles, m ORDER BY year",
        ],
        "",
    )
}

#[test]
fn query_prints_a_table() {
    let run = keanu("table");
    run.assert_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[1].split('|').nth(1).unwrap().trim(),
        "title",
        "{}",
        run.stdout
    );
    assert!(
        lines[3].starts_with(
            "| 'Speed'      | 1994 | ['Jack Traven'] | \
             (:Movie {genres: ['Action', 'Thriller'], released: 1994, title: 'Speed'})"
        ),
        "{}",
        run.stdout
    );
    assert!(
        lines[5].starts_with("| 'John Wick'  | 2014 |"),
        "{}",
        run.stdout
    );
    assert!(lines[7].starts_with("3 rows, elapsed "), "{}", run.stdout);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

#[test]
fn query_prints_json_lines() {
    let run = keanu("json");
    run.assert_code(0);
    let rows: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(rows.len(), 3);
    // Keys in column order.
    assert!(
        run.stdout
            .starts_with(r#"{"title":"Speed","year":1994,"roles":["Jack Traven"],"m":{"~id":"#),
        "{}",
        run.stdout
    );
    let matrix = &rows[1];
    assert_eq!(matrix["title"], "The Matrix");
    assert_eq!(matrix["m"]["~labels"], serde_json::json!(["Movie"]));
    assert_eq!(
        matrix["m"]["~properties"]["genres"],
        serde_json::json!(["Science Fiction", "Action"])
    );
}

#[test]
fn query_prints_csv() {
    let run = keanu("csv");
    run.assert_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "title,year,roles,m");
    assert!(
        lines[1].starts_with(r#"Speed,1994,"[""Jack Traven""]","{""~id"":"#),
        "{}",
        run.stdout
    );
    assert_eq!(lines.len(), 4);
}

#[test]
fn explain_prints_the_plan_and_writes_report_counters() {
    let (tmp, db) = with_demo();
    let explain = "EXPLAIN MATCH (m:Movie) RETURN m.title";
    let run = rhizome(tmp.path(), &["query", path_str(&db), explain], "");
    run.assert_code(0);
    assert!(run.stdout.contains("(m:Movie)"), "{}", run.stdout);
    assert!(run.stdout.contains("0 rows, elapsed "), "{}", run.stdout);
    let json = rhizome(
        tmp.path(),
        &["query", path_str(&db), "--format", "json", explain],
        "",
    );
    json.assert_code(0);
    assert!(json.stdout.is_empty(), "{}", json.stdout);
    assert!(json.stderr.contains("(m:Movie)"), "{}", json.stderr);
    let write = rhizome(
        tmp.path(),
        &[
            "query",
            path_str(&db),
            "CREATE (m:Movie {title: 'Dune'}) RETURN m.title",
        ],
        "",
    );
    write.assert_code(0);
    assert!(
        write
            .stdout
            .contains("1 row, 1 node created, 1 property set, 1 label added, elapsed "),
        "{}",
        write.stdout
    );
    // The write is durable: a new process sees it.
    let read = rhizome(
        tmp.path(),
        &[
            "query",
            path_str(&db),
            "--format",
            "csv",
            "MATCH (m:Movie {title: 'Dune'}) RETURN count(m) AS n",
        ],
        "",
    );
    read.assert_code(0);
    assert_eq!(read.stdout, "n\n1\n");
}

#[test]
fn query_reads_the_statement_from_a_file_or_stdin() {
    let (tmp, db) = with_demo();
    let file = tmp.path().join("q.cypher");
    std::fs::write(&file, "RETURN\n  1 +").unwrap();
    let run = rhizome(
        tmp.path(),
        &["query", path_str(&db), "-f", path_str(&file)],
        "",
    );
    run.assert_code(1);
    assert!(run.stderr.contains(" at 2:"), "{}", run.stderr);
    let run = rhizome(
        tmp.path(),
        &["query", path_str(&db), "-f", "-"],
        "RETURN 1 +",
    );
    run.assert_code(1);
    assert!(run.stderr.starts_with("SyntaxError"), "{}", run.stderr);
    let missing = rhizome(
        tmp.path(),
        &["query", path_str(&db), "-f", "nope.cypher"],
        "",
    );
    missing.assert_code(1);
    assert!(
        missing.stderr.starts_with("IoError: nope.cypher"),
        "{}",
        missing.stderr
    );
}

#[test]
fn bad_param_json_is_a_usage_error_naming_the_parameter() {
    let tmp = tempfile::tempdir().unwrap();
    let run = rhizome(
        tmp.path(),
        &["query", "db", "--param", "age=forty", "RETURN $age"],
        "",
    );
    run.assert_code(2);
    assert!(run.stderr.contains("parameter `age`"), "{}", run.stderr);
    assert!(run.stderr.contains("invalid JSON"), "{}", run.stderr);
}

#[test]
fn bad_format_and_missing_query_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let run = rhizome(
        tmp.path(),
        &["query", "db", "--format", "xml", "RETURN 1"],
        "",
    );
    run.assert_code(2);
    assert!(run.stderr.contains("xml"), "{}", run.stderr);
    assert!(run.stderr.contains("table, json, csv"), "{}", run.stderr);
    rhizome(tmp.path(), &["query", "db"], "").assert_code(2);
    rhizome(tmp.path(), &["no-such-command"], "").assert_code(2);
}

#[test]
fn generate_likes_then_import_with_the_printed_command() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("likes-csv");
    let run = rhizome(
        tmp.path(),
        &[
            "generate",
            "likes",
            path_str(&csv),
            "--persons",
            "200",
            "--items",
            "20",
            "--likes-per-person",
            "5",
            "--seed",
            "7",
        ],
        "",
    );
    run.assert_code(0);
    let command = run
        .stdout
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("rhizome import <DB_DIR> "))
        .unwrap_or_else(|| panic!("no import command in\n{}", run.stdout));
    // The generated paths hold no characters that need shell quoting.
    let args: Vec<&str> = command.split(' ').skip(3).collect();
    let db = tmp.path().join("likes-db");
    let mut import_args = vec!["import", path_str(&db)];
    import_args.extend(&args);
    let import = rhizome(tmp.path(), &import_args, "");
    import.assert_code(0);
    assert!(
        import
            .stdout
            .contains("Imported 220 nodes and 1,000 relationships"),
        "{}",
        import.stdout
    );

    // Importing again into the same place needs --overwrite-destination.
    let again = rhizome(tmp.path(), &import_args, "");
    again.assert_code(1);
    assert!(
        again.stderr.starts_with("ArgumentError"),
        "{}",
        again.stderr
    );
    import_args.push("--overwrite-destination");
    rhizome(tmp.path(), &import_args, "").assert_code(0);

    let stats = rhizome(tmp.path(), &["shell", path_str(&db)], ":stats\n");
    stats.assert_code(0);
    assert!(
        stats.stdout.contains("relationships:  1000"),
        "{}",
        stats.stdout
    );
    let query = rhizome(
        tmp.path(),
        &[
            "query",
            path_str(&db),
            "--format",
            "csv",
            "MATCH (p:Person)-[:LIKES]->(i:Item) \
             RETURN count(*) AS likes, count(DISTINCT p) AS persons",
        ],
        "",
    );
    query.assert_code(0);
    assert_eq!(query.stdout, "likes,persons\n1000,200\n");
}

#[test]
fn generate_chain_prints_its_import_command() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("chain");
    let run = rhizome(
        tmp.path(),
        &[
            "generate",
            "chain",
            path_str(&csv),
            "--nodes",
            "100",
            "--degree",
            "3",
        ],
        "",
    );
    run.assert_code(0);
    assert!(
        run.stdout.contains("rhizome import <DB_DIR> --nodes="),
        "{}",
        run.stdout
    );
    assert!(csv.join("rels.csv").is_file());
}

#[test]
fn import_errors_name_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let nodes = tmp.path().join("people.csv");
    std::fs::write(&nodes, "id:ID,name,age:int\n1,Ada,36\n2,Bob,old\n").unwrap();
    let db = tmp.path().join("db");
    let spec = format!("--nodes=Person={}", path_str(&nodes));
    let run = rhizome(tmp.path(), &["import", path_str(&db), &spec], "");
    run.assert_code(1);
    assert!(run.stderr.starts_with("InputError: "), "{}", run.stderr);
    assert!(run.stderr.contains("people.csv:3"), "{}", run.stderr);
    assert!(!db.exists(), "a failed import leaves nothing behind");

    let missing = format!("--nodes={}", path_str(&tmp.path().join("absent.csv")));
    let run = rhizome(tmp.path(), &["import", path_str(&db), &missing], "");
    run.assert_code(1);
    assert!(run.stderr.contains("absent.csv"), "{}", run.stderr);

    let bad_flag = rhizome(tmp.path(), &["import", path_str(&db), "--delimiter=ab"], "");
    bad_flag.assert_code(2);
}

#[test]
fn bench_import_prints_one_line_per_import() {
    let tmp = tempfile::tempdir().unwrap();
    let run = rhizome(
        tmp.path(),
        &[
            "bench",
            "import",
            "--persons",
            "100",
            "--items",
            "10",
            "--likes-per-person",
            "2",
            "--skip-ldbc",
            "--threads",
            "2",
        ],
        "",
    );
    run.assert_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    assert!(lines[0].starts_with("import likes"), "{}", run.stdout);
    assert!(lines[0].contains("310 rows"), "{}", run.stdout);
}

#[test]
fn bench_writes_prints_rates_and_delta_ratios() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let run = rhizome(
        tmp.path(),
        &[
            "bench",
            "writes",
            "--rows",
            "300",
            "--batch",
            "100",
            "--single",
            "2",
            "--persons",
            "100",
            "--items",
            "10",
            "--likes-per-person",
            "3",
            "--runs",
            "1",
            "--chain-nodes",
            "1000",
            "--chain-degree",
            "3",
            "--process-runs",
            "1",
            "--data-dir",
            path_str(&data),
        ],
        "",
    );
    run.assert_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    // Every figure of the issue, beside its reference from the same run.
    let figure = |starts: &str, has: &[&str]| {
        assert!(
            lines
                .iter()
                .any(|l| l.trim_start().starts_with(starts) && has.iter().all(|h| l.contains(h))),
            "no line `{starts}` with {has:?}:\n{}",
            run.stdout
        );
    };
    figure("bulk UNWIND", &["rows/s"]);
    figure("raw 64-byte append + fdatasync", &["/s"]);
    figure("raw 64-byte write into reserved space", &["/s"]);
    figure(
        "single-row autocommit",
        &[
            "tx/s",
            "of the raw sync rate",
            "target >= 80%",
            "of the reserved-space rate",
        ],
    );
    figure(
        "16 concurrent single-row writers",
        &[
            "tx/s",
            "x the raw sync rate",
            "target >= 50%",
            "x the reserved-space rate",
        ],
    );
    figure("query  base+delta", &["target <= 1.50"]);
    for query in ["A1", "A2", "A3", "A4"] {
        let ratio = lines.iter().find(|l| l.starts_with(query)).map(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_suffix('x')?.parse::<f64>().ok())
        });
        assert!(
            matches!(ratio, Some(Some(r)) if r > 0.0),
            "{query}:\n{}",
            run.stdout
        );
    }
    figure("checkpoint after", &["vs full rewrite", "target <= 0.10"]);
    figure(
        "chain graph 1000 nodes, 3000 relationships",
        &["new REL_ONE"],
    );
    figure("checkpoint:", &["vs full rewrite", "target <= 0.10"]);
    figure(
        "SQ3 over the delta",
        &["after the full checkpoint", "target <= 1.50"],
    );
    figure(
        "one-row CREATE process",
        &["RETURN 1 process", "target <= 2.00 or <= +20 ms"],
    );
}

#[test]
fn ctrl_c_cancels_the_running_query_not_the_process() {
    let (tmp, db) = with_demo();
    // Four-way product of all nodes: minutes of work, far more than the test waits.
    let child = Command::new(env!("CARGO_BIN_EXE_rhizome"))
        .args([
            "query",
            path_str(&db),
            "MATCH (a), (b), (c), (d), (e) RETURN count(*) AS n",
        ])
        .env("XDG_DATA_HOME", tmp.path().join("data"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rhizome");
    std::thread::sleep(std::time::Duration::from_millis(800));
    let started = std::time::Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    let run = Run::from(child.wait_with_output().unwrap());
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    run.assert_code(1);
    assert!(run.stderr.starts_with("QueryAborted"), "{}", run.stderr);
}

#[test]
fn tck_runs_a_feature_set_and_ends_with_the_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let run = rhizome(
        tmp.path(),
        &["tck", "--filter", "expressions/literals/Literals1"],
        "",
    );
    run.assert_code(0);
    let last = run.stdout.lines().last().unwrap_or_default();
    let words: Vec<&str> = last.split_whitespace().collect();
    assert!(
        matches!(words.as_slice(), [_, "passed,", _, "failed"]) && words[0] != "0",
        "last line: {last}\n{}",
        run.stdout
    );
}

#[test]
fn shell_transactions_commit_and_roll_back() {
    let (tmp, db) = with_demo();
    let script = "BEGIN;\nCREATE (:Scratch {x: 1});\nMATCH (n:Scratch) RETURN count(n) AS inside;\nROLLBACK;\n\
                  MATCH (n:Scratch) RETURN count(n) AS after_rollback;\n\
                  BEGIN;\nCREATE (:Scratch {x: 2});\nCOMMIT;\nMATCH (n:Scratch) RETURN n.x AS x;\nCOMMIT;\n";
    let run = rhizome(tmp.path(), &["shell", path_str(&db)], script);
    // The last COMMIT has no open transaction: the script reports one failure.
    run.assert_code(1);
    let out = &run.stdout;
    let counts: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with('|'))
        .collect();
    assert!(out.contains("Transaction started."), "{out}");
    assert!(
        out.contains("Rolled back.") && out.contains("Committed."),
        "{out}"
    );
    // inside = 1, after_rollback = 0, x = 2
    let joined = counts.join("\n");
    assert!(
        joined.contains("| 1 ") || joined.contains("|      1 |"),
        "{out}"
    );
    assert!(
        run.stderr.contains("no transaction is open"),
        "{}",
        run.stderr
    );
    let after: Vec<&str> = out
        .split("after_rollback")
        .nth(1)
        .unwrap()
        .lines()
        .take(4)
        .collect();
    assert!(after.iter().any(|l| l.contains(" 0 ")), "{out}");
    let x: Vec<&str> = out.split("| x ").nth(1).unwrap().lines().take(4).collect();
    assert!(x.iter().any(|l| l.contains(" 2 ")), "{out}");
}

#[test]
fn check_reports_a_healthy_and_a_damaged_database() {
    let (tmp, db) = with_demo();
    let run = rhizome(tmp.path(), &["check", path_str(&db)], "");
    run.assert_code(0);
    assert!(run.stdout.contains("no problems found"), "{}", run.stdout);
    // Truncate the segment: the damage is reported, not a crash.
    let segment = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "rhz"))
        .unwrap();
    let len = std::fs::metadata(&segment).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&segment)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let run = rhizome(tmp.path(), &["check", path_str(&db)], "");
    run.assert_code(1);
    assert!(run.stderr.starts_with("CorruptDatabase"), "{}", run.stderr);
}

#[test]
fn upgrade_converts_an_old_format_database_that_queries_refuse() {
    // A format-2 database (segment, delta file, log) written by the last
    // Rhizome of that format: crates/rhizome-storage/tests/fixtures.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rhizome-storage/tests/fixtures/old-formats/v2");
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    std::fs::create_dir(&db).unwrap();
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), db.join(entry.file_name())).unwrap();
    }
    let count = "MATCH (p:Person)-[:KNOWS]->() RETURN count(*) AS n";
    let run = rhizome(tmp.path(), &["query", path_str(&db), count], "");
    run.assert_code(1);
    assert!(
        run.stderr.contains("format version 2")
            && run
                .stderr
                .contains(&format!("rhizome upgrade {}", db.display())),
        "{}",
        run.stderr
    );
    let run = rhizome(tmp.path(), &["upgrade", path_str(&db)], "");
    run.assert_code(0);
    assert!(
        run.stdout
            .contains("upgraded from on-disk format version 2 to 4"),
        "{}",
        run.stdout
    );
    let run = rhizome(
        tmp.path(),
        &["query", path_str(&db), "--format", "csv", count],
        "",
    );
    run.assert_code(0);
    assert_eq!(run.stdout.trim(), "n\n121", "{}", run.stderr);
    let run = rhizome(tmp.path(), &["upgrade", path_str(&db)], "");
    run.assert_code(0);
    assert!(run.stdout.contains("nothing to upgrade"), "{}", run.stdout);
    rhizome(tmp.path(), &["check", path_str(&db)], "").assert_code(0);
}

/// `loops` concurrent shell-style loops of `rhizome query DB 'CREATE ...'`,
/// `each` statements per loop; returns every run.
fn concurrent_creates(home: &Path, db: &Path, loops: usize, each: usize) -> Vec<Run> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..loops)
            .map(|j| {
                scope.spawn(move || {
                    (0..each)
                        .map(|i| {
                            let (pj, pi) = (format!("j={j}"), format!("i={i}"));
                            rhizome(
                                home,
                                &[
                                    "query",
                                    path_str(db),
                                    "CREATE (:Y {p: $j, i: $i})",
                                    "--param",
                                    &pj,
                                    "--param",
                                    &pi,
                                ],
                                "",
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// Every run exited 0, the database holds `expected` `Y` nodes, `check` is clean.
fn assert_all_created(home: &Path, db: &Path, runs: &[Run], expected: usize) {
    for run in runs {
        run.assert_code(0);
    }
    let count = rhizome(
        home,
        &[
            "query",
            path_str(db),
            "MATCH (y:Y) RETURN count(DISTINCT [y.p, y.i]) AS n",
            "--format",
            "csv",
        ],
        "",
    );
    count.assert_code(0);
    assert!(
        count.stdout.contains(&format!("\n{expected}")),
        "{}",
        count.stdout
    );
    let check = rhizome(home, &["check", path_str(db)], "");
    check.assert_code(0);
}

#[test]
fn concurrent_query_processes_lose_nothing() {
    let (tmp, db) = with_demo();
    let runs = concurrent_creates(tmp.path(), &db, 4, 5);
    assert_all_created(tmp.path(), &db, &runs, 20);
}

/// The scenario of the issue that asked for shared storage: four loops of
/// 50 `CREATE` processes each on one database.
#[test]
#[ignore = "slow: 200 processes; CI runs it with --ignored"]
fn four_loops_of_fifty_creates() {
    let (tmp, db) = with_demo();
    let t0 = std::time::Instant::now();
    let runs = concurrent_creates(tmp.path(), &db, 4, 50);
    eprintln!("200 CREATE processes in 4 loops: {:?}", t0.elapsed());
    assert_all_created(tmp.path(), &db, &runs, 200);
}

#[test]
fn a_waiting_writer_names_the_holder_and_readers_go_on() {
    let (tmp, db) = with_demo();
    // A shell holds the writer lock in an open transaction.
    let mut shell = Command::new(env!("CARGO_BIN_EXE_rhizome"))
        .args(["shell", path_str(&db)])
        .env("XDG_DATA_HOME", tmp.path().join("data"))
        .env("RHIZOME_HISTORY", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = shell.stdin.take().unwrap();
    stdin
        .write_all(b"BEGIN;\nCREATE (:Held {x: 1});\n")
        .unwrap();
    stdin.flush().unwrap();
    let lock_file = db.join("lock");
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(&lock_file).is_ok_and(|s| s.contains("shell")) {
        assert!(t0.elapsed().as_secs() < 20, "the shell never took the lock");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let run = rhizome(
        tmp.path(),
        &[
            "query",
            "--lock-timeout",
            "0.3",
            path_str(&db),
            "CREATE (:Y {p: 1})",
        ],
        "",
    );
    run.assert_code(1);
    assert!(
        run.stderr.contains("LockAcquisitionTimeout")
            && run.stderr.contains(&format!("process {}", shell.id())),
        "{}",
        run.stderr
    );
    // Readers (and a read-only process, and a backup) go on meanwhile.
    let read = rhizome(
        tmp.path(),
        &[
            "query",
            "--read-only",
            path_str(&db),
            "MATCH (n:Held) RETURN count(n) AS held",
            "--format",
            "csv",
        ],
        "",
    );
    read.assert_code(0);
    assert!(read.stdout.contains("\n0"), "{}", read.stdout);
    let refused = rhizome(
        tmp.path(),
        &["query", "--read-only", path_str(&db), "CREATE (:Y)"],
        "",
    );
    refused.assert_code(1);
    assert!(refused.stderr.contains("read-only"), "{}", refused.stderr);
    let copy = tmp.path().join("copy");
    rhizome(tmp.path(), &["backup", path_str(&db), path_str(&copy)], "").assert_code(0);
    rhizome(tmp.path(), &["check", path_str(&copy)], "").assert_code(0);
    stdin.write_all(b"COMMIT;\n").unwrap();
    drop(stdin);
    assert!(shell.wait().unwrap().success());
    let after = rhizome(
        tmp.path(),
        &[
            "query",
            path_str(&db),
            "MATCH (n:Held) RETURN count(n) AS held",
            "--format",
            "csv",
        ],
        "",
    );
    assert!(after.stdout.contains("\n1"), "{}", after.stdout);
}

/// Entities in a result are rendered from the state the statement ran on:
/// inside a transaction that is its own state, so a node it created (not
/// yet visible to any other snapshot) shows with its labels and properties.
#[test]
fn shell_renders_entities_from_the_statements_own_state() {
    let (tmp, db) = with_demo();
    let script = "BEGIN;\nCREATE (n:Fresh {x: 41}) RETURN n;\nROLLBACK;\n";
    let run = rhizome(tmp.path(), &["shell", path_str(&db)], script);
    run.assert_code(0);
    assert!(
        run.stdout.contains(":Fresh") && run.stdout.contains("x: 41"),
        "{}",
        run.stdout
    );
}
