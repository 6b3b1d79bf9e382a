//! The shell as a script runner, locally and as a Bolt client of
//! `rhizome serve`: meta-commands only at the start of a statement (never
//! inside a comment), `:param NAME => expression`, transactions, output
//! formats and footers, and the same behaviour over `bolt://`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::{path_str, Run};

fn command(home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rhizome"));
    command
        .args(args)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("RHIZOME_HISTORY", "")
        .env_remove("RHIZOME_PASSWORD")
        .env_remove("NEO4J_PASSWORD");
    command
}

/// Runs `rhizome args...` with `stdin` piped in and `env` set.
fn rhizome_env(home: &Path, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    let mut command = command(home, args);
    for (k, v) in env {
        command.env(k, v);
    }
    Run::fed(&mut command, stdin)
}

fn rhizome(home: &Path, args: &[&str], stdin: &str) -> Run {
    rhizome_env(home, args, stdin, &[])
}

/// A temporary directory with the demo database in `demo/`.
fn with_demo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("demo");
    rhizome(tmp.path(), &["demo", path_str(&db)], "").assert_code(0);
    (tmp, db)
}

#[test]
fn a_meta_command_inside_a_block_comment_does_not_run() {
    let (tmp, db) = with_demo();
    let script =
        "/* A query file's header:\n:param x => 99\n:quit\n*/\nRETURN 1 AS one;\n:params\n";
    let run = rhizome(tmp.path(), &["shell", path_str(&db)], script);
    run.assert_code(0);
    assert!(run.stdout.contains("| one |"), "{}", run.stdout);
    assert!(run.stdout.contains("no parameters set"), "{}", run.stdout);
}

#[test]
fn a_meta_command_after_a_statement_on_its_line_runs_but_not_in_a_comment() {
    let (tmp, db) = with_demo();
    let script = "RETURN 1 AS one; :param x => 6 * 7\n\
                  RETURN $x AS x, // ; :param y => 1\n\
                  2 AS two; /* ; :param z => 1 */\n\
                  :params\n";
    let run = rhizome(tmp.path(), &["shell", path_str(&db)], script);
    run.assert_code(0);
    assert!(run.stdout.contains("| 42 |   2 |"), "{}", run.stdout);
    assert!(run.stdout.contains(":param x => 42"), "{}", run.stdout);
    assert!(!run.stdout.contains(":param y"), "{}", run.stdout);
    assert!(!run.stdout.contains(":param z"), "{}", run.stdout);
}

