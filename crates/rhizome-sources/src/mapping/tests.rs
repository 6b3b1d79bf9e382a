use super::*;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/sources");

fn no_env(_: &str) -> Option<String> {
    None
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{EXAMPLES}/{name}")).unwrap()
}

#[test]
fn the_examples_parse() {
    let env = |name: &str| (name == "RHIZOME_PG_PORT").then(|| "6000".to_string());
    let pg = Mapping::parse_with_env(&example("roads-postgres.json"), &env).unwrap();
    assert_eq!(pg.backend, Backend::Postgres);
    assert_eq!(pg.connection, "postgresql://rhizome@127.0.0.1:6000/roads");
    assert_eq!(pg.prefetch, Prefetch::Lookahead(4));
    let junction = pg.node_space("Junction").unwrap();
    assert_eq!(junction.coordinates, Some(("lat".into(), "lon".into())));
    assert_eq!(
        pg.rel_space("ROAD").unwrap().property_index("distance"),
        Some(0)
    );
    assert_eq!(
        junction.keys.as_deref(),
        Some("SELECT id FROM luxembourg.junction ORDER BY id")
    );
    let redis = Mapping::parse_with_env(&example("roads-redis.json"), &no_env).unwrap();
    assert_eq!(redis.connection, "redis://127.0.0.1:63799/0");
    assert_eq!(
        redis.node_space("Junction").unwrap().keys.as_deref(),
        Some("luxembourg:junctions")
    );
    assert_eq!(
        redis
            .rel_space("ROAD")
            .unwrap()
            .outgoing
            .as_ref()
            .unwrap()
            .element,
        vec!["neighbour", "id", "distance"]
    );
}

/// Replaces `from` by `to` in the Postgres example and returns the error.
fn error_after(file: &str, from: &str, to: &str) -> Error {
    let text = example(file);
    assert!(text.contains(from), "{from}");
    Mapping::parse_with_env(&text.replacen(from, to, 1), &no_env).unwrap_err()
}

