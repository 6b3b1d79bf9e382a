//! Sources against real PostgreSQL and Redis servers with the Luxembourg
//! network loaded by `scripts/sources.sh` (run by
//! `scripts/suites/50-sources.sh`, which exports RHIZOME_PG_PORT and
//! RHIZOME_REDIS_PORT): equal route costs native vs PostgreSQL vs Redis
//! with every prefetcher, the cache, mapping errors found by the backend,
//! and backends that die or stall mid-query.

use rhizome_common::{ErrorKind, NodeId};
use rhizome_routes::expand::parse_filter;
use rhizome_routes::native::NativeGraph;
use rhizome_routes::{shortest_path, Goal, RouteGraph, SearchOptions, SearchStats};
use rhizome_sources::{Mapping, Prefetch, RegionShape, Source, SourceGraph};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

#[path = "../../rhizome-routes/tests/support/reference_dijkstra.rs"]
mod reference_dijkstra;

/// Counts the allocations of the current thread (tests run on several
/// threads; each reads only its own count).
struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn count_allocation() {
    // `try_with`: a thread being torn down has no count any more.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        count_allocation();
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from the system allocator with `layout`.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        count_allocation();
        // SAFETY: as for `dealloc`.
        unsafe { std::alloc::System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    ALLOCATIONS.with(|c| c.get())
}

mod common;

use common::{examples, mapping};

fn options(goal: Goal) -> SearchOptions {
    SearchOptions {
        goal,
        default_weight: None,
        weight_name: "distance".into(),
    }
}

/// The Luxembourg network imported natively once.
fn native() -> &'static rhizome_storage::Database {
    static DB: OnceLock<(tempfile::TempDir, rhizome_storage::Database)> = OnceLock::new();
    &DB.get_or_init(|| {
        let dir = rhizome_import::bench::find_datasets_dir()
            .expect("shared/datasets not found")
            .join("roads/luxembourg-dimacs10");
        let tmp = tempfile::tempdir().unwrap();
        let db = tmp.path().join("lux");
        let options = rhizome_import::DimacsOptions::new(
            dir.join("luxembourg.gr"),
            Some(dir.join("luxembourg.co")),
        );
        rhizome_import::import_dimacs(&db, &options).unwrap();
        let database = rhizome_storage::Database::open(&db).unwrap();
        (tmp, database)
    })
    .1
}

fn native_cost(from: i64, to: i64, goal: Goal) -> Option<f64> {
    let snapshot = native().snapshot();
    let specs = parse_filter("ROAD>", "f").unwrap();
    let graph = NativeGraph::new(&snapshot, &specs, "distance", Some(("lat", "lon")));
    shortest_path(
        &graph,
        (from - 1) as NodeId,
        (to - 1) as NodeId,
        &options(goal),
        &mut SearchStats::default(),
    )
    .unwrap()
    .map(|r| r.cost)
}

fn source_cost(
    graph: &dyn RouteGraph,
    from: i64,
    to: i64,
    goal: Goal,
) -> rhizome_common::Result<Option<f64>> {
    Ok(shortest_path(
        graph,
        from as NodeId,
        to as NodeId,
        &options(goal),
        &mut SearchStats::default(),
    )?
    .map(|r| r.cost))
}

/// One route from an empty cache over `source` with `prefetch`: its cost
/// and what it fetched.
fn cold_route(
    source: &Source,
    prefetch: Prefetch,
    (from, to): (i64, i64),
    goal: Goal,
) -> (Option<f64>, rhizome_sources::CounterSnapshot) {
    let specs = parse_filter("ROAD>", "f").unwrap();
    let graph = SourceGraph::new(source, &specs, "distance")
        .unwrap()
        .with_prefetch(prefetch);
    source.clear_cache();
    let before = source.counters();
    let cost = source_cost(&graph, from, to, goal).unwrap();
    (cost, source.counters().since(&before))
}

/// Distances in metres from `from` to every node (1-based), by a textbook
/// Dijkstra over the `.gr` file.
fn distances_from(from: usize) -> Vec<u64> {
    let path = rhizome_import::bench::find_datasets_dir()
        .expect("shared/datasets not found")
        .join("roads/luxembourg-dimacs10/luxembourg.gr");
    let text = std::fs::read_to_string(path).unwrap();
    reference_dijkstra::distances(&reference_dijkstra::gr_arcs(&text), from)
}

/// Three routes of about 2 km (a few thousand settled nodes for A*):
/// (from, to, the reference cost).
fn routes() -> Vec<(i64, i64, f64)> {
    [17, 40_000, 90_001]
        .into_iter()
        .map(|from| {
            let dist = distances_from(from);
            let to = (1..dist.len())
                .min_by_key(|&t| dist[t].abs_diff(2_000))
                .unwrap();
            (from as i64, to as i64, dist[to] as f64)
        })
        .collect()
}

