//! Reading a route's region in slices, one statement per list and slice
//! on connections of their own, and what its statements cost the server.

use super::*;

impl Postgres {
    /// The `ellipse` prefetcher's region of node space `space` (rows of
    /// the nodes in the rows band, the lists `lists` of those in the
    /// lists band; see [`RegionAsk`]), every statement sent at once: one
    /// round trip. The region is read in [`Postgres::region_slices`]
    /// slices of longitude, each statement on a connection of its own
    /// while the pool has them, so the backend reads it on several cores.
    /// `None` if the space has no region statements.
    pub async fn region(
        &self,
        space: u16,
        lists: &[ListRef],
        ask: RegionAsk<'_>,
    ) -> Result<Option<RegionRows>> {
        let slices = self.region_slices(lists.len());
        let sliced = (0..slices).map(|slice| self.region_slice(space, lists, ask, slice, slices));
        let mut parts = try_join_all(sliced).await?.into_iter();
        // The first slice's columns take the others' (one slice: no copy).
        let Some(Some(mut out)) = parts.next() else {
            return Ok(None);
        };
        for part in parts {
            let Some(part) = part else {
                return Ok(None);
            };
            out.append(part);
        }
        Ok(Some(out))
    }

    /// Into how many slices a region of `lists` lists is cut: as many as
    /// the pool has connections for all of a slice's statements (a node
    /// row statement and one per list), at least one.
    pub fn region_slices(&self, lists: usize) -> usize {
        (self.pool.len() / (1 + lists)).max(1)
    }