#[test]
fn invalid_mappings_name_the_key() {
    let pg = "roads-postgres.json";
    let redis = "roads-redis.json";
    let cases: &[(&str, &str, &str, &str)] = &[
        (pg, "\"backend\": \"postgres\"", "\"backend\": \"mysql\"", "mapping key `backend`: unknown backend `mysql`"),
        (pg, "rhizome@127", "rhizome:secret@127", "mapping key `connection`: holds a password"),
        (pg, "${RHIZOME_PG_PORT:-54329}", "${RHIZOME_PG_PORT}", "mapping key `connection`: the environment variable RHIZOME_PG_PORT is not set"),
        (pg, "\"id\": \"integer\", \"lat\"", "\"id\": \"int\", \"lat\"", "mapping key `nodes.Junction.properties.id`: unknown type `int`"),
        (pg, "\"key\": \"id\",\n      \"properties\": { \"id\"", "\"key\": \"ident\",\n      \"properties\": { \"id\"", "mapping key `nodes.Junction.key`: `ident` is not one of"),
        (pg, "WHERE id = ANY($1)", "WHERE id = 1", "mapping key `nodes.Junction.fetch`: must use $1"),
        (pg, "\"lat\": \"lat\", \"lon\": \"lon\"", "\"lat\": \"latitude\", \"lon\": \"lon\"", "mapping key `nodes.Junction.coordinates.lat`: `latitude` is not one of"),
        (pg, "\"from\": \"Junction\"", "\"from\": \"Crossing\"", "mapping key `relationships.ROAD.from`: `Crossing` is not a node space of `nodes`"),
        (pg, "\"lookahead\": 4", "\"lookahead\": 40", "mapping key `prefetch.lookahead`: must be an integer depth from 1 to 16"),
        (pg, "\"lookahead\": 4", "\"ellipse\": 0.5", "mapping key `prefetch.ellipse`: must be a stretch from 1 to 10"),
        (pg, "\"lookahead\": 4", "\"ellipse\": 1.4, \"start_weight\": 5", "mapping key `prefetch.start_weight`: must be a weight from 1 to 4"),
        (pg, "\"lookahead\": 4", "\"lookahead\": 4, \"start_weight\": 1.2", "mapping key `prefetch.start_weight`: belongs to the ellipse prefetcher"),
        (pg, "\"lookahead\": 4", "\"ellipse\": 1.4, \"start_weight\": \"x\"", "mapping key `prefetch.start_weight`"),
        (redis, "\"lookahead\": 4", "\"ellipse\": 1.2", "mapping key `prefetch.ellipse`: needs a node space with `coordinates` and an `in_box` template"),
        (pg, "\"ttl_seconds\": 600", "\"ttl_seconds\": -1", "mapping key `cache.ttl_seconds`: must be a positive number"),
        (pg, "\"pool_size\": 4", "\"pool_size\": 0", "mapping key `pool_size`: must be an integer from 1 to 64"),
        (pg, "\"fetch\"", "\"fecth\"", "mapping key `nodes.Junction.fecth`: unknown key"),
        (pg, "\"pool_size\"", "\"pool\"", "unknown top-level key `pool`"),
        (pg, "\"outgoing\": \"SELECT source AS node, target AS neighbour, id, distance FROM luxembourg.road WHERE source = ANY($1)\",\n", "", "mapping key `relationships.ROAD.outgoing_in_box`: needs `outgoing`"),
        (pg, "\"outgoing\": \"SELECT source AS node, target AS neighbour, id, distance FROM luxembourg.road WHERE source = ANY($1)\",\n      \"outgoing_in_box\": \"SELECT source AS node, target AS neighbour, id, distance, source_lat AS lat, source_lon AS lon FROM luxembourg.road WHERE source_band = ANY(ARRAY(SELECT generate_series(floor($1::float8 * 200)::integer, floor($2::float8 * 200)::integer))) AND source_lon BETWEEN $3 AND $4 AND source_lat BETWEEN $1 AND $2\",\n", "", "never"),
        (pg, "source_lon BETWEEN $3 AND $4", "source_lon BETWEEN 3 AND 4", "mapping key `relationships.ROAD.outgoing_in_box`: must use $1..$4"),
        (pg, "\"coordinates\": { \"lat\": \"lat\", \"lon\": \"lon\" },\n", "", "mapping key `relationships.ROAD.outgoing_in_box`: needs `coordinates` and an `in_box` template on `nodes.Junction`"),
        (redis, "\"incoming\"", "\"outgoing_in_box\": \"SELECT 1\",\n      \"incoming\"", "mapping key `relationships.ROAD.outgoing_in_box`: is for PostgreSQL sources only"),
        (redis, "\"luxembourg:junction:{id}\"", "\"luxembourg:junction\"", "mapping key `nodes.Junction.fetch`: must be a key pattern with {id}"),
        (redis, "[\"neighbour\", \"id\", \"distance\"] },\n      \"incoming\"", "[\"neighbour\", \"dist\"] },\n      \"incoming\"", "mapping key `relationships.ROAD.outgoing.element`: `dist` is neither"),
        (redis, "\"keys\": \"luxembourg:junctions\"", "\"keys\": \" \"", "mapping key `nodes.Junction.keys`: must be a non-empty string"),
        (redis, "\"keys\": \"luxembourg:junctions\"", "\"keys\": 3", "mapping key `nodes.Junction.keys`"),
        (redis, "\"redis://", "\"postgresql://", "mapping key `connection`: a Redis source needs a redis:// URL"),
    ];
    for &(file, from, to, message) in cases {
        if message == "never" {
            // Only incoming left: still valid.
            let text = example(file).replacen(from, to, 1);
            Mapping::parse_with_env(&text, &no_env).unwrap();
            continue;
        }
        let e = error_after(file, from, to);
        assert_eq!(e.kind, ErrorKind::InputError, "{e}");
        assert!(e.message.contains(message), "{to}: {e}");
    }
    let e = Mapping::parse_with_env("{\"backend\": ", &no_env).unwrap_err();
    assert!(
        e.message.contains("not valid") && e.position.is_some(),
        "{e}"
    );
}

#[test]
fn the_ldbc_examples_parse() {
    for file in ["ldbc-postgres.json", "ldbc-redis.json"] {
        let m = Mapping::parse_with_env(&example(file), &no_env).unwrap();
        assert_eq!(m.nodes.len(), 11, "{file}");
        assert_eq!(m.node_space("Comment").unwrap().labels, vec!["Message"]);
        let creators: Vec<&str> = m
            .relationships
            .iter()
            .filter(|r| r.rel_type == "HAS_CREATOR")
            .map(|r| r.from.as_str())
            .collect();
        assert_eq!(creators, vec!["Comment", "Post"], "{file}");
        let knows = m.rel_space("KNOWS").unwrap();
        assert_eq!(knows.key, None);
        assert_eq!(knows.property_index("creationDate"), Some(0));
        let person = m.node_space("Person").unwrap();
        let email = person.property_index("email").unwrap();
        assert_eq!(person.properties[email].1, PropertyType::StringList);
    }
}

