//! The text of the region statements (the `ellipse` prefetcher's box,
//! bands, strips and ends) and the unpacking of their packed columns.

use super::*;

/// What one column (an array) of a list's region statement holds. Two
/// 32-bit integer columns (`integer`/`smallint` in the rows the template
/// returns) travel packed as one `int8`, the first in the high half:
/// PostgreSQL spends about as long sending an array element as testing a
/// row against the ellipse, so two elements a road instead of four halve
/// that part (route 6's roads: 18.3 ms against 25.1 ms by `COPY … (FORMAT
/// binary)`, 7 runs each, interleaved, load 3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RegionColumn {
    /// Start node keys.
    Node,
    /// Neighbour keys.
    Neighbour,
    /// Start node and neighbour keys, packed.
    NodeNeighbour,
    /// Relationship keys.
    Rel,
    /// Relationship keys and the integer property of this index, packed.
    RelProperty(usize),
    /// The numeric property of this index, as floats.
    Property(usize),
    /// The start nodes of the rows whose neighbour is NULL (a packed
    /// pair is NULL when either half is): their lists are left to the
    /// list template, as a list with a NULL key is. (A NULL relationship
    /// key and property pair leaves the key unknown: the same.)
    Incomplete,
}

/// Is `ty` an integer type of at most 32 bits (packs into half an `int8`)?
pub(super) fn is_narrow(ty: &Type) -> bool {
    [Type::INT2, Type::INT4].contains(ty)
}

/// The SELECT list (of rows named `row`, whose columns are `columns`) of
/// a list's region statement, with what each column holds: the start
/// node, neighbour, relationship key (`rel_key`) and numeric properties
/// (of `properties`), pairs of 32-bit integers packed (see
/// [`RegionColumn`]).
pub(super) fn region_list_columns(
    row: &str,
    columns: &[tokio_postgres::Column],
    rel_key: &str,
    properties: &[(String, PropertyType)],
) -> (Vec<String>, Vec<RegionColumn>) {
    let narrow = |name: &str| {
        columns
            .iter()
            .find(|c| c.name() == name)
            .is_some_and(|c| is_narrow(c.type_()))
    };
    let col = |name: &str| format!("{row}.{}", ident(name));
    let pack = |hi: &str, lo: &str| {
        format!(
            "array_agg(({}::int8 << 32) | ({}::int8 & 4294967295))",
            col(hi),
            col(lo)
        )
    };
    let mut sql = Vec::new();
    let mut kinds = Vec::new();
    // The neighbour, whose NULL a packed NULL hides.
    let mut hidden: Vec<String> = Vec::new();
    if narrow("node") && narrow("neighbour") {
        sql.push(pack("node", "neighbour"));
        kinds.push(RegionColumn::NodeNeighbour);
        hidden.push(col("neighbour"));
    } else {
        sql.push(format!("array_agg({}::int8)", col("node")));
        sql.push(format!("array_agg({}::int8)", col("neighbour")));
        kinds.extend([RegionColumn::Node, RegionColumn::Neighbour]);
    }
    let packed_property = properties
        .iter()
        .position(|(name, ty)| *ty == PropertyType::Integer && narrow(name))
        .filter(|_| narrow(rel_key));
    match packed_property {
        Some(j) => {
            sql.push(pack(rel_key, &properties[j].0));
            kinds.push(RegionColumn::RelProperty(j));
        }
        None => {
            sql.push(format!("array_agg({}::int8)", col(rel_key)));
            kinds.push(RegionColumn::Rel);
        }
    }
    for (j, (name, ty)) in properties.iter().enumerate() {
        if matches!(ty, PropertyType::Integer | PropertyType::Float) && Some(j) != packed_property {
            sql.push(format!("array_agg({}::float8)", col(name)));
            kinds.push(RegionColumn::Property(j));
        }
    }
    if !hidden.is_empty() {
        let nulls = hidden
            .iter()
            .map(|c| format!("{c} IS NULL"))
            .collect::<Vec<_>>()
            .join(" OR ");
        sql.push(format!(
            "array_agg({}::int8) FILTER (WHERE {nulls})",
            col("node")
        ));
        kinds.push(RegionColumn::Incomplete);
    }
    (sql, kinds)
}