    /// Slice `slice` of `slices` of a region (see [`Postgres::region`]).
    async fn region_slice(
        &self,
        space: u16,
        lists: &[ListRef],
        ask: RegionAsk<'_>,
        slice: usize,
        slices: usize,
    ) -> Result<Option<RegionRows>> {
        let mut connections = Vec::with_capacity(1 + lists.len());
        for _ in 0..=lists.len() {
            connections.push(self.connection().await?);
        }
        let from_ends = matches!(ask, RegionAsk::Ends { .. });
        let statements_of = |p: &Arc<Prepared>| -> Option<(Statement, Vec<Statement>)> {
            let statements = p.regions.get(space as usize)?.as_ref()?;
            let chosen = lists
                .iter()
                .map(|l| {
                    let (_, band, ends, _) = statements.lists.iter().find(|(m, ..)| m == l)?;
                    Some(if from_ends { ends } else { band }.clone())
                })
                .collect::<Option<Vec<_>>>()?;
            let rows = if from_ends {
                &statements.rows_from_ends
            } else {
                &statements.rows
            };
            Some((rows.clone(), chosen))
        };
        let Some((rows_statement, _)) = statements_of(&connections[0]) else {
            return Ok(None);
        };
        let properties: Vec<(ListRef, Vec<RegionColumn>)> = {
            let Some(Some(statements)) = connections[0].regions.get(space as usize) else {
                return Ok(None);
            };
            lists
                .iter()
                .filter_map(|l| {
                    let (m, _, _, properties) = statements.lists.iter().find(|(m, ..)| m == l)?;
                    Some((*m, properties.clone()))
                })
                .collect()
        };
        type Param<'p> = &'p (dyn tokio_postgres::types::ToSql + Sync);
        // At most a few slices: the casts cannot truncate.
        let (slice, slices) = (slice as i32, slices as i32);
        let (band_params, ends_params, weight): ([[f64; 12]; 2], (i64, i64, f64), f64) = match ask {
            RegionAsk::Band(query) => {
                let params = |band: &Band| {
                    let f = &query.foci;
                    [
                        band.lat.0, band.lat.1, band.lon.0, band.lon.1, f.a.0, f.a.1, f.b.0, f.b.1,
                        f.kx, f.ky, band.inner, band.outer,
                    ]
                };
                (
                    [params(&query.rows), params(&query.lists)],
                    (0, 0, 0.0),
                    query.foci.start_weight,
                )
            }
            RegionAsk::Ends { a, b, shape } => {
                ([[0.0; 12]; 2], (a, b, shape.stretch), shape.weight())
            }
        };
        let which = (slice, slices);
        fn refs<'p>(
            from_ends: bool,
            band: &'p [f64; 12],
            ends: &'p (i64, i64, f64),
            which: &'p (i32, i32),
            weight: &'p f64,
        ) -> Vec<Param<'p>> {
            let mut refs: Vec<Param<'p>> = if from_ends {
                vec![&ends.0, &ends.1, &ends.2]
            } else {
                band.iter().map(|x| x as Param<'p>).collect()
            };
            refs.extend([&which.0 as Param<'p>, &which.1, weight]);
            refs
        }
        let row_refs = refs(from_ends, &band_params[0], &ends_params, &which, &weight);
        let list_refs = refs(from_ends, &band_params[1], &ends_params, &which, &weight);
        let mut list_statements = Vec::with_capacity(lists.len());
        for (i, p) in connections[1..].iter().enumerate() {
            let Some((_, theirs)) = statements_of(p) else {
                return Ok(None);
            };
            list_statements.push((p, theirs[i].clone()));
        }
        let list_queries = list_statements.iter().map(|(p, statement)| {
            let list_refs = &list_refs;
            Box::pin(async move { p.client.query_one(statement, list_refs).await })
        });
        let (rows, list_rows) = futures_util::future::try_join(
            connections[0].client.query_one(&rows_statement, &row_refs),
            try_join_all(list_queries),
        )
        .await
        .map_err(|e| self.query_error(e))?;
        let ints = |row: &Row, i: usize| -> Result<Vec<Option<i64>>> {
            Ok(row
                .try_get::<_, Option<Vec<Option<i64>>>>(i)
                .map_err(|e| self.query_error(e))?
                .unwrap_or_default())
        };
        let floats = |row: &Row, i: usize| -> Result<Vec<Option<f64>>> {
            Ok(row
                .try_get::<_, Option<Vec<Option<f64>>>>(i)
                .map_err(|e| self.query_error(e))?
                .unwrap_or_default())
        };
        let mut out = RegionRows {
            keys: ints(&rows, 0)?,
            lats: floats(&rows, 1)?,
            lons: floats(&rows, 2)?,
            lists: Vec::with_capacity(properties.len()),
            values: 0,
        };
        out.values = 3 * out.keys.len() as u64;
        for ((list, kinds), row) in properties.iter().zip(&list_rows) {
            let fetched = region_list(
                *list,
                kinds,
                &|c| ints(row, c),
                &|c| floats(row, c),
                &mut out.values,
            )?;
            out.lists.push(fetched);
        }
        let lengths_agree = out.lats.len() == out.keys.len()
            && out.lons.len() == out.keys.len()
            && out.lists.iter().all(|l| {
                l.neighbours.len() == l.nodes.len()
                    && l.rels.len() == l.nodes.len()
                    && l.properties.iter().all(|(_, v)| v.len() == l.nodes.len())
            });
        if !lengths_agree {
            return Err(bad_data(
                &self.name,
                "a region query returned columns of different lengths",
            ));
        }
        Ok(Some(out))
    }

    /// The server's own cost of the statements of a route's first region
    /// from its ends (see [`RegionAsk::Ends`]): each statement prepared
    /// again by name on one of the source's connections (so a generic
    /// plan, as the source's own statements run), run once to build its
    /// plan and then `runs` times under `EXPLAIN (ANALYZE, BUFFERS)`, the
    /// run of median execution time reported. Per slice (see
    /// [`Postgres::region`]), the node space's row statement comes first,
    /// then each list of `lists`; with more than one slice each
    /// statement's name ends in ` j/k`. `None` if the space has no region
    /// statements.
    pub async fn explain_region(
        &self,
        space: u16,
        lists: &[ListRef],
        (a, b): (i64, i64),
        shape: RegionShape,
        runs: usize,
    ) -> Result<Option<Vec<ServerCost>>> {
        let p = self.connection().await?;
        let Some(Some(statements)) = p.regions.get(space as usize) else {
            return Ok(None);
        };
        let mut chosen = vec![statements.from_ends_sql[0].clone()];
        for list in lists {
            let Some(i) = self.sql.lists.iter().position(|(l, _)| l == list) else {
                return Ok(None);
            };
            let key = &self.sql.list_keys[i];
            match statements.from_ends_sql.iter().find(|(k, _)| k == key) {
                Some(found) => chosen.push(found.clone()),
                None => return Ok(None),
            }
        }
        let slices = self.region_slices(lists.len());
        let mut out = Vec::with_capacity(chosen.len() * slices);
        for slice in 0..slices {
            for (statement, sql) in &chosen {
                let statement = if slices > 1 {
                    format!("{statement} {}/{slices}", slice + 1)
                } else {
                    statement.clone()
                };
                out.extend(
                    self.explain_one(&p, &statement, sql, (a, b, shape), (slice, slices), runs)
                        .await?,
                );
            }
        }
        Ok(Some(out))
    }

    /// The median run of `runs` of one region statement from the ends
    /// under `EXPLAIN`, for slice `slice` of `slices` (see
    /// [`Postgres::explain_region`]).
    async fn explain_one(
        &self,
        p: &Prepared,
        statement: &str,
        sql: &str,
        (a, b, shape): (i64, i64, RegionShape),
        (slice, slices): (usize, usize),
        runs: usize,
    ) -> Result<Option<ServerCost>> {
        let run = async {
            p.client
                .batch_execute(&format!(
                    "PREPARE rhizome_explain (int8, int8, float8, int4, int4, float8) AS {sql}"
                ))
                .await?;
            let (stretch, weight) = (shape.stretch, shape.weight());
            let explain = format!(
                "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) \
                 EXECUTE rhizome_explain({a}, {b}, {stretch:?}, {slice}, {slices}, {weight:?})"
            );
            let mut texts = Vec::with_capacity(runs + 1);
            for _ in 0..=runs {
                for message in p.client.simple_query(&explain).await? {
                    if let tokio_postgres::SimpleQueryMessage::Row(row) = message {
                        texts.push(row.get(0).unwrap_or_default().to_string());
                    }
                }
            }
            p.client.batch_execute("DEALLOCATE rhizome_explain").await?;
            Ok::<_, tokio_postgres::Error>(texts)
        };
        let texts = run.await.map_err(|e| self.query_error(e))?;
        let mut costs = texts
            .iter()
            .skip(1)
            .map(|t| ServerCost::from_explain(statement, t))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad_data(&self.name, "EXPLAIN gave no plan in JSON"))?;
        costs.sort_by(|x, y| x.execution_ms.total_cmp(&y.execution_ms));
        Ok((!costs.is_empty()).then(|| costs.swap_remove(costs.len() / 2)))
    }
}

