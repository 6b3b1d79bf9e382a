//! Preparing a connection's statements and checking them against the
//! mapping (parameter and column types; errors name the mapping key).

use super::*;

impl Postgres {
    /// Checks a list's `*_in_box` template (at mapping key `at`): four
    /// float parameters, the integer columns `node`, `neighbour` and the
    /// relationship key, the properties of `rel`, and the coordinates of
    /// `start` (the space where the list's relationships start) as numbers.
    pub(super) async fn check_list_box(
        &self,
        client: &Client,
        sql: &str,
        at: &str,
        rel: &RelSpace,
        start: Option<&NodeSpace>,
    ) -> Result<()> {
        let statement = self.prepare_one(client, sql, at).await?;
        if statement.params().len() != 4 || statement.params().iter().any(|t| *t != Type::FLOAT8) {
            return Err(mapping_error(
                at,
                format!(
                    "$1..$4 (the box) must be double precision, PostgreSQL reads them as {}",
                    statement
                        .params()
                        .iter()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let mut extra = vec!["node", "neighbour"];
        extra.extend(rel.key.as_deref());
        columns(&statement, at, &rel.properties, &extra)?;
        if let Some((space, (lat, lon))) =
            start.and_then(|n| Some((n.label.as_str(), n.coordinates.as_ref()?)))
        {
            let cols = statement.columns();
            for name in [lat, lon] {
                let numeric = cols.iter().find(|c| c.name() == name).map(|c| {
                    is_integer(c.type_()) || [Type::FLOAT4, Type::FLOAT8].contains(c.type_())
                });
                match numeric {
                    Some(true) => {}
                    Some(false) => {
                        return Err(mapping_error(
                            at,
                            format!(
                                "column `{name}` (the start node's coordinate) must be a number"
                            ),
                        ))
                    }
                    None => {
                        return Err(mapping_error(
                            at,
                            format!(
                            "the query returns no column `{name}` (the start node's coordinate, \
                                 named as in `nodes.{space}.coordinates`)"
                        ),
                        ))
                    }
                }
            }
        }
        Ok(())
    }

    /// A new connection with every statement prepared.
    pub(super) async fn prepare(&self) -> Result<Arc<Prepared>> {
        let mut prepared = self.prepare_basic().await?;
        prepared.lookahead = self.prepare_lookahead(&prepared).await?;
        if let Some(mapping) = &self.mapping {
            prepared.regions = self.prepare_regions(&prepared, mapping).await?;
        }
        Ok(Arc::new(prepared))
    }

    /// Prepares `sql` on `client`; a query PostgreSQL rejects is a mapping
    /// error at `at`.
    async fn prepare_one(&self, client: &Client, sql: &str, at: &str) -> Result<Statement> {
        client
            .prepare(sql)
            .await
            .map_err(|e| match e.as_db_error() {
                Some(db) => mapping_error(
                    at,
                    format!("PostgreSQL rejects the query: {}", db.message()),
                ),
                None => unavailable(&self.name, e),
            })
    }

    /// A new connection with the mapping's own statements prepared.
    pub(super) async fn prepare_basic(&self) -> Result<Prepared> {
        let (client, connection) = tokio_postgres::connect(&self.url, NoTls)
            .await
            .map_err(|e| unavailable(&self.name, format!("cannot connect to PostgreSQL: {e}")))?;
        tokio::spawn(async move {
            // Ends when the client is dropped or the server goes away; the
            // next request then fails with a clear error.
            let _ = connection.await;
        });
        client
            .batch_execute(SESSION_SETTINGS)
            .await
            .map_err(|e| unavailable(&self.name, e))?;
        let mut nodes = Vec::new();
        let mut boxes = Vec::new();
        for (s, sql) in self.sql.nodes.iter().enumerate() {
            let at = format!("{}.fetch", self.sql.node_keys[s]);
            nodes.push(self.prepare_one(&client, sql, &at).await?);
        }
        for (s, sql) in self.sql.boxes.iter().enumerate() {
            let at = format!("{}.in_box", self.sql.node_keys[s]);
            boxes.push(match sql {
                Some(sql) => Some(self.prepare_one(&client, sql, &at).await?),
                None => None,
            });
        }
        let mut lists = Vec::new();
        for (i, (list, sql)) in self.sql.lists.iter().enumerate() {
            lists.push((
                *list,
                self.prepare_one(&client, sql, &self.sql.list_keys[i])
                    .await?,
            ));
        }
        Ok(Prepared {
            client,
            nodes,
            boxes,
            lists,
            lookahead: Vec::new(),
            regions: Vec::new(),
        })
    }

    /// The region statements of every node space with coordinates and an
    /// `in_box` template whose four parameters are floats, derived from
    /// the templates (see [`RegionStatements`]).
    pub(super) async fn prepare_regions(
        &self,
        p: &Prepared,
        mapping: &Mapping,
    ) -> Result<Vec<Option<RegionStatements>>> {
        let numeric = |t: PropertyType| matches!(t, PropertyType::Integer | PropertyType::Float);
        let mut out = Vec::new();
        for (s, space) in mapping.nodes.iter().enumerate() {
            let (Some(in_box), Some((lat, lon)), Some(boxed)) =
                (&space.in_box, &space.coordinates, &p.boxes[s])
            else {
                out.push(None);
                continue;
            };
            let type_of = |name: &str| {
                space
                    .properties
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, t)| *t)
            };
            let floats =
                boxed.params().len() == 4 && boxed.params().iter().all(|t| *t == Type::FLOAT8);
            if !floats || !type_of(lat).is_some_and(numeric) || !type_of(lon).is_some_and(numeric) {
                out.push(None);
                continue;
            }
            let (key, lat, lon) = (ident(&space.key), ident(lat), ident(lon));
            // The SQL of a band's rows and of its lists, with `param(i)` in
            // place of the plain statements' parameter `$i` (1-4: the box;
            // 5-8: the foci; 9, 10: metres per degree; 11, 12: the band;
            // 13, 14: which slice of how many, see `strips`; 15: the start
            // weight).
            let band_of = |in_box: &str, param: &dyn Fn(usize) -> String| {
                let (west, east, short_of) = strip_bounds(&param(3), &param(4), &param(14));
                let (south, north) = (param(1), param(2));
                let in_box =
                    bind_params(in_box, &[(1, &south), (2, &north), (3, &west), (4, &east)]);
                let sum = ellipse_sum_sql(&lat, &lon, param);
                // The strips as a list of `STRIPS` rows, not a
                // `generate_series`: estimated at 4 rows, the strips get an
                // index scan each within their longitudes (a series,
                // estimated at 1,000, got one scan of every longitude of the
                // box, filtered per strip: route 2's roads 31 ms against 11).
                let strips = (0..STRIPS)
                    .map(|j| format!("({j})"))
                    .collect::<Vec<_>>()
                    .join(", ");
                format!(
                    "FROM (SELECT {slice} + v.j * {slices} AS i FROM (VALUES {strips}) AS v(j)) AS g \
                     CROSS JOIN LATERAL ({in_box}) AS b \
                     CROSS JOIN LATERAL (SELECT {sum} AS s) AS e WHERE {} \
                     AND b.{lon}::float8 < {short_of}",
                    band_condition(&param(11), &param(12)),
                    slice = param(13),
                    slices = param(14),
                )
            };
            let band = |param: &dyn Fn(usize) -> String| band_of(in_box, param);
            let plain = |i: usize| match i {
                13 | 14 => format!("${i}::int4"),
                _ => format!("${i}::float8"),
            };
            // From the ends: the foci and bands computed in SQL from the
            // ends' rows (`$1`, `$2` their keys, `$3` the stretch, `$6` the
            // start weight; see `ends_prefix`), so the ends need no round
            // trip of their own.
            let array = if p.nodes[s].params().first() == Some(&Type::INT8_ARRAY) {
                "bigint[]"
            } else {
                "integer[]"
            };
            let ends = bind_first(
                &self.sql.nodes[s],
                &format!("ARRAY[$1::int8, $2::int8]::{array}"),
            );
            let from_ends = |rows: bool| {
                let prefix = ends_prefix(&ends, &key, &lat, &lon, rows);
                let names = [
                    "lat0", "lat1", "lon0", "lon1", "alat", "alon", "blat", "blon", "kx", "ky",
                ];
                let param = move |i: usize| match i {
                    1..=10 => format!("(SELECT {} FROM p)", names[i - 1]),
                    11 => NO_INNER.to_string(),
                    12 => "(SELECT lim FROM p)".to_string(),
                    13 => "$4::int4".to_string(),
                    14 => "$5::int4".to_string(),
                    _ => "$6::float8".to_string(),
                };
                (prefix, param)
            };
            let at = format!("nodes.{}.in_box (its ellipse query)", space.label);
            let rows_sql = |band: String| {
                format!(
                    "SELECT array_agg(b.{key}::int8), array_agg(b.{lat}::float8), \
                     array_agg(b.{lon}::float8) {band}"
                )
            };
            let rows = self
                .prepare_one(&p.client, &rows_sql(band(&plain)), &at)
                .await?;
            let (prefix, param) = from_ends(true);
            let rows_from_ends_sql = format!("{prefix} {}", rows_sql(band(&param)));
            let rows_from_ends = self
                .prepare_one(&p.client, &rows_from_ends_sql, &at)
                .await?;
            let mut from_ends_sql = vec![(format!("nodes.{}", space.label), rows_from_ends_sql)];
            let mut lists = Vec::new();
            for (i, (list, template)) in self.sql.lists.iter().enumerate() {
                let rel = &mapping.relationships[list.rel as usize];
                let start = if list.outgoing { &rel.from } else { &rel.to };
                let Some(rel_key) = rel.key.as_deref().filter(|_| start == &space.label) else {
                    continue;
                };
                // With a `*_in_box` template the lists come from the band
                // of its rows (`b`, which carry their start node's place),
                // else from the list template over the band's node keys.
                let list_box = self.sql.list_boxes[i].as_deref();
                let row = if list_box.is_some() { "b" } else { "x" };
                // The types of the rows' columns, to pack pairs of 32-bit
                // integers into one `int8` (see [`RegionColumn`]).
                let at = format!("{} (its ellipse query)", self.sql.list_keys[i]);
                let source_columns = match list_box {
                    Some(sql) => self.prepare_one(&p.client, sql, &at).await?,
                    None => p.lists[i].1.clone(),
                };
                let (columns, kinds) =
                    region_list_columns(row, source_columns.columns(), rel_key, &rel.properties);
                let properties = kinds;
                let list_sql = |param: &dyn Fn(usize) -> String| match list_box {
                    Some(list_box) => {
                        format!("SELECT {} {}", columns.join(", "), band_of(list_box, param))
                    }
                    None => {
                        let keys = format!("ARRAY(SELECT b.{key} {})", band(param));
                        format!(
                            "SELECT {} FROM ({}) AS x",
                            columns.join(", "),
                            bind_first(template, &keys)
                        )
                    }
                };
                let statement = self.prepare_one(&p.client, &list_sql(&plain), &at).await?;
                let (prefix, param) = from_ends(false);
                let sql = format!("{prefix} {}", list_sql(&param));
                let from_ends = self.prepare_one(&p.client, &sql, &at).await?;
                from_ends_sql.push((self.sql.list_keys[i].clone(), sql));
                lists.push((*list, statement, from_ends, properties));
            }
            out.push(Some(RegionStatements {
                rows,
                rows_from_ends,
                lists,
                from_ends_sql,
            }));
        }
        Ok(out)
    }

    /// The lookahead statements, derived from the templates: keys reached
    /// from `$1` in fewer than `$2` steps (a recursive query), then the
    /// list template over all of them at once, and the first node space's
    /// template over every reached key.
    pub(super) async fn prepare_lookahead(
        &self,
        p: &Prepared,
    ) -> Result<Vec<(ListRef, Statement, Statement)>> {
        let array_of = |statement: &Statement| {
            if statement.params().first() == Some(&Type::INT8_ARRAY) {
                "bigint[]"
            } else {
                "integer[]"
            }
        };
        let mut out = Vec::new();
        for (i, (list, sql)) in self.sql.lists.iter().enumerate() {
            let array = array_of(&p.lists[i].1);
            let reach = format!(
                "WITH RECURSIVE reach(n, depth) AS ( \
                   SELECT k::bigint, 0 FROM unnest($1::bigint[]) AS k \
                   UNION \
                   SELECT e.neighbour::bigint, r.depth + 1 FROM reach r, \
                     LATERAL ({}) e WHERE r.depth < $2 )",
                bind_first(sql, &format!("ARRAY[r.n]::{array}"))
            );
            let edges = format!(
                "{reach} SELECT * FROM ({}) e",
                bind_first(
                    sql,
                    &format!("(SELECT array_agg(DISTINCT n) FROM reach WHERE depth < $2)::{array}")
                )
            );
            let node_rows = format!(
                "{reach} SELECT * FROM ({}) f",
                bind_first(
                    &self.sql.nodes[0],
                    &format!(
                        "(SELECT array_agg(DISTINCT n) FROM reach)::{}",
                        array_of(&p.nodes[0])
                    )
                )
            );
            let at = format!("{} (its lookahead query)", self.sql.list_keys[i]);
            let edges = self.prepare_one(&p.client, &edges, &at).await?;
            let node_rows = self.prepare_one(&p.client, &node_rows, &at).await?;
            out.push((*list, edges, node_rows));
        }
        Ok(out)
    }
}