/// A list's region from its statement's arrays (`ints` and `floats`
/// read column `i` as integers and as floats), unpacking packed pairs
/// (see [`RegionColumn`]); the values received are added to `values`.
pub(super) fn region_list(
    list: ListRef,
    kinds: &[RegionColumn],
    ints: &dyn Fn(usize) -> Result<Vec<Option<i64>>>,
    floats: &dyn Fn(usize) -> Result<Vec<Option<f64>>>,
    values: &mut u64,
) -> Result<RegionList> {
    let high = |x: &Option<i64>| x.map(|x| x >> 32);
    let low = |x: &Option<i64>| x.map(|x| i64::from(x as i32));
    let mut out = RegionList {
        list,
        nodes: Vec::new(),
        neighbours: Vec::new(),
        rels: Vec::new(),
        properties: Vec::new(),
    };
    let mut incomplete = Vec::new();
    for (c, kind) in kinds.iter().enumerate() {
        match kind {
            RegionColumn::Property(j) => {
                let v = floats(c)?;
                *values += v.len() as u64;
                out.properties.push((*j, v));
                continue;
            }
            RegionColumn::Incomplete => {
                incomplete = ints(c)?;
                *values += incomplete.len() as u64;
                continue;
            }
            _ => {}
        }
        let v = ints(c)?;
        *values += v.len() as u64;
        match kind {
            RegionColumn::Node => out.nodes = v,
            RegionColumn::Neighbour => out.neighbours = v,
            RegionColumn::Rel => out.rels = v,
            RegionColumn::NodeNeighbour => {
                out.nodes = v.iter().map(high).collect();
                out.neighbours = v.iter().map(low).collect();
            }
            RegionColumn::RelProperty(j) => {
                out.rels = v.iter().map(high).collect();
                let property = v.iter().map(|x| low(x).map(|x| x as f64)).collect();
                out.properties.push((*j, property));
            }
            RegionColumn::Property(_) | RegionColumn::Incomplete => {}
        }
    }
    // A row whose start node is known but a packed half NULL: an entry
    // with no neighbour and no relationship key, so that the node's list
    // is not stored from the region.
    for node in incomplete.into_iter().flatten() {
        out.nodes.push(Some(node));
        out.neighbours.push(None);
        out.rels.push(None);
        for (_, values) in &mut out.properties {
            values.push(None);
        }
    }
    Ok(out)
}

/// The `WITH` clause of a route's first region computed from its ends:
/// `ends` (the node template over `$1`, `$2`, the ends' keys) gives their
/// places, and the CTE `p` the foci, metres per degree, the sum `lim` up
/// to which the band reaches (the first region's outer sum,
/// `max($3 × span, span + 2 × MARGIN_M)`, plus for the `rows` band the
/// reach of a road of `ROWS_MARGIN_M` with the start weighted `$6`) and
/// the box around it (`lat0`..`lon1`), by the formulas of [`Foci`] and
/// [`crate::region::RegionQuery::ring`], so Rust and SQL agree on the
/// region (`$4` and `$5`, which slice of how many, and `$6`, the start
/// weight, are read by the statement after it). No row when an end is missing or has no place. Every step is
/// `MATERIALIZED` (PostgreSQL 12 and later): inlined, each reference
/// repeats the expressions before it, and planning the statement took
/// 4–14 ms against 0.6–1.7 ms (`EXPLAIN ANALYZE`, route 1).
///
/// [`Foci`]: crate::region::Foci
pub(super) fn ends_prefix(ends: &str, key: &str, lat: &str, lon: &str, rows: bool) -> String {
    let metres = crate::region::METRES_PER_DEGREE;
    let margin = crate::region::MARGIN_M;
    let extra = if rows {
        format!(
            "(1 + $6::float8) * ({:e})::float8",
            crate::region::ROWS_MARGIN_M
        )
    } else {
        "0".to_string()
    };
    format!(
        "WITH f AS MATERIALIZED (SELECT t.{key}::int8 AS k, t.{lat}::float8 AS lat, t.{lon}::float8 AS lon \
                    FROM ({ends}) AS t), \
         q AS MATERIALIZED (SELECT a.lat AS alat, a.lon AS alon, z.lat AS blat, z.lon AS blon, \
                 ({metres:e})::float8 * greatest(abs(cos(radians((a.lat + z.lat) / 2))), 1e-6) AS kx, \
                 ({metres:e})::float8 AS ky \
               FROM f AS a, f AS z WHERE a.k = $1::int8 AND z.k = $2::int8 \
                 AND a.lat IS NOT NULL AND a.lon IS NOT NULL \
                 AND z.lat IS NOT NULL AND z.lon IS NOT NULL LIMIT 1), \
         r AS MATERIALIZED (SELECT q.*, (blon - alon) * kx AS dx, (blat - alat) * ky AS dy FROM q), \
         s AS MATERIALIZED (SELECT r.*, sqrt(dx * dx + dy * dy) AS span FROM r), \
         l AS MATERIALIZED (SELECT s.*, greatest($3::float8 * span, span + ({two_margin:e})::float8) \
                 + {extra} AS lim FROM s), \
         m AS MATERIALIZED (SELECT l.*, greatest(lim, span) / 2 + 1 AS major FROM l), \
         n AS MATERIALIZED (SELECT m.*, sqrt(greatest(major * major - (span / 2) * (span / 2), 0)) AS minor, \
                 CASE WHEN span > 0 THEN dx / span ELSE 1 END AS c, \
                 CASE WHEN span > 0 THEN dy / span ELSE 0 END AS si, \
                 (greatest(lim, span) + span) / ($6::float8 + 1) + 1 AS reach FROM m), \
         o AS MATERIALIZED (SELECT alat, alon, blat, blon, kx, ky, lim, reach, \
                 (alat + blat) / 2 - sqrt(major * major * si * si + minor * minor * c * c) / ky AS lat0, \
                 (alat + blat) / 2 + sqrt(major * major * si * si + minor * minor * c * c) / ky AS lat1, \
                 (alon + blon) / 2 - sqrt(major * major * c * c + minor * minor * si * si) / kx AS lon0, \
                 (alon + blon) / 2 + sqrt(major * major * c * c + minor * minor * si * si) / kx AS lon1 \
               FROM n), \
         p AS MATERIALIZED (SELECT alat, alon, blat, blon, kx, ky, lim, \
                 CASE WHEN $6::float8 > 1 THEN greatest(lat0, alat - reach / ky) ELSE lat0 END AS lat0, \
                 CASE WHEN $6::float8 > 1 THEN least(lat1, alat + reach / ky) ELSE lat1 END AS lat1, \
                 CASE WHEN $6::float8 > 1 THEN greatest(lon0, alon - reach / kx) ELSE lon0 END AS lon0, \
                 CASE WHEN $6::float8 > 1 THEN least(lon1, alon + reach / kx) ELSE lon1 END AS lon1 \
               FROM o)",
        two_margin = 2.0 * margin,
    )
}