/// What one statement cost the server (`EXPLAIN (ANALYZE, BUFFERS)`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServerCost {
    /// Which statement: the mapping key it is derived from
    /// (`nodes.Junction`, `relationships.ROAD.outgoing`).
    pub statement: String,
    /// Planning time in ms (near zero for a cached generic plan).
    pub planning_ms: f64,
    /// Execution time in ms (without sending the result).
    pub execution_ms: f64,
    /// Shared buffers hit and read by the plan.
    pub buffers: u64,
}

impl ServerCost {
    /// The cost in the JSON of `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`.
    pub fn from_explain(statement: &str, json: &str) -> Option<ServerCost> {
        let value: serde_json::Value = serde_json::from_str(json).ok()?;
        let top = value.get(0)?;
        let plan = top.get("Plan")?;
        let blocks = |name: &str| plan.get(name).and_then(|v| v.as_u64()).unwrap_or(0);
        Some(ServerCost {
            statement: statement.to_string(),
            planning_ms: top.get("Planning Time")?.as_f64()?,
            execution_ms: top.get("Execution Time")?.as_f64()?,
            buffers: blocks("Shared Hit Blocks") + blocks("Shared Read Blocks"),
        })
    }

    /// The statement's whole server time in ms.
    pub fn total_ms(&self) -> f64 {
        self.planning_ms + self.execution_ms
    }
}