#[test]
fn spaces_types_labels_and_keys_are_checked() {
    let base = example("ldbc-redis.json");
    let cases: &[(&str, &str, &str)] = &[
        (
            "\"labels\": [\"Message\"],\n      \"properties\": {\"id\": \"integer\", \"creationDate\": \"integer\", \"locationIP\"",
            "\"labels\": [\"Post\"],\n      \"properties\": {\"id\": \"integer\", \"creationDate\": \"integer\", \"locationIP\"",
            "mapping key `nodes.Comment.labels`: `Post` is the label of node space `nodes.Post`",
        ),
        (
            "\"labels\": [\"Message\"],",
            "\"labels\": [\"Message\", \"Message\"],",
            "mapping key `nodes.Comment.labels`: `Message` is listed twice",
        ),
        (
            "\"labels\": [\"Message\"],",
            "\"labels\": [\"\"],",
            "mapping key `nodes.Comment.labels`: must be a list of non-empty label names",
        ),
        (
            "\"labels\": [\"Message\"],",
            "\"labels\": \"Message\",",
            "mapping key `nodes.Comment.labels`: must be a list of strings",
        ),
        (
            "\"from\": \"Comment\",\n      \"to\": \"Person\"",
            "\"from\": \"Message\",\n      \"to\": \"Person\"",
            "mapping key `relationships.commentHasCreator.from`: `Message` is not a node space of `nodes` (it is an extra label of Comment, Post",
        ),
        (
            "\"type\": \"HAS_CREATOR\",\n      \"from\": \"Post\"",
            "\"type\": \"HAS_CREATOR\",\n      \"from\": \"Comment\"",
            "mapping key `relationships.postHasCreator`: maps type `HAS_CREATOR` from `Comment` to `Person` like `relationships.commentHasCreator`",
        ),
        (
            "\"type\": \"HAS_CREATOR\"",
            "\"type\": 7",
            "mapping key `relationships.commentHasCreator.type`: must be a non-empty string",
        ),
        (
            "\"element\": [\"neighbour\", \"creationDate\"]",
            "\"element\": [\"neighbour\", \"id\"]",
            "`id` is neither `neighbour` nor a declared property",
        ),
        (
            "\"speaks\": \"string_list\"",
            "\"speaks\": \"strings\"",
            "mapping key `nodes.Person.properties.speaks`: unknown type `strings`; the types are integer, float, string, boolean, string_list",
        ),
    ];
    for &(from, to, message) in cases {
        assert!(base.contains(from), "{from}");
        let e = Mapping::parse_with_env(&base.replacen(from, to, 1), &no_env).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InputError, "{e}");
        assert!(e.message.contains(message), "{to}: {e}");
    }
    // A space with a key needs it in its list elements; without one it
    // needs none.
    let keyed = base.replacen("\"key\": null", "\"key\": \"id\"", 1);
    let e = Mapping::parse_with_env(&keyed, &no_env).unwrap_err();
    assert!(e.message.contains("has no `id` field"), "{e}");
    let m = Mapping::parse_with_env(&base, &no_env).unwrap();
    assert!(m.relationships.iter().all(|r| r.key.is_none()));
    // Row-number keys are for relationship spaces; a node space needs a key.
    let places = example("places-postgres.json");
    assert!(
        places.contains("\"BUS\": {\n      \"from\": \"Place\", \"to\": \"Place\", \"key\": null,")
    );
    let m = Mapping::parse_with_env(&places, &no_env).unwrap();
    assert_eq!(m.rel_space("BUS").unwrap().key, None);
    let e = Mapping::parse_with_env(
        &places.replacen("\"key\": \"id\"", "\"key\": null", 1),
        &no_env,
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("mapping key `nodes.Place.key`: a node space needs a key property"),
        "{e}"
    );
    let e = Mapping::parse_with_env(&places.replacen("\"key\": null", "\"key\": 7", 1), &no_env)
        .unwrap_err();
    assert!(
        e.message
            .contains("mapping key `relationships.BUS.key`: must be a non-empty string"),
        "{e}"
    );
    // The road mappings keep their default key `id`.
    let roads = Mapping::parse_with_env(&example("roads-redis.json"), &no_env).unwrap();
    assert_eq!(roads.rel_space("ROAD").unwrap().key.as_deref(), Some("id"));
}

