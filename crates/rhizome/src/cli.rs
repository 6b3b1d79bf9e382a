//! The command-line grammar of `rhizome` (clap derive). Parsing only: each
//! subcommand's behaviour lives in its module under `commands`.

use crate::format::OutputFormat;
use crate::params::parse_param;
use clap::{Args, Parser, Subcommand, ValueEnum};
use rhizome_common::Value;
use rhizome_import::InputGroup;
use std::path::PathBuf;

/// Rhizome: a graph database that speaks Cypher.
#[derive(Debug, Parser)]
#[command(
    name = "rhizome",
    version,
    about = "Rhizome: a graph database that speaks Cypher",
    after_help = "Exit codes: 0 success; 1 query, import or database error; 2 usage error.\n\
                  Try `rhizome demo` for a ready-made example graph. Guide: docs/cli.md"
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Bulk-import CSV files (neo4j-admin format) into a new database.
    Import(ImportArgs),
    /// Import a DIMACS road network (.gr arcs, .co coordinates) into a new database.
    ImportDimacs(crate::commands::import_dimacs::ImportDimacsArgs),
    /// Run one Cypher statement and print its result.
    Query(QueryArgs),
    /// Open an interactive Cypher shell (reads statements from stdin when piped).
    Shell(ShellArgs),
    /// Create a small example graph (if absent) and open the shell on it.
    Demo(DemoArgs),
    /// Write synthetic CSV datasets for import.
    #[command(subcommand)]
    Generate(GenerateCommand),
    /// Run benchmarks.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run the openCypher TCK (Gherkin features) and report what passes.
    Tck(TckArgs),
    /// Serve a database over Bolt to the Neo4j drivers and tools.
    Serve(Box<crate::commands::serve::ServeArgs>),
    /// Verify a database's integrity (adjacency both ways, columns, indexes,
    /// constraints, the write-ahead log) and report problems.
    Check(CheckArgs),
    /// Copy a database consistently while other processes read and write it.
    Backup(BackupArgs),
    /// Convert a database written in an older on-disk format (1 or 2) to
    /// the current one, crash-safely (nothing to do for a current one).
    Upgrade(UpgradeArgs),
    /// Manage a database's users while no server runs on it.
    #[command(subcommand)]
    Admin(AdminCommand),
}

/// `rhizome admin <command>`: user administration without a server (a
/// running server refuses it; use Cypher's user commands over a
/// connection instead).
#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create the administrator `neo4j` with PASSWORD, if the database has
    /// no users yet (as `rhizome serve --initial-password`).
    SetInitialPassword(AdminPasswordArgs),
    /// Reset the password of an existing user (a lost password).
    SetPassword(AdminUserPasswordArgs),
}

/// `rhizome admin set-initial-password <DB_DIR> [PASSWORD]`.
#[derive(Debug, Args)]
pub struct AdminPasswordArgs {
    /// The database directory.
    pub db_dir: PathBuf,
    /// The password; else $RHIZOME_PASSWORD or $NEO4J_PASSWORD, else asked
    /// for on the terminal.
    pub password: Option<String>,
}

/// `rhizome admin set-password <DB_DIR> <USER> [PASSWORD]`.
#[derive(Debug, Args)]
pub struct AdminUserPasswordArgs {
    /// The database directory.
    pub db_dir: PathBuf,
    /// The user whose password is reset.
    pub user: String,
    /// The password; else $RHIZOME_PASSWORD or $NEO4J_PASSWORD, else asked
    /// for on the terminal.
    pub password: Option<String>,
    /// Make the user change the password at the next login.
    #[arg(long)]
    pub change_required: bool,
}

/// `rhizome backup <DB_DIR> <DEST>`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The database directory.
    pub db_dir: PathBuf,
    /// Where to write the copy (a new or empty directory).
    pub dest: PathBuf,
}

/// `rhizome upgrade <DB_DIR>`.
#[derive(Debug, Args)]
pub struct UpgradeArgs {
    /// The database directory.
    pub db_dir: PathBuf,
    /// Wait at most SECONDS for a writer or checkpoint of another process,
    /// then fail with TransientError (LockAcquisitionTimeout).
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub lock_timeout: Option<std::time::Duration>,
}