/// Runs the checks of `:param` forms against `target` (a directory or a URI).
fn param_forms(home: &Path, target: &str, env: &[(&str, &str)]) {
    let script = "\
:param n => 40 + 2
:param names => ['Ada', 'Bob'] + ['Cy']
:param m => {a: $n, b: date('2024-01-31')}
:param j={\"k\": [1, 2.5]}
RETURN $n AS n, size($names) AS s, $m.a AS a, $m.b AS b, $j.k[1] AS k;
:params
";
    let run = rhizome_env(home, &["shell", target], script, env);
    run.assert_code(0);
    assert!(
        run.stdout.contains("| 42 | 3 | 42 | '2024-01-31' | 2.5 |"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(":param n => 42"), "{}", run.stdout);
    let bad = rhizome_env(home, &["shell", target], ":param x => 1 +\n", env);
    bad.assert_code(1);
    assert!(bad.stderr.contains("SyntaxError"), "{}", bad.stderr);
}

#[test]
fn param_takes_a_cypher_expression_after_the_arrow() {
    let (tmp, db) = with_demo();
    param_forms(tmp.path(), path_str(&db), &[]);
}

#[test]
fn shell_prints_json_and_csv() {
    let (tmp, db) = with_demo();
    let script = "RETURN 1 AS a, 'x' AS b;\n";
    let json = rhizome(
        tmp.path(),
        &["shell", path_str(&db), "--format", "json"],
        script,
    );
    json.assert_code(0);
    assert_eq!(json.stdout, "{\"a\":1,\"b\":\"x\"}\n");
    let csv = rhizome(
        tmp.path(),
        &["shell", path_str(&db), "--format", "csv"],
        script,
    );
    csv.assert_code(0);
    assert_eq!(csv.stdout, "a,b\n1,x\n");
}

/// A `rhizome serve` child on a free loopback port; killed when dropped.
struct Served {
    child: Child,
    address: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(home: &Path, db: &Path, extra: &[&str]) -> Served {
    let address_file = home.join(format!("address-{}", extra.len()));
    let mut args = vec![
        "serve",
        path_str(db),
        "--bolt",
        "127.0.0.1:0",
        "--address-file",
        path_str(&address_file),
    ];
    args.extend_from_slice(extra);
    // A server started before with as many arguments wrote this file.
    let _ = std::fs::remove_file(&address_file);
    let child = command(home, &args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start rhizome serve");
    let mut served = Served {
        child,
        address: String::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(address) = std::fs::read_to_string(&address_file) {
            if !address.is_empty() {
                served.address = format!("bolt://{address}");
                return served;
            }
        }
        if let Ok(Some(status)) = served.child.try_wait() {
            panic!("rhizome serve exited: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("rhizome serve did not start");
}

/// A server without authentication speaking Bolt over TLS with the
/// certificate and key in `cert` and `key`.
fn serve_tls(home: &Path, db: &Path, cert: &Path, key: &Path) -> Served {
    serve(
        home,
        db,
        &[
            "--auth",
            "none",
            "--tls-cert",
            path_str(cert),
            "--tls-key",
            path_str(key),
        ],
    )
}

#[test]
fn the_shell_runs_scripts_against_a_server() {
    let (tmp, db) = with_demo();
    let served = serve(tmp.path(), &db, &["--auth", "none"]);
    let uri = served.address.as_str();
    let script = "\
MATCH (m:Movie {title: 'The Matrix'}) RETURN m.released AS year;
MATCH (p:Person)-[r:ACTED_IN]->(m:Movie {title: 'The Matrix'}) RETURN p, r LIMIT 1;
:begin
CREATE (:Remote {v: 1});
MATCH (r:Remote) RETURN count(r) AS inside;
:rollback
MATCH (r:Remote) RETURN count(r) AS after_rollback;
BEGIN;
CREATE (:Remote {v: 2});
COMMIT;
MATCH (r:Remote) RETURN r.v AS v;
RETURN nope(;
RETURN 'still here' AS s;
";
    let run = rhizome(tmp.path(), &["shell", uri], script);
    run.assert_code(1);
    let out = &run.stdout;
    assert!(out.contains("| 1999 |"), "{out}");
    assert!(
        out.contains("(:Person:Actor {born: "),
        "entities print as locally: {out}"
    );
    assert!(out.contains("[:ACTED_IN"), "{out}");
    assert!(
        out.contains("0 rows, 1 node created, 1 property set, 1 label added, elapsed "),
        "{out}"
    );
    assert!(
        out.contains("Transaction started.") && out.contains("Rolled back."),
        "{out}"
    );
    assert!(
        out.contains("| after_rollback |\n+----------------+\n|              0 |"),
        "{out}"
    );
    assert!(out.contains("Committed."), "{out}");
    assert!(out.contains("| v |\n+---+\n| 2 |"), "{out}");
    assert!(out.contains("'still here'"), "{out}");
    assert!(run.stderr.contains("SyntaxError"), "{}", run.stderr);
    // Footers keep their form: `N rows, elapsed X ms`.
    assert!(
        out.lines()
            .any(|l| l.starts_with("1 row, elapsed ") && l.ends_with(" ms")),
        "{out}"
    );
    param_forms(tmp.path(), uri, &[]);
    let json = rhizome(
        tmp.path(),
        &["shell", uri, "--format", "json"],
        "RETURN 1 AS a;\n",
    );
    json.assert_code(0);
    assert_eq!(json.stdout, "{\"a\":1}\n");
}

#[test]
fn the_shell_logs_in_with_a_password_from_the_environment() {
    let (tmp, db) = with_demo();
    let served = serve(tmp.path(), &db, &["--initial-password", "s3cret"]);
    let uri = served.address.as_str();
    let ok = rhizome_env(
        tmp.path(),
        &["shell", uri, "-u", "neo4j"],
        "RETURN 1 AS one;\n",
        &[("RHIZOME_PASSWORD", "s3cret")],
    );
    ok.assert_code(0);
    assert!(ok.stdout.contains("| one |"), "{}", ok.stdout);
    let neo4j_var = rhizome_env(
        tmp.path(),
        &["shell", uri, "-u", "neo4j"],
        "RETURN 2 AS two;\n",
        &[("NEO4J_PASSWORD", "s3cret")],
    );
    neo4j_var.assert_code(0);
    let wrong = rhizome_env(
        tmp.path(),
        &["shell", uri, "-u", "neo4j"],
        "RETURN 1;\n",
        &[("RHIZOME_PASSWORD", "wrong")],
    );
    wrong.assert_code(1);
    assert!(wrong.stderr.contains("Unauthorized"), "{}", wrong.stderr);
    // No password and no terminal to ask on: told how to give one.
    let missing = rhizome(tmp.path(), &["shell", uri, "-u", "neo4j"], "RETURN 1;\n");
    missing.assert_code(1);
    assert!(
        missing.stderr.contains("RHIZOME_PASSWORD"),
        "{}",
        missing.stderr
    );
}

/// Without a password in the environment, `-u USER` asks for it on the
/// terminal with echo off. The shell runs on a pseudo-terminal made by
/// `script` (util-linux, in every Debian); the password is typed once the
/// prompt is shown, and never appears in what the terminal shows.
#[test]
fn the_shell_asks_for_the_password_on_the_terminal_without_echo() {
    use std::io::Read;
    let (tmp, db) = with_demo();
    let password = "pty-s3cret-pw";
    let served = serve(tmp.path(), &db, &["--initial-password", password]);
    let shell = format!(
        "{} shell {} -u neo4j",
        env!("CARGO_BIN_EXE_rhizome"),
        served.address
    );
    let mut child = Command::new("script")
        .args(["-qec", &shell, "/dev/null"])
        .env("XDG_DATA_HOME", tmp.path().join("data"))
        .env("RHIZOME_HISTORY", "")
        .env_remove("RHIZOME_PASSWORD")
        .env_remove("NEO4J_PASSWORD")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run `script` (util-linux)");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let shown = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let shown = shown.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                shown
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        })
    };
    let wait_for = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !shown.lock().unwrap().contains(what) {
            assert!(
                Instant::now() < deadline,
                "no `{what}` on the terminal: {}",
                shown.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for("Password for neo4j: ");
    stdin.write_all(format!("{password}\n").as_bytes()).unwrap();
    stdin.flush().unwrap();
    wait_for("rhizome> ");
    stdin.write_all(b"RETURN 40 + 2 AS answer;\n").unwrap();
    stdin.flush().unwrap();
    wait_for("1 row, elapsed ");
    stdin.write_all(b":quit\n").unwrap();
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the shell did not quit");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    reader.join().unwrap();
    let shown = shown.lock().unwrap().clone();
    assert!(shown.contains("|     42 |"), "{shown}");
    assert!(
        !shown.contains(password),
        "the password was echoed: {shown}"
    );
}

#[test]
fn admin_sets_and_resets_passwords_only_while_no_server_runs() {
    let (tmp, db) = with_demo();
    let dir = path_str(&db);
    rhizome(
        tmp.path(),
        &["admin", "set-initial-password", dir, "first"],
        "",
    )
    .assert_code(0);
    let again = rhizome(
        tmp.path(),
        &["admin", "set-initial-password", dir, "other"],
        "",
    );
    again.assert_code(1);
    assert!(
        again.stderr.contains("has users already"),
        "{}",
        again.stderr
    );
    let nobody = rhizome(
        tmp.path(),
        &["admin", "set-password", dir, "nobody", "x"],
        "",
    );
    nobody.assert_code(1);
    assert!(
        nobody.stderr.contains("no user `nobody`"),
        "{}",
        nobody.stderr
    );
    {
        // The server holds the users: a reset now would be overwritten.
        let served = serve(tmp.path(), &db, &[]);
        let busy = rhizome(
            tmp.path(),
            &["admin", "set-password", dir, "neo4j", "x"],
            "",
        );
        busy.assert_code(1);
        assert!(busy.stderr.contains("running server"), "{}", busy.stderr);
        let login = |pw: &str| {
            rhizome_env(
                tmp.path(),
                &["shell", served.address.as_str(), "-u", "neo4j"],
                "RETURN 1 AS one;\n",
                &[("RHIZOME_PASSWORD", pw)],
            )
        };
        login("first").assert_code(0);
    }
    // The lost password reset from the environment, with the server stopped.
    rhizome_env(
        tmp.path(),
        &["admin", "set-password", dir, "neo4j"],
        "",
        &[("RHIZOME_PASSWORD", "second")],
    )
    .assert_code(0);
    let served = serve(tmp.path(), &db, &[]);
    let login = |pw: &str| {
        rhizome_env(
            tmp.path(),
            &["shell", served.address.as_str(), "-u", "neo4j"],
            "RETURN 1 AS one;\n",
            &[("RHIZOME_PASSWORD", pw)],
        )
    };
    login("first").assert_code(1);
    let ok = login("second");
    ok.assert_code(0);
    assert!(ok.stdout.contains("| one |"), "{}", ok.stdout);
    let missing = tmp.path().join("nowhere");
    let none = rhizome(
        tmp.path(),
        &["admin", "set-password", path_str(&missing), "neo4j", "x"],
        "",
    );
    none.assert_code(1);
    assert!(none.stderr.contains("no database at"), "{}", none.stderr);
}

/// Runs `rhizome serve` with `args`, which must make it refuse to start:
/// it exits (within 30 s) with code 1; its standard error.
fn serve_refused(home: &Path, args: &[&str]) -> String {
    let mut child = command(home, args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rhizome serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("rhizome serve {args:?} started instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    stderr
}

#[test]
fn serve_refuses_unsafe_settings_and_the_database_stays_readable() {
    let (tmp, db) = with_demo();
    let dir = path_str(&db);
    // No users and no initial password: no default password, no start.
    let no_users = serve_refused(tmp.path(), &["serve", dir, "--bolt", "127.0.0.1:0"]);
    assert!(no_users.contains("no users yet"), "{no_users}");
    assert!(no_users.contains("--initial-password"), "{no_users}");
    // No authentication off loopback.
    let open = serve_refused(
        tmp.path(),
        &["serve", dir, "--auth", "none", "--bolt", "0.0.0.0:0"],
    );
    assert!(open.contains("loopback"), "{open}");
    // While a server holds the database, the command line still reads it,
    // and sees what clients of the server committed.
    let served = serve(tmp.path(), &db, &["--auth", "none"]);
    rhizome(
        tmp.path(),
        &["shell", served.address.as_str()],
        "CREATE (:ServedWrite {k: 1});\n",
    )
    .assert_code(0);
    let read = rhizome(
        tmp.path(),
        &["query", dir, "MATCH (n:ServedWrite) RETURN count(n) AS c"],
        "",
    );
    read.assert_code(0);
    assert!(read.stdout.contains("| 1 |"), "{}", read.stdout);
}

#[test]
fn a_server_that_is_not_there_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let run = rhizome(
        tmp.path(),
        &["shell", &format!("bolt://{address}")],
        "RETURN 1;\n",
    );
    run.assert_code(1);
    assert!(run.stderr.contains(&address.to_string()), "{}", run.stderr);
    let tls = rhizome(tmp.path(), &["shell", "bolt+s://127.0.0.1:1"], "");
    tls.assert_code(1);
    assert!(tls.stderr.contains("127.0.0.1:1"), "{}", tls.stderr);
    let scheme = rhizome(tmp.path(), &["shell", "bolt+tls://127.0.0.1:1"], "");
    scheme.assert_code(1);
    assert!(scheme.stderr.contains("+ssc"), "{}", scheme.stderr);
}

/// The `host:port` of a served database.
fn host_port(served: &Served) -> &str {
    served.address.trim_start_matches("bolt://")
}

#[test]
fn the_shell_speaks_tls_verified_with_a_ca_or_unverified_with_ssc() {
    let (tmp, db) = with_demo();
    let generated =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert = tmp.path().join("cert.pem");
    let key = tmp.path().join("key.pem");
    std::fs::write(&cert, generated.cert.pem()).unwrap();
    std::fs::write(&key, generated.signing_key.serialize_pem()).unwrap();
    let served = serve_tls(tmp.path(), &db, &cert, &key);
    let port = host_port(&served).rsplit_once(':').unwrap().1.to_string();
    let query = "MATCH (m:Movie {title: 'The Matrix'}) RETURN m.released AS year;
";
    // Verified against the CA given on the command line or in the environment.
    for (uri, args, env) in [
        (
            format!("bolt+s://127.0.0.1:{port}"),
            vec!["--tls-ca", path_str(&cert)],
            vec![],
        ),
        (
            format!("neo4j+s://localhost:{port}"),
            vec![],
            vec![("RHIZOME_TLS_CA", path_str(&cert))],
        ),
        // Encrypted without verification: no CA needed.
        (format!("bolt+ssc://localhost:{port}"), vec![], vec![]),
        (format!("neo4j+ssc://127.0.0.1:{port}"), vec![], vec![]),
    ] {
        let mut all = vec!["shell", uri.as_str()];
        all.extend(args);
        let run = rhizome_env(tmp.path(), &all, query, &env);
        run.assert_code(0);
        assert!(run.stdout.contains("| 1999 |"), "{uri}: {}", run.stdout);
    }
    // Without the CA the self-signed certificate is refused, saying what to do.
    let refused = rhizome(
        tmp.path(),
        &["shell", &format!("bolt+s://127.0.0.1:{port}")],
        query,
    );
    refused.assert_code(1);
    assert!(
        refused.stderr.contains("--tls-ca") && refused.stderr.contains("bolt+ssc://"),
        "{}",
        refused.stderr
    );
    // A CA that did not sign it is refused too; a file that is no CA is named.
    let other = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let other_ca = tmp.path().join("other.pem");
    std::fs::write(&other_ca, other.cert.pem()).unwrap();
    let wrong = rhizome(
        tmp.path(),
        &[
            "shell",
            &format!("bolt+s://localhost:{port}"),
            "--tls-ca",
            path_str(&other_ca),
        ],
        query,
    );
    wrong.assert_code(1);
    assert!(wrong.stderr.contains("not trusted"), "{}", wrong.stderr);
    let not_pem = rhizome(
        tmp.path(),
        &[
            "shell",
            &format!("bolt+s://localhost:{port}"),
            "--tls-ca",
            path_str(&key),
        ],
        query,
    );
    not_pem.assert_code(1);
    assert!(not_pem.stderr.contains("key.pem"), "{}", not_pem.stderr);
    // Plain Bolt to a TLS port fails (and does not hang).
    let plain = rhizome(tmp.path(), &["shell", &served.address], query);
    plain.assert_code(1);
    drop(served);

    // A self-signed certificate marked as a CA (as `openssl req -x509`
    // makes them), trusted by naming it: accepted as it is.
    let mut params =
        rcgen::CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let key_pair = rcgen::KeyPair::generate().unwrap();
    let ca_like = params.self_signed(&key_pair).unwrap();
    std::fs::write(&cert, ca_like.pem()).unwrap();
    std::fs::write(&key, key_pair.serialize_pem()).unwrap();
    let served = serve_tls(tmp.path(), &db, &cert, &key);
    let port = host_port(&served).rsplit_once(':').unwrap().1.to_string();
    let pinned = rhizome(
        tmp.path(),
        &[
            "shell",
            &format!("bolt+s://localhost:{port}"),
            "--tls-ca",
            path_str(&cert),
        ],
        "UNWIND range(1, 100000) AS i RETURN count(*) AS n;\n",
    );
    pinned.assert_code(0);
    assert!(pinned.stdout.contains("| 100000 |"), "{}", pinned.stdout);
}

/// `text` with PROFILE's times, morsel and worker counts (which vary from
/// run to run, rows do not) and the footer's elapsed time cut off.
fn without_times(text: &str) -> String {
    text.lines()
        .map(|line| {
            let line = line.find(" time=").map_or(line, |at| &line[..at]);
            line.find("elapsed ").map_or(line, |at| &line[..at])
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn explain_and_profile_print_the_same_plans_over_bolt() {
    let (tmp, db) = with_demo();
    let script = "\
EXPLAIN MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE m.released > 1990 RETURN p.name, count(*) AS n ORDER BY n DESC LIMIT 3;
PROFILE MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE m.released > 1990 RETURN p.name, count(*) AS n ORDER BY n DESC, p.name LIMIT 3;
PROFILE MATCH (p:Person) SET p.k = COUNT { (p)-[:ACTED_IN]->(m) WHERE m.released > 1990 };
";
    let local = rhizome(tmp.path(), &["shell", path_str(&db)], script);
    // A plan nested in an updating operator is listed with its own counters.
    let nested = local
        .stdout
        .lines()
        .find(|l| l.contains("[COUNT subquery]"))
        .unwrap_or_else(|| panic!("{}", local.stdout));
    assert!(!nested.contains(" rows=0 "), "{}", local.stdout);
    local.assert_code(0);
    assert!(local.stdout.contains("[est. "), "{}", local.stdout);
    assert!(
        local.stdout.contains("Columns: p.name, n"),
        "{}",
        local.stdout
    );
    assert!(local.stdout.contains(" rows=") && local.stdout.contains(" workers="));
    let served = serve(tmp.path(), &db, &["--auth", "none"]);
    let remote = rhizome(tmp.path(), &["shell", &served.address], script);
    remote.assert_code(0);
    assert!(
        remote.stdout.contains(" morsels=") && remote.stdout.contains(" workers="),
        "{}",
        remote.stdout
    );
    // Rows, plan tree, estimates, rules, PROFILE's rows and morsels: the same.
    // Only times (and how the work was split into morsels) differ.
    assert_eq!(
        without_times(&remote.stdout),
        without_times(&local.stdout),
        "remote:\n{}\nlocal:\n{}",
        remote.stdout,
        local.stdout
    );
}

#[test]
fn ctrl_c_cancels_a_remote_statement_and_the_shell_goes_on() {
    use std::io::BufRead;
    let (tmp, db) = with_demo();
    let served = serve(tmp.path(), &db, &["--auth", "none"]);
    let mut child = command(tmp.path(), &["shell", &served.address])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rhizome");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let wait_for = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match received.recv_timeout(left) {
                Ok(line) if line.contains(what) => return,
                Ok(_) => {}
                Err(e) => panic!("no `{what}` from the shell: {e}"),
            }
        }
    };
    // Connected and Ctrl-C handling armed once a statement ran.
    stdin.write_all(b"RETURN 'ready' AS r;\n").unwrap();
    stdin.flush().unwrap();
    wait_for("'ready'");
    for statement in [
        // Autocommit, then inside an explicit transaction.
        "UNWIND range(1, 100000000) AS i WITH i WHERE i < 0 RETURN count(*);\n",
        "BEGIN;\nCREATE (:Cancelled);\nUNWIND range(1, 100000000) AS i WITH i WHERE i < 0 RETURN count(*);\n",
    ] {
        stdin.write_all(statement.as_bytes()).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        let interrupted = Instant::now();
        let status = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        stdin.write_all(b"RETURN 'next' AS n;\n").unwrap();
        stdin.flush().unwrap();
        wait_for("'next'");
        assert!(
            interrupted.elapsed() < Duration::from_secs(20),
            "the statement ran on: {:?}",
            interrupted.elapsed()
        );
    }
    stdin
        .write_all(b"MATCH (c:Cancelled) RETURN count(c) AS rolled_back;\n")
        .unwrap();
    drop(stdin);
    let mut rest = Vec::new();
    while let Ok(line) = received.recv_timeout(Duration::from_secs(60)) {
        rest.push(line);
    }
    reader.join().unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Failures were reported: the exit code says so.
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.matches("the statement was cancelled").count(),
        2,
        "{stderr}"
    );
    assert!(
        stderr.contains("the open transaction was rolled back"),
        "{stderr}"
    );
    let rest = rest.join("\n");
    assert!(
        rest.contains("| rolled_back |") && rest.contains("|           0 |"),
        "the CREATE was rolled back: {rest}"
    );
}

#[test]
fn schema_and_stats_show_the_same_over_bolt() {
    let (tmp, db) = with_demo();
    rhizome(
        tmp.path(),
        &["shell", path_str(&db)],
        "CREATE INDEX FOR (p:Person) ON (p.name);\n\
         CREATE CONSTRAINT movie_title FOR (m:Movie) REQUIRE m.title IS UNIQUE;\n",
    )
    .assert_code(0);
    let local = rhizome(tmp.path(), &["shell", path_str(&db)], ":schema\n:stats\n");
    local.assert_code(0);
    for expected in [
        "(:Person)-[:ACTED_IN]->(:Movie) 54",
        "Indexes (2):",
        "| index_Person_name | RANGE | NODE",
        "Constraints (1):",
        "| movie_title | UNIQUENESS | NODE",
        "indexes:        2",
        "| :FOLLOWS  |            48 |      2.5 |       6 |",
    ] {
        assert!(
            local.stdout.contains(expected),
            "{expected}: {}",
            local.stdout
        );
    }
    let served = serve(tmp.path(), &db, &["--auth", "none"]);
    let remote = rhizome(tmp.path(), &["shell", &served.address], ":schema\n:stats\n");
    remote.assert_code(0);
    // Everything but where the database is.
    let without_location = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with("database:"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        without_location(&remote.stdout),
        without_location(&local.stdout)
    );
    assert!(
        remote
            .stdout
            .contains(&format!("database:       {}", served.address)),
        "{}",
        remote.stdout
    );
}

/// The remote shell's clock stops at the statement's last answer, and the
/// server sends that answer only once the commit is durable: so the time
/// the shell prints includes the commit. Shown by killing the server with
/// SIGKILL the moment the shell has exited: every write it printed a
/// footer (or `Committed.`) for is in the database when it is reopened.
#[test]
fn a_remote_write_is_answered_after_its_commit_is_durable() {
    let (tmp, db) = with_demo();
    let mut served = serve(tmp.path(), &db, &["--auth", "none"]);
    // Large records: their commit (log write and sync) takes tens of
    // milliseconds, far longer than killing the server takes. The
    // autocommit write comes last, so nothing after it waits for its
    // commit (a later statement would wait for the writer lock).
    let script = "\
BEGIN;
UNWIND range(1, 20000) AS i CREATE (:InTx {i: i, text: 'a value the log has to hold'});
COMMIT;
UNWIND range(1, 20000) AS i CREATE (:Logged {i: i, text: 'a value the log has to hold'});
";
    let run = rhizome(tmp.path(), &["shell", &served.address], script);
    run.assert_code(0);
    served.child.kill().expect("SIGKILL the server");
    served.child.wait().unwrap();
    let footer = run
        .stdout
        .lines()
        .find(|l| l.contains("20000 nodes created"))
        .unwrap_or_else(|| panic!("no footer for the write: {}", run.stdout));
    assert!(
        footer.contains(", elapsed ") && footer.ends_with(" ms"),
        "{footer}"
    );
    assert!(run.stdout.contains("Committed."), "{}", run.stdout);
    let counted = rhizome(
        tmp.path(),
        &["shell", path_str(&db), "--format", "json"],
        "MATCH (n:Logged) RETURN count(n) AS auto;\nMATCH (n:InTx) RETURN count(n) AS explicit;\n",
    );
    counted.assert_code(0);
    assert_eq!(
        counted.stdout, "{\"auto\":20000}\n{\"explicit\":20000}\n",
        "{}",
        counted.stderr
    );
}