#[test]
fn route_costs_are_equal_over_native_postgres_and_redis() {
    let pg = Source::connect(mapping("roads-postgres.json")).unwrap();
    let redis = Source::connect(mapping("roads-redis.json")).unwrap();
    let specs = parse_filter("ROAD>", "f").unwrap();
    let strategies = [
        Prefetch::None,
        Prefetch::Lookahead(1),
        Prefetch::Lookahead(4),
        Prefetch::KeyBlock(64),
        Prefetch::BoxBlock(0.005),
        Prefetch::ellipse(1.2),
    ];
    for (i, (from, to, reference)) in routes().into_iter().enumerate() {
        for goal in [Goal::AStar, Goal::Dijkstra] {
            let want = native_cost(from, to, goal);
            assert_eq!(want, Some(reference), "native {goal:?} {from}->{to}");
            for source in [&pg, &redis] {
                for prefetch in strategies {
                    if prefetch == Prefetch::BoxBlock(0.005)
                        && source.mapping().backend == rhizome_sources::Backend::Redis
                    {
                        continue; // Redis mappings have no box template.
                    }
                    if goal == Goal::Dijkstra
                        && (i > 0 || matches!(prefetch, Prefetch::None | Prefetch::Lookahead(1)))
                    {
                        continue; // Dijkstra settles many more nodes: one route, the batching prefetchers.
                    }
                    source.clear_cache();
                    let graph = SourceGraph::new(source, &specs, "distance")
                        .unwrap()
                        .with_prefetch(prefetch);
                    let before = source.counters();
                    let started = Instant::now();
                    let got = source_cost(&graph, from, to, goal).unwrap();
                    let used = source.counters().since(&before);
                    eprintln!(
                        "{} {prefetch:?} {goal:?} {from}->{to}: {:.0} ms, {}",
                        source.mapping().name,
                        started.elapsed().as_secs_f64() * 1e3,
                        used.render()
                    );
                    assert_eq!(
                        got,
                        want,
                        "{} {prefetch:?} {goal:?} {from}->{to}: {}",
                        source.mapping().name,
                        used.render()
                    );
                    assert!(used.round_trips > 0);
                }
            }
        }
    }
}

#[test]
fn the_ellipse_fetches_a_route_in_a_few_round_trips() {
    let pg = Source::connect(mapping("roads-postgres.json")).unwrap();
    let specs = parse_filter("ROAD>", "f").unwrap();
    // Stretches below a route's detour make the search fetch rings.
    for stretch in [1.0, 1.2, 2.0] {
        for (from, to, reference) in routes() {
            for goal in [Goal::AStar, Goal::Dijkstra] {
                pg.clear_cache();
                let graph = SourceGraph::new(&pg, &specs, "distance")
                    .unwrap()
                    .with_prefetch(Prefetch::ellipse(stretch));
                let before = pg.counters();
                let got = source_cost(&graph, from, to, goal).unwrap();
                let cold = pg.counters().since(&before);
                eprintln!("ellipse {stretch} {goal:?} {from}->{to}: {}", cold.render());
                assert_eq!(
                    got,
                    Some(reference),
                    "{goal:?} {from}->{to}: {}",
                    cold.render()
                );
                // The ends' rows with the region, maybe a few rings.
                let most = if goal == Goal::AStar { 5 } else { 11 };
                assert!(
                    (1..=most).contains(&cold.round_trips),
                    "{stretch} {goal:?} {from}->{to}: {}",
                    cold.render()
                );
                if goal == Goal::AStar {
                    // These routes' A* stays inside the first region.
                    assert_eq!(cold.round_trips, 1, "{from}->{to}: {}", cold.render());
                }
                assert!(cold.prefetch_used > 0 && cold.prefetched >= cold.prefetch_used);
                let before = pg.counters();
                let again = source_cost(&graph, from, to, goal).unwrap();
                let hot = pg.counters().since(&before);
                assert_eq!(again, got);
                assert_eq!(
                    (hot.round_trips, hot.misses),
                    (0, 0),
                    "hot: {}",
                    hot.render()
                );
            }
        }
    }
    // Redis has no region query: the ellipse fetches plainly, same costs.
    let redis = Source::connect(mapping("roads-redis.json")).unwrap();
    let (from, to, reference) = routes()[0];
    let graph = SourceGraph::new(&redis, &specs, "distance")
        .unwrap()
        .with_prefetch(Prefetch::ellipse(1.2));
    assert_eq!(
        source_cost(&graph, from, to, Goal::AStar).unwrap(),
        Some(reference)
    );
}