/// How `query` and `shell` open the database (shared by other processes).
#[derive(Debug, Args, Clone, Default)]
pub struct OpenArgs {
    /// Wait at most SECONDS for the writer lock held by another transaction
    /// or process, then fail with TransientError (LockAcquisitionTimeout).
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub lock_timeout: Option<std::time::Duration>,
    /// Roll back a write transaction open longer than SECONDS (releasing the lock).
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub transaction_timeout: Option<std::time::Duration>,
    /// Open read-only: never take the writer lock, never write a file.
    #[arg(long)]
    pub read_only: bool,
}

/// `rhizome check <DB_DIR>`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The database directory.
    pub db_dir: PathBuf,
}

/// `rhizome tck [DIR]`.
#[derive(Debug, Args)]
pub struct TckArgs {
    /// The features directory (default: $RHIZOME_TCK_FEATURES, else
    /// ../shared/tck/features from the repository root).
    pub dir: Option<PathBuf>,
    /// Only scenarios whose feature path or name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
}

/// `--threads N`: worker threads, at least 1.
fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{e}")),
    }
}

/// A timeout in seconds (fractions allowed), greater than 0.
fn parse_timeout(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if !(secs > 0.0 && secs.is_finite()) {
        return Err("must be a positive number of seconds".into());
    }
    std::time::Duration::try_from_secs_f64(secs).map_err(|e| e.to_string())
}

/// A CSV control character: one ASCII character, or `TAB` / `\t`.
fn parse_delimiter(s: &str) -> Result<u8, String> {
    rhizome_import::parse_delimiter(s).map_err(|e| e.message)
}

/// A `--nodes` / `--relationships` value.
fn parse_group(s: &str) -> Result<InputGroup, String> {
    InputGroup::parse(s).map_err(|e| e.message)
}

/// How node ids in the CSV files are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IdTypeArg {
    /// Ids are arbitrary strings.
    String,
    /// Ids are 64-bit integers.
    Integer,
}

/// `rhizome import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Directory of the database to create.
    #[arg(value_name = "DB_DIR")]
    pub db_dir: PathBuf,
    /// Node files: `[<Label>[:<Label>...]=]<file>[,<file>...]`; the first file
    /// may hold only the header. Repeatable.
    #[arg(long, value_name = "[LABELS=]FILES", value_parser = parse_group)]
    pub nodes: Vec<InputGroup>,
    /// Relationship files: `[<TYPE>=]<file>[,<file>...]`. Repeatable.
    #[arg(long, value_name = "[TYPE=]FILES", value_parser = parse_group)]
    pub relationships: Vec<InputGroup>,
    /// How `:ID` values are read.
    #[arg(long, value_enum, default_value_t = IdTypeArg::String)]
    pub id_type: IdTypeArg,
    /// Treat empty strings as missing values.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false")]
    pub ignore_empty_strings: bool,
    /// Field delimiter (a character or TAB).
    #[arg(long, value_parser = parse_delimiter, default_value = ",")]
    pub delimiter: u8,
    /// Delimiter of array values inside a field.
    #[arg(long, value_parser = parse_delimiter, default_value = ";")]
    pub array_delimiter: u8,
    /// Quote character.
    #[arg(long, value_parser = parse_delimiter, default_value = "\"")]
    pub quote: u8,
    /// Skip relationships whose start or end node does not exist (instead of failing).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false")]
    pub skip_bad_relationships: bool,
    /// Skip nodes whose id was seen before (instead of failing).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false")]
    pub skip_duplicate_nodes: bool,
    /// Replace an existing database in DB_DIR.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", default_value = "false")]
    pub overwrite_destination: bool,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
}

/// `rhizome query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// Directory of the database.
    #[arg(value_name = "DB_DIR")]
    pub db_dir: PathBuf,
    /// The Cypher statement.
    #[arg(
        value_name = "QUERY",
        required_unless_present = "file",
        conflicts_with = "file"
    )]
    pub query: Option<String>,
    /// Read the statement from FILE (`-` for standard input).
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// A query parameter `NAME=JSON`, used as `$NAME` (repeatable), e.g.
    /// `--param name='"Ada"' --param ids='[1,2]'`.
    #[arg(long = "param", value_name = "NAME=JSON", value_parser = parse_param)]
    pub params: Vec<(String, Value)>,
    #[command(flatten)]
    pub exec: ExecArgs,
    #[command(flatten)]
    pub open: OpenArgs,
}