/// The inner sum of a band that excludes nothing (a route's first region).
pub(super) const NO_INNER: &str = "(-1)::float8";

/// The condition on a band's sum `e.s`: above `inner` and at most
/// `outer`. Without an inner sum ([`NO_INNER`]) only the outer test:
/// PostgreSQL pulls the sum's subquery up into each test that names it,
/// so every test computes the sum again (the region's row statement of
/// route 6 took 9–19 ms with one test against 18–29 ms with two, `EXPLAIN
/// ANALYZE`, 6 runs each, interleaved).
pub(super) fn band_condition(inner: &str, outer: &str) -> String {
    if inner == NO_INNER {
        format!("e.s <= {outer}")
    } else {
        format!("e.s > {inner} AND e.s <= {outer}")
    }
}

/// The SQL of [`Foci::sum`] for the row `b` (columns `lat`, `lon`, quoted),
/// with `param(5..=10)` the foci and metres per degree and `param(15)` the
/// start weight (see the band of
/// [`Postgres::prepare_regions`]). Squares are products, not `power(x,
/// 2)`: the same value (both correctly rounded, as Rust's `dx * dx`), and
/// the region's row statement ran 23% faster (route 6, `EXPLAIN ANALYZE`,
/// 5 runs each, interleaved).
///
/// [`Foci::sum`]: crate::region::Foci::sum
pub(super) fn ellipse_sum_sql(lat: &str, lon: &str, param: &dyn Fn(usize) -> String) -> String {
    let square = |x: String| format!("(({x}) * ({x}))");
    format!(
        "{} * sqrt({} + {}) + sqrt({} + {})",
        param(15),
        square(format!("(b.{lon}::float8 - {}) * {}", param(6), param(9))),
        square(format!("(b.{lat}::float8 - {}) * {}", param(5), param(10))),
        square(format!("(b.{lon}::float8 - {}) * {}", param(8), param(9))),
        square(format!("(b.{lat}::float8 - {}) * {}", param(7), param(10))),
    )
}

/// Strips of longitude per slice of a region: a region's box is cut
/// into `STRIPS × slices` strips of equal width, and slice `j` reads
/// strips `j`, `j + slices`, ... (a node row statement and one per list
/// each), so every slice gets a like share of a region whose density
/// changes from west to east.
pub(super) const STRIPS: usize = 4;

