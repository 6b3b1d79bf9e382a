//! The baseline of `rhizome bench roads`: A* written in PL/pgSQL, running
//! inside PostgreSQL over the same tables the source reads.

use rhizome_common::{Error, ErrorKind, Result};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The PL/pgSQL A* of the baseline: open and closed sets as temporary tables.
pub(super) fn plpgsql_function(schema: &str) -> String {
    format!(
        r#"
CREATE OR REPLACE FUNCTION {schema}.astar(src integer, dst integer) RETURNS double precision AS $f$
DECLARE
  cur integer; cur_g double precision; dlat double precision; dlon double precision;
BEGIN
  SELECT lat, lon INTO dlat, dlon FROM {schema}.junction WHERE id = dst;
  DROP TABLE IF EXISTS pg_temp.open_set;
  DROP TABLE IF EXISTS pg_temp.closed_set;
  CREATE TEMP TABLE open_set (id integer PRIMARY KEY, g double precision, f double precision);
  CREATE INDEX ON open_set (f);
  CREATE TEMP TABLE closed_set (id integer PRIMARY KEY);
  INSERT INTO open_set VALUES (src, 0, 0);
  LOOP
    SELECT o.id, o.g INTO cur, cur_g FROM open_set o ORDER BY o.f LIMIT 1;
    IF NOT FOUND THEN RETURN NULL; END IF;
    IF cur = dst THEN RETURN cur_g; END IF;
    DELETE FROM open_set WHERE id = cur;
    INSERT INTO closed_set VALUES (cur);
    INSERT INTO open_set (id, g, f)
      SELECT DISTINCT ON (r.target) r.target, cur_g + r.distance,
             cur_g + r.distance + 0.999999999 * 2 * 6371008.8 * asin(least(1, sqrt(
               sin(radians(j.lat - dlat) / 2) ^ 2
               + cos(radians(dlat)) * cos(radians(j.lat)) * sin(radians(j.lon - dlon) / 2) ^ 2)))
      FROM {schema}.road r JOIN {schema}.junction j ON j.id = r.target
      WHERE r.source = cur AND NOT EXISTS (SELECT 1 FROM closed_set c WHERE c.id = r.target)
      ORDER BY r.target, r.distance
    ON CONFLICT (id) DO UPDATE SET g = EXCLUDED.g, f = EXCLUDED.f WHERE EXCLUDED.g < open_set.g;
  END LOOP;
END $f$ LANGUAGE plpgsql;
"#
    )
}

/// A connection that runs the PL/pgSQL A*.
pub(super) struct PlpgsqlBaseline {
    runtime: tokio::runtime::Runtime,
    client: Arc<tokio_postgres::Client>,
}

impl PlpgsqlBaseline {
    pub(super) fn new(url: &str, function: &str) -> Result<PlpgsqlBaseline> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        let client = runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .map_err(|e| crate::fetch::unavailable("plpgsql", e))?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            client
                .batch_execute(function)
                .await
                .map_err(|e| crate::fetch::unavailable("plpgsql", e))?;
            Ok::<_, Error>(client)
        })?;
        Ok(PlpgsqlBaseline {
            runtime,
            client: Arc::new(client),
        })
    }

    pub(super) fn run(&self, schema: &str, from: i64, to: i64) -> Result<(f64, Duration)> {
        let client = self.client.clone();
        let sql = format!("SELECT {schema}.astar($1, $2)");
        self.runtime.block_on(async move {
            let started = Instant::now();
            let row = client
                .query_one(&sql, &[&(from as i32), &(to as i32)])
                .await
                .map_err(|e| crate::fetch::unavailable("plpgsql", e))?;
            let cost: Option<f64> = row.get(0);
            Ok((cost.unwrap_or(f64::NAN), started.elapsed()))
        })
    }
}