/// Options of query execution shared by `query`, `shell` and `demo`.
#[derive(Debug, Args, Clone)]
pub struct ExecArgs {
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Cancel a statement after SECONDS (fractions allowed).
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub timeout: Option<std::time::Duration>,
    /// Most memory one statement's sorts, aggregations, joins and lists
    /// may hold, e.g. 512MiB or 2GB (default: half the memory); over it the
    /// statement fails with a clear error.
    #[arg(long, value_name = "SIZE", value_parser = rhizome_common::memory::parse_size)]
    pub memory_limit: Option<usize>,
}

/// `rhizome shell`.
#[derive(Debug, Args)]
pub struct ShellArgs {
    /// Directory of the database, or a server's `bolt://HOST:PORT` URI.
    #[arg(value_name = "DB_DIR|bolt://HOST:PORT")]
    pub db_dir: PathBuf,
    /// The user to log in as on a server (the password comes from
    /// $RHIZOME_PASSWORD or $NEO4J_PASSWORD, else it is asked for).
    #[arg(short = 'u', long = "user", value_name = "USER")]
    pub user: Option<String>,
    /// For `bolt+s://` / `neo4j+s://`: a PEM file of certificates to trust
    /// besides the system's (a private CA, or the server's self-signed
    /// certificate); default $RHIZOME_TLS_CA.
    #[arg(long = "tls-ca", value_name = "FILE")]
    pub tls_ca: Option<std::path::PathBuf>,
    /// Output format of results.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub exec: ExecArgs,
    #[command(flatten)]
    pub open: OpenArgs,
}

/// `rhizome demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to keep the demo database (default: $XDG_DATA_HOME/rhizome/demo,
    /// or ~/.local/share/rhizome/demo).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Rebuild the demo database even if it exists.
    #[arg(long)]
    pub reset: bool,
    #[command(flatten)]
    pub exec: ExecArgs,
}

/// `rhizome generate <dataset>`.
#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// Persons who like items: (:Person)-[:LIKES]->(:Item).
    Likes(GenerateLikesArgs),
    /// A chain of nodes, each linked to the next DEGREE nodes.
    Chain(GenerateChainArgs),
}

/// `rhizome generate likes`.
#[derive(Debug, Args)]
pub struct GenerateLikesArgs {
    /// Directory to write the CSV files to.
    #[arg(value_name = "OUT_DIR")]
    pub out_dir: PathBuf,
    /// Number of persons.
    #[arg(long, default_value_t = 100_000)]
    pub persons: u64,
    /// Number of items.
    #[arg(long, default_value_t = 2_000)]
    pub items: u64,
    /// LIKES relationships per person.
    #[arg(long, default_value_t = 100)]
    pub likes_per_person: u64,
    /// Random seed (same seed, same files).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// `rhizome generate chain`.
#[derive(Debug, Args)]
pub struct GenerateChainArgs {
    /// Directory to write the CSV files to.
    #[arg(value_name = "OUT_DIR")]
    pub out_dir: PathBuf,
    /// Number of nodes.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Relationships per node.
    #[arg(long, default_value_t = 50)]
    pub degree: u64,
}

/// `rhizome bench <target>`.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Bulk import throughput on generated data.
    Import(BenchImportArgs),
    /// The query suite: likes A1–A4 against reference loops, chain SQ1–SQ5.
    Queries(BenchQueriesArgs),
    /// Aggregation on the chain graph (count, filtered count, sum/avg/max,
    /// GROUP BY) beside Kuzu's figures from issue 21; `--only` takes names
    /// (`COUNT,SQ2C,FSUM,GROUP`).
    Aggregate(BenchQueriesArgs),
    /// LDBC SNB Interactive reads IC1–IC14, IS1–IS7 on SF0.1: latency per query.
    Ldbc(BenchLdbcArgs),
    /// Writes: bulk UNWIND CREATE, durable single-row transactions, likes
    /// reads on base + delta against after a checkpoint.
    Writes(BenchWritesArgs),
    /// A* on a road network: native vs PostgreSQL / Redis sources (cold per
    /// prefetcher, hot) vs a PL/pgSQL A*.
    Roads(crate::commands::bench_roads::BenchRoadsArgs),
    /// The Bolt server against in-process: `RETURN 1` round trips (minimal
    /// client, Python driver), small-read throughput with 1/16/64 clients,
    /// streaming 1M rows.
    Server(BenchServerArgs),
    /// Rhizome as a query service (issue 22), through `rhizome serve`:
    /// CQ1–CQ6 latency per $n, isolation of a foreground query from W
    /// background clients, throughput at W = 1 … 32 clients.
    Service(BenchServiceArgs),
}

