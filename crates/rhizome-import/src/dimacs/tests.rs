use super::*;
use proptest::prelude::*;

const GR: &str = "c a triangle\np sp 3 4\na 1 2 10\na 2 1 10\r\n\na 2 3 5\na 3 1 7\n";
const CO: &str = "c coordinates\np aux sp co 3\nv 2 6049460 49630320\nv 1 6048930 49630360\nv 3 -1000000 -2000000\n";

#[test]
fn a_small_network_parses() {
    let gr = parse_gr(GR.as_bytes()).unwrap();
    assert_eq!(gr.node_count, 3);
    assert_eq!(gr.sources, vec![1, 2, 2, 3]);
    assert_eq!(gr.targets, vec![2, 1, 3, 1]);
    assert_eq!(gr.lengths, vec![10, 10, 5, 7]);
    let co = parse_co(CO.as_bytes()).unwrap();
    assert_eq!(co.lon, vec![6.04893, 6.04946, -1.0]);
    assert_eq!(co.lat, vec![49.63036, 49.63032, -2.0]);
}

/// The error of parsing `text` with `parse`: (line, column, message).
fn error_of<T: std::fmt::Debug>(parse: fn(&[u8]) -> Result<T>, text: &str) -> (u32, u32, String) {
    let e = parse(text.as_bytes()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InputError, "{e}");
    let p = e.position.unwrap_or_default();
    (p.line, p.column, e.message)
}

#[test]
fn malformed_gr_files_name_the_line_and_the_problem() {
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "p sp 2 1\na 1 3 4\n",
            2,
            5,
            "the arc's target 3 is not a node",
        ),
        (
            "p sp 2 1\na 0 1 4\n",
            2,
            3,
            "the arc's source 0 is not a node",
        ),
        ("p sp 2 1\na 1 2 -4\n", 2, 7, "must not be negative"),
        (
            "p sp 2 1\na 1 2 4.5\n",
            2,
            7,
            "must be an integer, found `4.5`",
        ),
        (
            "p sp 2 1\na 1 2\n",
            2,
            6,
            "line ends where the arc's length was expected",
        ),
        ("p sp 2 1\na 1 2 4 9\n", 2, 9, "unexpected `9`"),
        ("a 1 2 4\n", 1, 1, "an arc before the problem line"),
        (
            "p sp 2 1\np sp 2 1\n",
            2,
            1,
            "a second problem line (the first is on line 1)",
        ),
        ("p sp 2 1\nx 1\n", 2, 1, "unexpected line kind `x`"),
        ("p max 2 1\n", 1, 3, "the problem line must be `p sp N M`"),
        ("p sp -2 1\n", 1, 6, "the node count N must be between 0"),
        (
            "p sp 99999999999 1\n",
            1,
            6,
            "the node count N must be between 0",
        ),
        ("p sp 2 1\na 1 2 3\na 2 1 3\n", 3, 1, "more arcs than the 1"),
        (
            "c\n\np sp 2 1\na 1 2 \u{e9}\n",
            4,
            7,
            "must be an integer, found `é`",
        ),
    ];
    for &(text, line, column, message) in cases {
        let (l, c, m) = error_of(parse_gr, text);
        assert!(m.contains(message), "{text:?}: {m}");
        assert_eq!((l, c), (line, column), "{text:?}: {m}");
    }
    let (_, _, m) = error_of(parse_gr, "p sp 2 3\na 1 2 3\n");
    assert!(m.contains("declares 3 arcs, the file has 1"), "{m}");
    let (_, _, m) = error_of(parse_gr, "c nothing\n");
    assert!(m.contains("no problem line"), "{m}");
    let e = parse_gr(b"p sp 2 1\na 1 \xff 3\n").unwrap_err();
    assert_eq!(e.position.map(|p| (p.line, p.column)), Some((2, 5)));
}

#[test]
fn malformed_co_files_name_the_line_and_the_problem() {
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "p aux sp co 2\nv 3 1 1\n",
            2,
            3,
            "the node id 3 is not a node",
        ),
        (
            "p aux sp co 1\nv 1 181000000 1\n",
            2,
            5,
            "the longitude 181000000",
        ),
        (
            "p aux sp co 1\nv 1 1 -91000000\n",
            2,
            7,
            "the latitude -91000000",
        ),
        (
            "p aux sp co 1\nv 1 1\n",
            2,
            6,
            "line ends where the latitude was expected",
        ),
        (
            "p aux sp 1\n",
            1,
            10,
            "the problem line must be `p aux sp co N`",
        ),
        ("v 1 1 1\n", 1, 1, "a node before the problem line"),
        (
            "p aux sp co 2\nv 1 1 1\nv 1 2 2\nv 2 1 1\n",
            3,
            1,
            "node 1 has coordinates twice (lines 2 and 3)",
        ),
        ("p aux sp co 1\na 1 1 1\n", 2, 1, "`v` (coordinates)"),
    ];
    for &(text, line, column, message) in cases {
        let (l, c, m) = error_of(parse_co, text);
        assert!(m.contains(message), "{text:?}: {m}");
        assert_eq!((l, c), (line, column), "{text:?}: {m}");
    }
    let (_, _, m) = error_of(parse_co, "p aux sp co 3\nv 1 1 1\nv 3 1 1\n");
    assert!(
        m.contains("declares 3 nodes, the file has coordinates for 2; node 2 has none"),
        "{m}"
    );
}