#[test]
fn a_region_read_in_slices_is_the_region_read_whole() {
    // One list followed: a pool of 2 reads a region whole, 4 in two
    // slices, 8 in four.
    let mut seen = Vec::new();
    for pool_size in [2, 4, 8] {
        let mut mapping = mapping("roads-postgres.json");
        mapping.pool_size = pool_size;
        let pg = Source::connect(mapping).unwrap();
        let mut fetched = Vec::new();
        for (from, to, reference) in routes() {
            for stretch in [1.0, 1.3] {
                let prefetch = Prefetch::ellipse(stretch);
                let (got, cold) = cold_route(&pg, prefetch, (from, to), Goal::AStar);
                assert_eq!(got, Some(reference), "pool {pool_size}: {}", cold.render());
                fetched.push((cold.round_trips, cold.rows, cold.bytes, cold.prefetched));
            }
        }
        seen.push(fetched);
    }
    assert_eq!(seen[0], seen[1], "two slices against one");
    assert_eq!(seen[0], seen[2], "four slices against one");
}

#[test]
fn a_weighted_start_reads_fewer_rows_for_the_same_costs() {
    let pg = Source::connect(mapping("roads-postgres.json")).unwrap();
    let egg = |stretch, start_weight| {
        Prefetch::Ellipse(RegionShape {
            stretch,
            start_weight,
        })
    };
    // A tight egg makes the search fetch rings; a wide one holds it all.
    let shapes = [
        Prefetch::ellipse(1.6),
        egg(1.6, 1.3),
        egg(1.1, 1.5),
        egg(2.0, 2.5),
    ];
    for (from, to, reference) in routes() {
        let mut cold = Vec::new();
        for prefetch in shapes {
            let (got, used) = cold_route(&pg, prefetch, (from, to), Goal::AStar);
            eprintln!("{prefetch} {from}->{to}: {}", used.render());
            assert_eq!(
                got,
                Some(reference),
                "{prefetch} {from}->{to}: {}",
                used.render()
            );
            assert!(
                (1..=6).contains(&used.round_trips),
                "{prefetch}: {}",
                used.render()
            );
            assert!(used.prefetch_used > 0 && used.prefetched >= used.prefetch_used);
            cold.push(used);
        }
        // At the same stretch the egg lies inside the ellipse.
        if cold[1].round_trips == 1 {
            assert!(
                cold[1].rows < cold[0].rows,
                "{from}->{to}: egg {} against ellipse {}",
                cold[1].render(),
                cold[0].render()
            );
        }
    }
}

/// Runs `f` with a client of the PostgreSQL the mapping names.
fn with_postgres<T>(f: impl AsyncFnOnce(&tokio_postgres::Client) -> T) -> T {
    let url = mapping("roads-postgres.json").connection;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        f(&client).await
    })
}

#[test]
fn a_source_plans_its_statements_once_per_connection() {
    let mapping = mapping("roads-postgres.json");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mode = runtime.block_on(async {
        let pg = rhizome_sources::postgres::Postgres::connect(&mapping)
            .await
            .unwrap();
        pg.setting("plan_cache_mode").await.unwrap()
    });
    assert_eq!(mode, "force_generic_plan");
}