/// `rhizome bench service`.
#[derive(Debug, Args)]
pub struct BenchServiceArgs {
    /// The LDBC data set (default: `ldbc-sf0.1` under $RHIZOME_DATASETS or a
    /// `shared/datasets` found above the current directory).
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,
    /// The data set's layout.
    #[arg(long, default_value = "sf0.1", value_parser = ["sf0.1", "tiny"])]
    pub layout: String,
    /// A short run: 3 persons, timeout 1 s (20 s at $n >= 10000), one
    /// overhead round, 50 foreground runs, 0.5 s per client count (flags
    /// given explicitly still apply).
    #[arg(long)]
    pub quick: bool,
    /// Parameter persons per CQ (at most 10, the rule's).
    #[arg(long, value_name = "N")]
    pub persons: Option<usize>,
    /// Values of $n (comma-separated) [default: 1,10,100,10000].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub limits: Vec<i64>,
    /// Only these CQs in the latency table (comma-separated, e.g. CQ3,CQ6).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Seconds after which a CQ run is interrupted and counted as timed out
    /// [default: 10, with --quick 1].
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// The same for runs at $n >= 10000 (the full enumerations) and the
    /// overhead runs [default: 60, with --quick 20].
    #[arg(long, value_name = "SECONDS")]
    pub full_timeout: Option<f64>,
    /// Rounds of measurement 1's interleaved overhead runs (CQ1 without
    /// LIMIT, scopes off and each policy) per person; 0 skips them
    /// [default: 2, with --quick 1].
    #[arg(long, value_name = "N")]
    pub overhead_rounds: Option<usize>,
    /// The foreground query of measurement 2 (IC1 … IS7 or CQ1 … CQ6).
    #[arg(long, value_name = "QUERY", default_value = "IC2")]
    pub foreground: String,
    /// Foreground submissions per background level [default: 200, with --quick 50].
    #[arg(long, value_name = "N")]
    pub foreground_runs: Option<usize>,
    /// The heavy background query of measurement 2 (a CQ runs at $n = 10000).
    #[arg(long, value_name = "QUERY", default_value = "CQ4")]
    pub background: String,
    /// The query of measurement 4, with its first parameter set.
    #[arg(long, value_name = "QUERY", default_value = "CQ3")]
    pub throughput_query: String,
    /// Client counts of measurement 4 (comma-separated) [default: 1,2,4,8,16,32].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub clients: Vec<usize>,
    /// Seconds counted at each client count of measurement 4, over all cycles [default: 4, with --quick 1].
    #[arg(long, value_name = "SECONDS")]
    pub seconds: Option<f64>,
    /// Cycles of measurement 4: the client counts take turns this many
    /// times, each with a slice of --seconds [default: 8, with --quick 2].
    #[arg(long, value_name = "N")]
    pub cycles: Option<usize>,
    /// Workers one query may use on the server (default: one per core).
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// The server's `--worker-nice` (default: the server's default, 5).
    #[arg(long, value_name = "N")]
    pub worker_nice: Option<i32>,
    /// Where the imported database is cached (default: $RHIZOME_BENCH_DATA or target/rhizome-bench-data).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

/// `rhizome bench server`.
#[derive(Debug, Args)]
pub struct BenchServerArgs {
    /// Nodes of the graph (the chain graph of degree 1).
    #[arg(long, default_value_t = 1_000_000)]
    pub nodes: u64,
    /// Timed `RETURN 1` round trips.
    #[arg(long, default_value_t = 5_000)]
    pub round_trips: usize,
    /// Seconds at each client count of the throughput test.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    pub seconds: f64,
    /// A Python interpreter with the `neo4j` driver [default:
    /// target/drivers/venv/bin/python of the source tree].
    #[arg(long, value_name = "PYTHON")]
    pub python: Option<PathBuf>,
    /// Where the graph is cached (default: $RHIZOME_BENCH_DATA or target/rhizome-bench-data).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

/// `rhizome bench ldbc`.
#[derive(Debug, Args)]
pub struct BenchLdbcArgs {
    /// A directory of query files named like LDBC's reference implementation
    /// (`interactive-complex-1.cypher` … `interactive-short-7.cypher`) to run
    /// instead of Rhizome's own formulations.
    #[arg(long, value_name = "DIR")]
    pub queries: Option<PathBuf>,
    /// The LDBC data set (default: `ldbc-sf0.1` under $RHIZOME_DATASETS or a
    /// `shared/datasets` found above the current directory).
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,
    /// The data set's layout.
    #[arg(long, default_value = "sf0.1", value_parser = ["sf0.1", "tiny"])]
    pub layout: String,
    /// Parameter sets per query.
    #[arg(long, default_value_t = 5)]
    pub sets: usize,
    /// Timed runs per parameter set (after one warm-up run).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Most workers per query (default: one per core).
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Where the imported database is cached (default: $RHIZOME_BENCH_DATA or target/rhizome-bench-data).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

/// `rhizome bench writes`.
#[derive(Debug, Args)]
pub struct BenchWritesArgs {
    /// Timed rounds per read query and database.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Nodes created by the bulk node phase.
    #[arg(long, default_value_t = 1_000_000)]
    pub rows: usize,
    /// Rows per `$rows` batch (one transaction each).
    #[arg(long, default_value_t = 10_000)]
    pub batch: usize,
    /// Durable single-row transactions (each of the one writer, the 16
    /// writers and the raw sync reference: enough for the group commit to
    /// reach its steady state).
    #[arg(long, default_value_t = 16_000)]
    pub single: usize,
    /// Persons of the base likes graph.
    #[arg(long, default_value_t = 100_000)]
    pub persons: u64,
    /// Items of the base likes graph.
    #[arg(long, default_value_t = 2_000)]
    pub items: u64,
    /// LIKES per person of the base likes graph.
    #[arg(long, default_value_t = 100)]
    pub likes_per_person: u64,
    /// Workers per read query (default: 1, the steadiest on a shared machine; 0 = all).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Print each read query's PROFILE on both databases.
    #[arg(long)]
    pub profile: bool,
    /// Run only these phases (comma-separated: commits, reads, checkpoint,
    /// chain, processes; default: all).
    #[arg(long, value_name = "PHASES", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Nodes of the chain graph of the chain phase.
    #[arg(long, default_value_t = 1_000_000)]
    pub chain_nodes: u64,
    /// Relationships per node of the chain graph of the chain phase.
    #[arg(long, default_value_t = 50)]
    pub chain_degree: u64,
    /// Interleaved rounds of the one-statement process comparison.
    #[arg(long, default_value_t = 11)]
    pub process_runs: usize,
    /// Where generated databases are cached (default: $RHIZOME_BENCH_DATA or target/rhizome-bench-data).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

/// `rhizome bench queries`.
#[derive(Debug, Args)]
pub struct BenchQueriesArgs {
    /// Timed runs per query and worker count, at least (a round times 3 on
    /// one worker and 3 on all, each block after an untimed lead-in run).
    #[arg(long, default_value_t = rhizome_bench::DEFAULT_RUNS)]
    pub runs: usize,
    /// Go on with rounds until this many seconds were spent on the query.
    #[arg(long, value_name = "SECONDS", default_value_t = rhizome_bench::DEFAULT_MIN_SECONDS)]
    pub min_seconds: f64,
    /// Run only the `likes` or only the `chain` queries, or the queries
    /// named in a comma-separated list (`A3,SQ4`).
    #[arg(long, value_name = "likes|chain|NAMES")]
    pub only: Option<String>,
    /// Where generated databases are cached (default: $RHIZOME_BENCH_DATA or target/rhizome-bench-data).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Print each query's PROFILE.
    #[arg(long)]
    pub profile: bool,
}

/// `rhizome bench import`.
#[derive(Debug, Args)]
pub struct BenchImportArgs {
    /// Parsing threads (default: one per core).
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Persons of the generated likes graph.
    #[arg(long, default_value_t = 100_000)]
    pub persons: u64,
    /// Items of the generated likes graph.
    #[arg(long, default_value_t = 2_000)]
    pub items: u64,
    /// LIKES per person of the generated likes graph.
    #[arg(long, default_value_t = 100)]
    pub likes_per_person: u64,
    /// Do not import the generated likes graph.
    #[arg(long)]
    pub skip_likes: bool,
    /// LDBC SF0.1 directory (default: `ldbc-sf0.1` under $RHIZOME_DATASETS or
    /// a `shared/datasets` found above the current directory).
    #[arg(long, value_name = "DIR")]
    pub ldbc: Option<PathBuf>,
    /// Do not import LDBC SF0.1.
    #[arg(long, conflicts_with = "ldbc")]
    pub skip_ldbc: bool,
    /// Keep generated CSV and databases here (default: a temporary directory).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn import_flags_map() {
        let cli = Cli::try_parse_from([
            "rhizome",
            "import",
            "db",
            "--nodes=Person:User=a.csv,b.csv",
            "--nodes",
            "c.csv",
            "--relationships=KNOWS=k.csv",
            "--id-type=integer",
            "--delimiter=TAB",
            "--skip-duplicate-nodes",
            "--skip-bad-relationships=false",
            "--threads",
            "3",
        ])
        .unwrap();
        let Command::Import(args) = cli.command else {
            panic!()
        };
        assert_eq!(
            args.nodes,
            vec![
                InputGroup::new(["Person", "User"], ["a.csv", "b.csv"]),
                InputGroup::new(Vec::<String>::new(), ["c.csv"])
            ]
        );
        assert_eq!(
            args.relationships,
            vec![InputGroup::new(["KNOWS"], ["k.csv"])]
        );
        assert_eq!(args.id_type, IdTypeArg::Integer);
        assert_eq!(args.delimiter, b'\t');
        assert_eq!(args.quote, b'"');
        assert!(args.skip_duplicate_nodes && !args.skip_bad_relationships);
        assert!(!args.ignore_empty_strings && !args.overwrite_destination);
        assert_eq!(args.threads, Some(3));
    }