/// The SQL of strip `g.i`'s west and east borders within the box from
/// longitude `west` to `east` (cut into `STRIPS × slices` strips), and of
/// the longitude its rows stay below: the east border, infinite for the
/// last strip, so two strips never both return a row on their border.
pub(super) fn strip_bounds(west: &str, east: &str, slices: &str) -> (String, String, String) {
    let strips = format!("({STRIPS} * {slices})");
    let at = |i: &str| format!("({west} + ({east} - {west}) * ({i})::float8 / {strips}::float8)");
    let last = format!("g.i + 1 >= {strips}");
    (
        format!("(CASE WHEN g.i = 0 THEN {west} ELSE {} END)", at("g.i")),
        format!("(CASE WHEN {last} THEN {east} ELSE {} END)", at("g.i + 1")),
        format!(
            "(CASE WHEN {last} THEN 'Infinity'::float8 ELSE {} END)",
            at("g.i + 1")
        ),
    )
}

/// `sql` with every parameter `$1` (not `$10`...) replaced by `with`.
pub(super) fn bind_first(sql: &str, with: &str) -> String {
    bind_params(sql, &[(1, with)])
}

/// `sql` with each parameter `$n` of `withs` (not `$n0`...) replaced by
/// its text, in one pass: a replacement's own `$n` stays as it is.
pub(super) fn bind_params(sql: &str, withs: &[(usize, &str)]) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let bound = after[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|n| withs.iter().find(|(m, _)| *m == n));
        match bound {
            Some((_, with)) => out.push_str(with),
            None => out.push_str(&rest[at..at + 1 + digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod bind_tests {

    #[test]
    fn parameters_are_bound_in_one_pass() {
        assert_eq!(
            super::bind_params(
                "x BETWEEN $3 AND $4 OR y = $34",
                &[(3, "($3 + $4)"), (4, "$3")]
            ),
            "x BETWEEN ($3 + $4) AND $3 OR y = $34"
        );
    }
    #[test]
    fn a_first_region_tests_its_sum_once() {
        assert_eq!(
            super::band_condition(super::NO_INNER, "(SELECT lim FROM p)"),
            "e.s <= (SELECT lim FROM p)"
        );
        assert_eq!(
            super::band_condition("$11::float8", "$12::float8"),
            "e.s > $11::float8 AND e.s <= $12::float8"
        );
    }

    #[test]
    fn the_ellipse_sum_squares_by_products() {
        let sql = super::ellipse_sum_sql("\"lat\"", "\"lon\"", &|i| format!("${i}"));
        assert_eq!(
            sql,
            "$15 * sqrt((((b.\"lon\"::float8 - $6) * $9) * ((b.\"lon\"::float8 - $6) * $9)) \
             + (((b.\"lat\"::float8 - $5) * $10) * ((b.\"lat\"::float8 - $5) * $10))) \
             + sqrt((((b.\"lon\"::float8 - $8) * $9) * ((b.\"lon\"::float8 - $8) * $9)) \
             + (((b.\"lat\"::float8 - $7) * $10) * ((b.\"lat\"::float8 - $7) * $10)))"
        );
        assert!(!sql.contains("power"));
    }

    #[test]
    fn server_costs_come_from_explains_json() {
        let json = r#"[{"Plan": {"Node Type": "Aggregate", "Shared Hit Blocks": 3315, "Shared Read Blocks": 2},
            "Planning Time": 0.052, "Triggers": [], "Execution Time": 1.988}]"#;
        let cost = super::ServerCost::from_explain("nodes.Junction", json).unwrap();
        assert_eq!(cost.buffers, 3317);
        assert_eq!((cost.planning_ms, cost.execution_ms), (0.052, 1.988));
        assert!((cost.total_ms() - 2.04).abs() < 1e-9);
        assert_eq!(
            super::ServerCost::from_explain("x", "Aggregate (cost=...)"),
            None
        );
        assert_eq!(super::ServerCost::from_explain("x", "[{}]"), None);
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(super::ident("lat"), "\"lat\"");
        assert_eq!(super::ident("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn only_the_first_parameter_is_bound() {
        assert_eq!(
            super::bind_first("WHERE a = ANY($1) AND b = $10 OR c = $1", "X"),
            "WHERE a = ANY(X) AND b = $10 OR c = X"
        );
        assert_eq!(super::bind_first("no parameter", "X"), "no parameter");
        assert_eq!(super::bind_first("costs $ and $$1", "X"), "costs $ and $X");
        assert_eq!(
            super::bind_first("SELECT a FROM t WHERE s = ANY($1) AND x <> $10", "ARRAY(k)"),
            "SELECT a FROM t WHERE s = ANY(ARRAY(k)) AND x <> $10"
        );
    }
}