/// What `scripts/sources.sh load` lays out for the region queries of the
/// `ellipse` prefetcher: junctions near each other on the map share
/// pages, every page is marked visible (so index-only scans read no
/// table page), and the road and box lookups (junctions and roads by
/// bands of latitude) are index-only.
#[test]
fn the_loader_lays_the_roads_out_for_region_queries() {
    with_postgres(async |client| {
        // A box of about 2 x 2 km in Luxembourg City: 112 of the 730
        // pages of the junctions in the DIMACS file's order.
        let pages: i64 = client
            .query_one(
                "SELECT count(DISTINCT (ctid::text::point)[0])::int8 FROM luxembourg.junction \
                 WHERE lat BETWEEN 49.6 AND 49.62 AND lon BETWEEN 6.1 AND 6.13",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert!(pages <= 30, "the box's junctions lie on {pages} pages");
        for table in ["junction", "road"] {
            let row = client
                .query_one(
                    "SELECT relpages, relallvisible FROM pg_class \
                     WHERE oid = ('luxembourg.' || $1)::regclass",
                    &[&table],
                )
                .await
                .unwrap();
            let (pages, visible): (i32, i32) = (row.get(0), row.get(1));
            assert!(
                pages > 0 && visible == pages,
                "{table}: {visible} of {pages} pages visible"
            );
        }
        let mapping = mapping("roads-postgres.json");
        let space = &mapping.nodes[0];
        let rel = &mapping.relationships[0];
        let in_box = space.in_box.as_ref().unwrap();
        for (sql, params) in [
            (
                rel.outgoing.as_ref().unwrap().template.clone(),
                "ARRAY[1, 2, 3]",
            ),
            (
                rel.incoming.as_ref().unwrap().template.clone(),
                "ARRAY[1, 2, 3]",
            ),
            (in_box.clone(), "49.6, 49.601, 6.1, 6.101"),
            (
                rel.outgoing.as_ref().unwrap().in_box.clone().unwrap(),
                "49.6, 49.601, 6.1, 6.101",
            ),
        ] {
            let mut explained = format!("PREPARE q AS {sql}");
            client.batch_execute(&explained).await.unwrap();
            explained = format!("EXPLAIN EXECUTE q({params})");
            let plan: Vec<String> = client
                .query(&explained, &[])
                .await
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect();
            client.batch_execute("DEALLOCATE q").await.unwrap();
            assert!(
                plan.iter().any(|l| l.contains("Index Only Scan")),
                "{sql}: {plan:#?}"
            );
        }
    });
}

#[test]
fn prefetching_saves_round_trips_and_a_hot_cache_needs_none() {
    let pg = Source::connect(mapping("roads-postgres.json")).unwrap();
    let specs = parse_filter("ROAD>", "f").unwrap();
    let (from, to) = (1, 5000);
    let mut trips = Vec::new();
    for prefetch in [
        Prefetch::None,
        Prefetch::Lookahead(4),
        Prefetch::KeyBlock(256),
    ] {
        pg.clear_cache();
        let graph = SourceGraph::new(&pg, &specs, "distance")
            .unwrap()
            .with_prefetch(prefetch);
        let before = pg.counters();
        source_cost(&graph, from, to, Goal::AStar).unwrap().unwrap();
        let cold = pg.counters().since(&before);
        let before = pg.counters();
        source_cost(&graph, from, to, Goal::AStar).unwrap().unwrap();
        let hot = pg.counters().since(&before);
        assert_eq!(hot.round_trips, 0, "{prefetch:?} hot: {}", hot.render());
        assert_eq!(hot.misses, 0);
        assert!(hot.hits > 0);
        if prefetch != Prefetch::None {
            assert!(
                cold.prefetched > 0 && cold.prefetch_used > 0,
                "{prefetch:?}: {}",
                cold.render()
            );
        }
        trips.push(cold.round_trips);
    }
    assert!(
        trips[1] * 2 < trips[0],
        "lookahead {} vs none {}",
        trips[1],
        trips[0]
    );
    assert!(
        trips[2] * 2 < trips[0],
        "key block {} vs none {}",
        trips[2],
        trips[0]
    );
}

#[test]
fn a_hot_search_allocates_no_more_than_over_native_storage() {
    // The search itself allocates (its heap and maps grow); the source's
    // graph must add nothing per expanded node on a warm cache.
    let (from, to) = (1, 5000);
    let snapshot = native().snapshot();
    let specs = parse_filter("ROAD>", "f").unwrap();
    let native_graph = NativeGraph::new(&snapshot, &specs, "distance", Some(("lat", "lon")));
    let run = |graph: &dyn RouteGraph, from: NodeId, to: NodeId| {
        let mut stats = SearchStats::default();
        let before = allocations();
        let route = shortest_path(graph, from, to, &options(Goal::AStar), &mut stats)
            .unwrap()
            .unwrap();
        (allocations() - before, stats.settled, route.cost)
    };
    let native = run(&native_graph, from - 1, to - 1);
    for file in ["roads-postgres.json", "roads-redis.json"] {
        let source = Source::connect(mapping(file)).unwrap();
        let graph = SourceGraph::new(&source, &specs, "distance")
            .unwrap()
            .with_prefetch(Prefetch::Lookahead(4));
        run(&graph, from, to);
        let hot = run(&graph, from, to);
        assert_eq!((hot.1, hot.2), (native.1, native.2), "{file}");
        assert!(
            hot.0 <= native.0 + 8,
            "{file}: {} allocations hot over the source, {} over native storage, {} nodes settled",
            hot.0,
            native.0,
            hot.1
        );
    }
}

#[test]
fn the_backend_checks_the_mapping_and_names_the_key() {
    let text = std::fs::read_to_string(examples().join("roads-postgres.json")).unwrap();
    let cases = [
        ("SELECT id, lat, lon FROM luxembourg.junction", "SELECT id, lat AS latitude, lon FROM luxembourg.junction", "mapping key `nodes.Junction.fetch`: the query returns no column `lat`"),
        ("FROM luxembourg.junction WHERE id", "FROM luxembourg.nowhere WHERE id", "mapping key `nodes.Junction.fetch`: PostgreSQL rejects the query: relation \"luxembourg.nowhere\" does not exist"),
        ("target AS neighbour, id, distance FROM luxembourg.road WHERE source", "target AS neighbour, id, distance::text AS distance FROM luxembourg.road WHERE source", "column `distance` has SQL type text"),
        ("WHERE id = ANY($1)", "WHERE id = $1", "mapping key `nodes.Junction.fetch`: $1 must be an array of integer keys"),
        ("source_lat AS lat, source_lon AS lon", "source_lat AS latitude, source_lon AS lon", "mapping key `relationships.ROAD.outgoing_in_box`: the query returns no column `lat`"),
        ("source_lat AS lat, source_lon AS lon", "source_lat::text AS lat, source_lon AS lon", "mapping key `relationships.ROAD.outgoing_in_box`: column `lat` (the start node's coordinate) must be a number"),
        ("source_band = ANY(ARRAY(SELECT generate_series(floor($1::float8", "source_band = ANY(ARRAY(SELECT generate_series(floor($1::int", "mapping key `relationships.ROAD.outgoing_in_box`: $1..$4 (the box) must be double precision"),
        ("target AS neighbour, id, distance, source_lat", "target AS neighbour, distance, source_lat", "mapping key `relationships.ROAD.outgoing_in_box`: the query returns no column `id`"),
    ];
    for (from, to, message) in cases {
        assert!(text.contains(from), "{from}");
        let mapping = Mapping::parse(&text.replacen(from, to, 1)).unwrap();
        let err = match Source::connect(mapping) {
            Ok(_) => panic!("{to} was accepted"),
            Err(e) => e,
        };
        assert_eq!(err.kind, ErrorKind::InputError, "{err}");
        assert!(err.message.contains(message), "{to}: {err}");
    }
}

/// The example mapping's `outgoing_in_box`: a region's roads come from one
/// index range per 0.005-degree band of their start junction's latitude
/// (the loader's `road_source_band`), not from one descent of the
/// `source` index per junction of the region; the region holds the same
/// roads either way and the route costs the same.
#[test]
fn a_region_reads_its_roads_by_bands_of_a_box() {
    let with_box = mapping("roads-postgres.json");
    let mut without = with_box.clone();
    let outgoing = without.relationships[0].outgoing.as_mut().unwrap();
    assert!(outgoing.in_box.is_some());
    outgoing.in_box = None;
    let specs = parse_filter("ROAD>", "f").unwrap();
    // The bench's route 6 (7,799 settled nodes; 26,776 junctions in the
    // region at stretch 1.35).
    let (from, to) = (32076, 20448);
    let mut buffers = Vec::new();
    let mut cold = Vec::new();
    let egg = Prefetch::Ellipse(RegionShape {
        stretch: 1.5,
        start_weight: 1.3,
    });
    let ellipse = RegionShape {
        stretch: 1.35,
        start_weight: 1.0,
    };
    // (cost, round trips, prefetched, rows) of one cold route.
    let cold_run = |source: &Source, prefetch| {
        let (cost, c) = cold_route(source, prefetch, (from, to), Goal::AStar);
        (cost, c.round_trips, c.prefetched, c.rows)
    };
    for m in [with_box, without] {
        let source = Source::connect(m).unwrap();
        // The egg's region: the same by bands as by keys too.
        cold.push(cold_run(&source, egg));
        let costs = SourceGraph::new(&source, &specs, "distance")
            .unwrap()
            .explain_region(from as NodeId, to as NodeId, ellipse, 1)
            .unwrap()
            .unwrap();
        // The lists statement of each slice (two with the example's pool).
        let lists: Vec<_> = costs
            .iter()
            .filter(|c| c.statement.starts_with("relationships.ROAD.outgoing"))
            .collect();
        assert_eq!(lists.len(), 2, "{costs:?}");
        buffers.push(lists.iter().map(|c| c.buffers).sum::<u64>());
        cold.push(cold_run(&source, Prefetch::Ellipse(ellipse)));
    }
    assert!(cold[0].0.is_some() && cold[0].0 == cold[1].0);
    assert_eq!(
        cold[0], cold[2],
        "egg: (cost, round trips, prefetched, rows)"
    );
    assert_eq!(cold[1], cold[3], "(cost, round trips, prefetched, rows)");
    assert!(
        buffers[0] * 4 < buffers[1],
        "the lists statement's buffers, by bands and by keys: {buffers:?}"
    );
}

/// A region's roads come as pairs of 32-bit integers packed into one
/// `int8` (start node and neighbour; id and distance): two array elements
/// a road instead of four. The same template with 64-bit columns packs
/// nothing; both hold the same region, round trips and route cost, and a
/// road with a NULL neighbour leaves its start node's list to the list
/// template (one more round trip, the cost read without prefetching).
#[test]
fn a_region_packs_its_roads_in_pairs() {
    let packed = mapping("roads-postgres.json");
    let in_box = |m: &Mapping| {
        m.relationships[0]
            .outgoing
            .as_ref()
            .unwrap()
            .in_box
            .clone()
            .unwrap()
    };
    let sql = in_box(&packed);
    let prefix = "SELECT source AS node, target AS neighbour, id, distance,";
    assert!(sql.starts_with(prefix), "{sql}");
    let with = |select: &str| {
        let mut m = packed.clone();
        let out = m.relationships[0].outgoing.as_mut().unwrap();
        out.in_box = Some(sql.replacen(prefix, select, 1));
        m
    };
    let wide = with(
        "SELECT source::int8 AS node, target::int8 AS neighbour, id::int8 AS id, distance::int8 AS distance,",
    );
    // Route 3's start junction's roads without their neighbour here
    // (the list template still reads them).
    let nulls = with(
        "SELECT source AS node, CASE WHEN source = 5800 THEN NULL ELSE target END AS neighbour, \
         id, distance,",
    );
    let specs = parse_filter("ROAD>", "f").unwrap();
    let (from, to) = (5800, 38913);
    let mut cold = Vec::new();
    let mut bytes = Vec::new();
    let runs = [
        (packed, Prefetch::ellipse(1.5)),
        (wide, Prefetch::ellipse(1.5)),
        (nulls.clone(), Prefetch::ellipse(1.5)),
        (nulls, Prefetch::None),
    ];
    for (m, prefetch) in runs {
        let source = Source::connect(m).unwrap();
        let graph = SourceGraph::new(&source, &specs, "distance")
            .unwrap()
            .with_prefetch(prefetch);
        source.clear_cache();
        let before = source.counters();
        let cost = source_cost(&graph, from, to, Goal::AStar).unwrap();
        let c = source.counters().since(&before);
        cold.push((cost, c.round_trips, c.rows));
        bytes.push(c.bytes);
    }
    assert!(cold[0].0.is_some());
    assert_eq!(cold[0], cold[1], "(cost, round trips, rows)");
    assert_eq!(cold[2].0, cold[3].0, "the cost with a NULL neighbour");
    assert_eq!(cold[0].0, cold[3].0);
    assert!(
        cold[2].1 > cold[0].1,
        "the list with a NULL is read apart: {cold:?}"
    );
    // Junctions: 3 values each; roads: 2 packed, 4 not.
    assert!(
        bytes[0] * 5 < bytes[1] * 4,
        "bytes packed and not: {bytes:?}"
    );
}

/// A TCP proxy in front of a backend that can cut or stall every connection.
struct Proxy {
    port: u16,
    mode: Arc<AtomicU8>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
    /// Connections whose client has sent a request the stall holds back.
    held: Arc<AtomicUsize>,
}

const FORWARD: u8 = 0;
const CUT: u8 = 1;
const STALL: u8 = 2;

impl Proxy {
    fn start(backend_port: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(AtomicU8::new(FORWARD));
        let streams: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let held = Arc::new(AtomicUsize::new(0));
        let (m, s, h) = (mode.clone(), streams.clone(), held.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if m.load(Ordering::SeqCst) == CUT {
                    drop(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", backend_port)) else {
                    continue;
                };
                s.lock()
                    .unwrap()
                    .extend([client.try_clone().unwrap(), server.try_clone().unwrap()]);
                for (mut from, mut to, requests) in [
                    (
                        client.try_clone().unwrap(),
                        server.try_clone().unwrap(),
                        true,
                    ),
                    (server, client, false),
                ] {
                    let (m, h) = (m.clone(), h.clone());
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16384];
                        loop {
                            let n = match from.read(&mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            let stalled = m.load(Ordering::SeqCst) == STALL;
                            if stalled && requests {
                                h.fetch_add(1, Ordering::SeqCst);
                            }
                            while m.load(Ordering::SeqCst) == STALL {
                                std::thread::sleep(Duration::from_millis(10));
                            }
                            if stalled && requests {
                                h.fetch_sub(1, Ordering::SeqCst);
                            }
                            if m.load(Ordering::SeqCst) == CUT || to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Proxy {
            port,
            mode,
            streams,
            held,
        }
    }

    fn cut(&self) {
        self.mode.store(CUT, Ordering::SeqCst);
        for s in self.streams.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Runs a cold A* across the network with no prefetch (hundreds of round
/// trips) while `fault` happens after 100 ms; returns the error and how
/// long the search took.
fn search_through_fault(
    source: &Source,
    deadline: Option<Instant>,
    fault: impl FnOnce() + Send + 'static,
) -> (rhizome_common::Error, Duration) {
    let specs = parse_filter("ROAD>", "f").unwrap();
    let graph = SourceGraph::new(source, &specs, "distance")
        .unwrap()
        .with_prefetch(Prefetch::None)
        .with_deadline(deadline);
    let faulter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        fault();
    });
    let started = Instant::now();
    let mut result = Ok(None);
    // Repeat the search (cold each time) until the fault has hit.
    for _ in 0..200 {
        source.clear_cache();
        result = source_cost(&graph, 1, 114_599, Goal::AStar);
        if result.is_err() {
            break;
        }
    }
    faulter.join().unwrap();
    (
        result.expect_err("the fault never hit the search"),
        started.elapsed(),
    )
}

fn through_proxy(file: &str, port_var: &str, proxy: &Proxy, timeout_ms: u64) -> Arc<Source> {
    let text = std::fs::read_to_string(examples().join(file)).unwrap();
    let default = if port_var == "RHIZOME_PG_PORT" {
        54329
    } else {
        63799
    };
    let text = text
        .replace(
            &format!("${{{port_var}:-{default}}}"),
            &proxy.port.to_string(),
        )
        .replace(
            "\"request_timeout_ms\": 30000",
            &format!("\"request_timeout_ms\": {timeout_ms}"),
        );
    assert!(text.contains(&format!(":{}/", proxy.port)));
    Source::connect(Mapping::parse(&text).unwrap()).unwrap()
}

fn port(var: &str) -> u16 {
    std::env::var(var).unwrap().parse().unwrap()
}

/// The pool keeps several requests in flight at once: four threads each
/// ask for a node row while the backend is stalled, and their requests
/// wait on distinct connections at the same time, not one after another.
#[test]
fn requests_of_several_threads_are_in_flight_at_once() {
    let proxy = Proxy::start(port("RHIZOME_PG_PORT"));
    let source = through_proxy("roads-postgres.json", "RHIZOME_PG_PORT", &proxy, 30_000);
    proxy.mode.store(STALL, Ordering::SeqCst);
    let askers: Vec<_> = (0..4i64)
        .map(|i| {
            let source = source.clone();
            std::thread::spawn(move || {
                let round = rhizome_sources::fetch::Round {
                    nodes: vec![(0, vec![1 + i])],
                    adjacency: Vec::new(),
                };
                let deadline = Instant::now() + Duration::from_secs(20);
                source
                    .fetch_round(&round, Some(deadline))
                    .map(|f| f.nodes.len())
            })
        })
        .collect();
    let until = Instant::now() + Duration::from_secs(10);
    let mut most = 0;
    while Instant::now() < until && most < 4 {
        most = most.max(proxy.held.load(Ordering::SeqCst));
        std::thread::sleep(Duration::from_millis(5));
    }
    proxy.mode.store(FORWARD, Ordering::SeqCst);
    for asker in askers {
        assert_eq!(asker.join().unwrap().unwrap(), 1);
    }
    assert!(
        most >= 2,
        "at most {most} connection(s) held a request at once: the pool serialised them"
    );
    eprintln!("{most} connections held a request at once");
}

#[test]
fn a_connection_cut_mid_query_is_a_clear_error() {
    for (file, var) in [
        ("roads-postgres.json", "RHIZOME_PG_PORT"),
        ("roads-redis.json", "RHIZOME_REDIS_PORT"),
    ] {
        let proxy = Proxy::start(port(var));
        let source = through_proxy(file, var, &proxy, 2000);
        let cut = Proxy {
            port: proxy.port,
            mode: proxy.mode.clone(),
            streams: proxy.streams.clone(),
            held: proxy.held.clone(),
        };
        let (err, took) = search_through_fault(&source, None, move || cut.cut());
        assert_eq!(err.kind, ErrorKind::TransientError, "{file}: {err}");
        assert!(err.message.contains("graph source `luxembourg-"), "{err}");
        assert!(took < Duration::from_secs(10), "{file}: took {took:?}");
    }
}

#[test]
fn a_stalled_backend_fails_at_the_query_deadline() {
    for (file, var) in [
        ("roads-postgres.json", "RHIZOME_PG_PORT"),
        ("roads-redis.json", "RHIZOME_REDIS_PORT"),
    ] {
        let proxy = Proxy::start(port(var));
        let source = through_proxy(file, var, &proxy, 30_000);
        let mode = proxy.mode.clone();
        let deadline = Instant::now() + Duration::from_millis(1500);
        let (err, took) = search_through_fault(&source, Some(deadline), move || {
            mode.store(STALL, Ordering::SeqCst)
        });
        assert_eq!(err.kind, ErrorKind::QueryAborted, "{file}: {err}");
        assert!(took < Duration::from_millis(3000), "{file}: took {took:?}");
        proxy.mode.store(FORWARD, Ordering::SeqCst);
    }
}

#[test]
fn a_killed_redis_server_is_a_clear_error() {
    // A Redis server of our own, killed mid-query by pid.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let mut server = std::process::Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("redis-server is installed by scripts/sources.sh");
    // A 300 x 300 grid, 1 m apart, ids row * 300 + col + 1.
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/0")).unwrap();
    let mut conn = None;
    for _ in 0..100 {
        if let Ok(c) = client.get_connection() {
            conn = Some(c);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut conn = conn.expect("our redis-server answers");
    let n = 300i64;
    let mut pipe = redis::pipe();
    let mut rel = 0;
    for r in 0..n {
        for c in 0..n {
            let id = r * n + c + 1;
            pipe.cmd("HSET")
                .arg(format!("luxembourg:junction:{id}"))
                .arg("id")
                .arg(id)
                .arg("lat")
                .arg(49.0 + r as f64 * 1e-5)
                .arg("lon")
                .arg(6.0)
                .ignore();
            for (dr, dc) in [(0, 1), (1, 0), (0, -1), (-1, 0)] {
                let (r2, c2) = (r + dr, c + dc);
                if (0..n).contains(&r2) && (0..n).contains(&c2) {
                    rel += 1;
                    pipe.cmd("RPUSH")
                        .arg(format!("luxembourg:road:out:{id}"))
                        .arg(format!("{}:{rel}:2", r2 * n + c2 + 1))
                        .ignore();
                }
            }
        }
    }
    let _: () = pipe.query(&mut conn).unwrap();
    let text = std::fs::read_to_string(examples().join("roads-redis.json"))
        .unwrap()
        .replace("${RHIZOME_REDIS_PORT:-63799}", &port.to_string())
        .replace(
            "\"request_timeout_ms\": 30000",
            "\"request_timeout_ms\": 2000",
        );
    let source = Source::connect(Mapping::parse(&text).unwrap()).unwrap();
    let specs = parse_filter("ROAD>", "f").unwrap();
    let graph = SourceGraph::new(&source, &specs, "distance")
        .unwrap()
        .with_prefetch(Prefetch::None);
    let pid = server.id();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    });
    let started = Instant::now();
    let result = source_cost(&graph, 1, n * n, Goal::Dijkstra);
    killer.join().unwrap();
    let _ = server.wait();
    let err = result.expect_err("the search outlived the server");
    assert_eq!(err.kind, ErrorKind::TransientError, "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// A cache smaller than a search's working set evicts (counted), stays
/// within its bound, and the routes are the same: over both backends, a
/// Dijkstra search (hundreds of settled nodes) with a cache of 256
/// entries, cold and again with what is left.
#[test]
fn a_small_cache_evicts_and_gives_the_same_routes() {
    let specs = parse_filter("ROAD>", "f").unwrap();
    let (from, to, reference) = routes()[0];
    for file in ["roads-postgres.json", "roads-redis.json"] {
        let mut small = mapping(file);
        small.cache.max_entries = 256;
        let source = Source::connect(small).unwrap();
        let graph = SourceGraph::new(&source, &specs, "distance")
            .unwrap()
            .with_prefetch(Prefetch::Lookahead(4));
        for run in ["cold", "again"] {
            let before = source.counters();
            let got = source_cost(&graph, from, to, Goal::Dijkstra).unwrap();
            let used = source.counters().since(&before);
            eprintln!("{file} small cache {run}: {}", used.render());
            assert_eq!(got, Some(reference), "{file} {run}: {}", used.render());
            assert!(used.evicted > 0, "{file} {run}: {}", used.render());
            // What eviction costs: the second run fetches again (with a
            // cache that holds the search, it needs no round trip).
            assert!(used.round_trips > 0, "{file} {run}: {}", used.render());
            assert!(
                source.cached_entries() <= 256,
                "{file} {run}: {} entries",
                source.cached_entries()
            );
        }
    }
}