    #[test]
    fn query_arguments() {
        let cli = Cli::try_parse_from([
            "rhizome",
            "query",
            "db",
            "--format",
            "json",
            "--param",
            "x=[1]",
            "--timeout",
            "0.5",
            "RETURN $x",
        ])
        .unwrap();
        let Command::Query(args) = cli.command else {
            panic!()
        };
        assert_eq!(args.format, OutputFormat::Json);
        assert_eq!(
            args.params,
            vec![("x".into(), Value::List(vec![Value::Int(1)]))]
        );
        assert_eq!(
            args.exec.timeout,
            Some(std::time::Duration::from_millis(500))
        );
        assert_eq!(args.query.as_deref(), Some("RETURN $x"));
        let cli =
            Cli::try_parse_from(["rhizome", "shell", "db", "--memory-limit", "512MiB"]).unwrap();
        let Command::Shell(args) = cli.command else {
            panic!()
        };
        assert_eq!(args.exec.memory_limit, Some(512 << 20));
        for bad in [
            vec![
                "rhizome",
                "query",
                "db",
                "--memory-limit",
                "lots",
                "RETURN 1",
            ],
            vec!["rhizome", "query", "db"],
            vec!["rhizome", "query", "db", "-f", "q.cypher", "RETURN 1"],
            vec!["rhizome", "query", "db", "--format", "xml", "RETURN 1"],
            vec!["rhizome", "query", "db", "--threads", "0", "RETURN 1"],
            vec!["rhizome", "query", "db", "--timeout", "-1", "RETURN 1"],
            vec!["rhizome", "query", "db", "--param", "x=nope", "RETURN 1"],
        ] {
            assert!(Cli::try_parse_from(&bad).is_err(), "{bad:?}");
        }
    }
}