#[test]
fn a_huge_declared_count_allocates_nothing() {
    let gr = parse_gr(b"p sp 2147483648 0\n").unwrap();
    assert_eq!(gr.node_count, MAX_NODES);
    assert!(parse_co(b"p aux sp co 2147483648\n").is_err());
}

/// Text that looks like DIMACS: a mix of valid and broken lines.
fn dimacs_like() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("p".to_string()),
        Just("a".to_string()),
        Just("v".to_string()),
        Just("c".to_string()),
        Just("sp".to_string()),
        Just("aux".to_string()),
        Just("co".to_string()),
        (-5i64..20).prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        "[ -~é\t\r]{0,6}",
    ];
    proptest::collection::vec(proptest::collection::vec(token, 0..6), 0..12)
        .prop_map(|lines| lines.into_iter().map(|l| l.join(" ") + "\n").collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any input parses or fails with a positioned-or-global InputError; never a panic.
    #[test]
    fn parsers_never_panic(text in dimacs_like(), raw in proptest::collection::vec(any::<u8>(), 0..64)) {
        for input in [text.as_bytes(), &raw[..]] {
            for result in [parse_gr(input).map(|_| ()), parse_co(input).map(|_| ())] {
                if let Err(e) = result {
                    prop_assert_eq!(e.kind, ErrorKind::InputError);
                }
            }
        }
    }

    /// Valid files with random content round-trip.
    #[test]
    fn valid_files_round_trip(arcs in proptest::collection::vec((1u32..6, 1u32..6, 0i64..1000), 0..20)) {
        let mut text = format!("c x\np sp 5 {}\n", arcs.len());
        for (u, v, w) in &arcs {
            text += &format!("a {u} {v} {w}\n");
        }
        let gr = parse_gr(text.as_bytes()).unwrap();
        prop_assert_eq!(gr.sources, arcs.iter().map(|a| a.0).collect::<Vec<_>>());
        prop_assert_eq!(gr.lengths, arcs.iter().map(|a| a.2).collect::<Vec<_>>());
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_network_imports_as_junctions_and_roads_with_an_id_index() {
    use rhizome_storage::{Database, Direction, GraphRead};
    let tmp = tempfile::tempdir().unwrap();
    let options = DimacsOptions::new(
        write(tmp.path(), "t.gr", GR),
        Some(write(tmp.path(), "t.co", CO)),
    );
    let db_dir = tmp.path().join("db");
    let report = import_dimacs(&db_dir, &options).unwrap();
    assert_eq!((report.nodes, report.relationships), (3, 4));
    let db = Database::open(&db_dir).unwrap();
    let s = db.snapshot();
    let c = s.catalog();
    let (label, road) = (
        c.labels.id("Junction").unwrap(),
        c.rel_types.id("ROAD").unwrap(),
    );
    let key = |k: &str| c.property_keys.id(k).unwrap();
    let found = s
        .index_seek(label, key("id"), &rhizome_common::Value::Int(3))
        .unwrap();
    assert_eq!(found, vec![2]);
    assert_eq!(
        s.node_property(2, key("lon")),
        rhizome_common::Value::Float(-1.0)
    );
    assert_eq!(
        s.node_property(0, key("lat")),
        rhizome_common::Value::Float(49.63036)
    );
    let adj = s.adjacency(1, road, Direction::Outgoing);
    assert_eq!(adj.neighbours().to_vec(), vec![0, 2]);
    let lengths: Vec<_> = (0..adj.len())
        .map(|i| s.rel_property(adj.rel_id(i), key("distance")))
        .collect();
    assert_eq!(
        lengths,
        vec![
            rhizome_common::Value::Int(10),
            rhizome_common::Value::Int(5)
        ]
    );

    // A second import refuses the occupied destination; a bad file leaves nothing.
    assert_eq!(
        import_dimacs(&db_dir, &options).unwrap_err().kind,
        ErrorKind::ArgumentError
    );
    let bad = DimacsOptions::new(write(tmp.path(), "bad.gr", "p sp 2 1\na 1 9 1\n"), None);
    let e = import_dimacs(&tmp.path().join("db2"), &bad).unwrap_err();
    assert_eq!(
        e.source_name.as_deref(),
        Some(bad.gr.display().to_string().as_str())
    );
    assert_eq!(e.position.map(|p| p.line), Some(2));
    assert!(!tmp.path().join("db2").exists());
    let short_co = DimacsOptions::new(
        write(tmp.path(), "u.gr", GR),
        Some(write(tmp.path(), "u.co", "p aux sp co 1\nv 1 1 1\n")),
    );
    let e = import_dimacs(&tmp.path().join("db3"), &short_co).unwrap_err();
    assert!(e.message.contains("declares 1 nodes"), "{e}");
}

#[test]
fn the_luxembourg_network_imports_whole() {
    let Some(datasets) = crate::bench::find_datasets_dir() else {
        panic!("shared/datasets not found (set RHIZOME_DATASETS)");
    };
    let dir = datasets.join("roads/luxembourg-dimacs10");
    let tmp = tempfile::tempdir().unwrap();
    let options = DimacsOptions::new(dir.join("luxembourg.gr"), Some(dir.join("luxembourg.co")));
    let report = import_dimacs(&tmp.path().join("lux"), &options).unwrap();
    assert_eq!((report.nodes, report.relationships), (114_599, 239_332));
    assert_eq!(report.label_counts, vec![("Junction".to_string(), 114_599)]);
}