#[test]
fn label_columns_are_checked() {
    let base = example("places-postgres.json");
    let m = Mapping::parse_with_env(&base, &no_env).unwrap();
    let column = m.nodes[0].label_column.as_ref().unwrap();
    assert_eq!(m.nodes[0].properties[column.index].0, "kind");
    assert_eq!(column.labels, ["City", "Capital", "Village"]);
    let redis = Mapping::parse_with_env(&example("places-redis.json"), &no_env).unwrap();
    assert_eq!(redis.nodes[0].label_column, m.nodes[0].label_column);
    let from = "\"label_column\": { \"column\": \"kind\", \"labels\": [\"City\", \"Capital\", \"Village\"] }";
    assert!(base.contains(from));
    let many: Vec<String> = (0..17).map(|i| format!("\"L{i}\"")).collect();
    let many = format!(
        "\"label_column\": {{ \"column\": \"kind\", \"labels\": [{}] }}",
        many.join(", ")
    );
    let cases: &[(&str, &str)] = &[
        (
            "\"label_column\": { \"column\": \"kynd\", \"labels\": [\"City\"] }",
            "mapping key `nodes.Place.label_column.column`: `kynd` is not one of the node's properties",
        ),
        (
            "\"label_column\": { \"column\": \"id\", \"labels\": [\"City\"] }",
            "mapping key `nodes.Place.label_column.column`: `id` is declared Integer; a label column must be a string or string_list property",
        ),
        (
            "\"label_column\": { \"column\": \"kind\" }",
            "mapping key `nodes.Place.label_column.labels`: is missing",
        ),
        (
            "\"label_column\": { \"column\": \"kind\", \"labels\": [] }",
            "mapping key `nodes.Place.label_column.labels`: must list from 1 to 16 labels",
        ),
        (&many, "must list from 1 to 16 labels"),
        (
            "\"label_column\": { \"column\": \"kind\", \"labels\": [\"City\", \"City\"] }",
            "`City` is listed twice",
        ),
        (
            "\"label_column\": { \"column\": \"kind\", \"labels\": [\"Place\"] }",
            "`Place` is a label every node of the space has already",
        ),
        (
            "\"label_column\": { \"column\": \"kind\", \"labels\": [\"\"] }",
            "must be a list of non-empty label names",
        ),
        (
            "\"label_column\": { \"column\": \"kind\", \"labels\": [\"City\"], \"default\": 1 }",
            "mapping key `nodes.Place.label_column.default`: unknown key",
        ),
        (
            "\"label_column\": \"kind\"",
            "mapping key `nodes.Place.label_column`: must be an object",
        ),
    ];
    for &(to, message) in cases {
        let e = Mapping::parse_with_env(&base.replacen(from, to, 1), &no_env).unwrap_err();
        assert_eq!(e.code, Some("InvalidMapping"), "{e}");
        assert!(e.message.contains(message), "{to}: {e}");
    }
    // A column label may not be another space's own label.
    let mut two: serde_json::Value = serde_json::from_str(&base).unwrap();
    two["nodes"]["Town"] = serde_json::json!({
        "key": "id", "properties": {"id": "integer"},
        "fetch": "SELECT id FROM t WHERE id = ANY($1)"
    });
    two["nodes"]["Place"]["label_column"]["labels"] = serde_json::json!(["City", "Town"]);
    let two = two.to_string();
    let e = Mapping::parse_with_env(&two, &no_env).unwrap_err();
    assert!(
        e.message.contains("mapping key `nodes.Place.label_column.labels`: `Town` is the label of node space `nodes.Town`"),
        "{e}"
    );
}

#[test]
fn environment_substitution() {
    let env = |name: &str| match name {
        "A" => Some("x".to_string()),
        "EMPTY" => Some(String::new()),
        _ => None,
    };
    assert_eq!(
        substitute_env("a${A}b${B:-y}${EMPTY:-z}", "k", &env).unwrap(),
        "axbyz"
    );
    assert!(substitute_env("${A", "k", &env).is_err());
    assert!(substitute_env("${A B}", "k", &env).is_err());
}

#[test]
fn garbage_never_panics() {
    for file in [
        "roads-postgres.json",
        "ldbc-redis.json",
        "places-postgres.json",
        "places-redis.json",
    ] {
        mutate(&example(file));
    }
}

fn mutate(base: &str) {
    let bytes = base.as_bytes();
    let mut seed = 7u64;
    for _ in 0..3000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut text = bytes.to_vec();
        for k in 0..(seed % 4 + 1) {
            let at = ((seed >> (8 * k)) as usize) % text.len();
            text[at] = b"{}[]\",:0a$ -"[(seed as usize >> 3) % 12];
        }
        let _ = Mapping::parse_with_env(&String::from_utf8_lossy(&text), &no_env);
    }
}
