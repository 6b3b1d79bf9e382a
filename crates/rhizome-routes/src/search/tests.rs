use super::*;
use proptest::prelude::*;

/// A directed graph in memory: arcs (from, to, weight) with ids = index.
struct Mem {
    arcs: Vec<(NodeId, NodeId, f64)>,
    places: Vec<Option<(f64, f64)>>,
}

impl RouteGraph for Mem {
    fn expand(&self, nodes: &[NodeId], out: &mut WeightedBatch) -> Result<()> {
        out.clear();
        for &n in nodes {
            for (id, &(from, to, w)) in self.arcs.iter().enumerate() {
                if from == n {
                    out.push(to, id as RelId, w);
                }
            }
            out.end_node();
        }
        Ok(())
    }
    fn coordinates(&self, nodes: &[NodeId], out: &mut Vec<Option<(f64, f64)>>) -> Result<()> {
        out.extend(
            nodes
                .iter()
                .map(|&n| self.places.get(n as usize).copied().flatten()),
        );
        Ok(())
    }
}

fn dijkstra() -> SearchOptions {
    SearchOptions {
        goal: Goal::Dijkstra,
        default_weight: None,
        weight_name: "w".into(),
    }
}

/// Bellman-Ford: the reference cost, written independently of the search.
fn reference_cost(arcs: &[(NodeId, NodeId, f64)], n: usize, s: NodeId, t: NodeId) -> Option<f64> {
    let mut d = vec![f64::INFINITY; n];
    d[s as usize] = 0.0;
    for _ in 0..n {
        for &(u, v, w) in arcs {
            if d[u as usize] + w < d[v as usize] {
                d[v as usize] = d[u as usize] + w;
            }
        }
    }
    d[t as usize].is_finite().then_some(d[t as usize])
}

/// Checks that `route` is a real path of `g` from s to t costing what it says.
fn check_route(g: &Mem, route: &Route, s: NodeId, t: NodeId) {
    assert_eq!(route.nodes.first(), Some(&s));
    assert_eq!(route.nodes.last(), Some(&t));
    assert_eq!(route.nodes.len(), route.rels.len() + 1);
    let mut cost = 0.0;
    for (i, &rel) in route.rels.iter().enumerate() {
        let (from, to, w) = g.arcs[rel as usize];
        assert_eq!((from, to), (route.nodes[i], route.nodes[i + 1]));
        cost += w;
    }
    assert_eq!(cost, route.cost);
}

fn run(g: &Mem, s: NodeId, t: NodeId, o: &SearchOptions) -> Result<Option<Route>> {
    shortest_path(g, s, t, o, &mut SearchStats::default())
}

#[test]
fn start_equal_to_end_is_an_empty_path() {
    let g = Mem {
        arcs: vec![(0, 1, 1.0)],
        places: vec![],
    };
    let r = run(&g, 0, 0, &dijkstra()).unwrap().unwrap();
    assert_eq!((r.nodes, r.rels, r.cost), (vec![0], vec![], 0.0));
}

#[test]
fn unreachable_is_none() {
    let g = Mem {
        arcs: vec![(0, 1, 1.0), (2, 0, 1.0)],
        places: vec![],
    };
    assert_eq!(run(&g, 0, 2, &dijkstra()).unwrap(), None);
    assert_eq!(
        k_shortest_paths(&g, 0, 2, 3, &dijkstra(), &mut SearchStats::default()).unwrap(),
        vec![]
    );
}

#[test]
fn ties_give_a_deterministic_cheapest_path() {
    // Two routes of cost 2 from 0 to 3.
    let g = Mem {
        arcs: vec![(0, 1, 1.0), (0, 2, 1.0), (1, 3, 1.0), (2, 3, 1.0)],
        places: vec![],
    };
    let first = run(&g, 0, 3, &dijkstra()).unwrap().unwrap();
    assert_eq!(first.cost, 2.0);
    for _ in 0..5 {
        assert_eq!(run(&g, 0, 3, &dijkstra()).unwrap().unwrap(), first);
    }
    let both = k_shortest_paths(&g, 0, 3, 5, &dijkstra(), &mut SearchStats::default()).unwrap();
    assert_eq!(
        both.iter().map(|r| r.cost).collect::<Vec<_>>(),
        vec![2.0, 2.0]
    );
    assert_ne!(both[0].rels, both[1].rels);
}

#[test]
fn missing_and_negative_weights() {
    let g = Mem {
        arcs: vec![(0, 1, f64::NAN), (1, 2, 4.0)],
        places: vec![],
    };
    let e = run(&g, 0, 2, &dijkstra()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::ProcedureError);
    assert!(
        e.message
            .contains("relationship 0 has no numeric `w` property"),
        "{e}"
    );
    let with_default = SearchOptions {
        default_weight: Some(3.0),
        ..dijkstra()
    };
    assert_eq!(run(&g, 0, 2, &with_default).unwrap().unwrap().cost, 7.0);
    let g = Mem {
        arcs: vec![(0, 1, -1.0)],
        places: vec![],
    };
    let e = run(&g, 0, 1, &dijkstra()).unwrap_err();
    assert!(
        e.message
            .contains("weights must be finite and not negative"),
        "{e}"
    );
}

#[test]
fn a_star_needs_coordinates_and_finds_the_same_cost() {
    // A line of three places 0.01 degrees of longitude apart (~720 m).
    let places = vec![
        Some((49.0, 6.0)),
        Some((49.0, 6.01)),
        Some((49.0, 6.02)),
        None,
    ];
    let arcs = vec![(0, 1, 800.0), (1, 2, 800.0), (0, 2, 2000.0), (2, 3, 1.0)];
    let g = Mem { arcs, places };
    let a_star = SearchOptions {
        goal: Goal::AStar,
        ..dijkstra()
    };
    let r = run(&g, 0, 2, &a_star).unwrap().unwrap();
    assert_eq!((r.cost, r.nodes.clone()), (1600.0, vec![0, 1, 2]));
    let e = run(&g, 0, 3, &a_star).unwrap_err();
    assert!(
        e.message
            .contains("node 3 has no numeric latitude and longitude"),
        "{e}"
    );
}

#[test]
fn a_star_reads_neighbour_places_from_expand_located() {
    // A graph whose `coordinates` answers only the start and end nodes:
    // A* must take every neighbour's place from `expand_located`.
    struct Located(Mem, std::cell::Cell<u32>);
    impl RouteGraph for Located {
        fn expand(&self, nodes: &[NodeId], out: &mut WeightedBatch) -> Result<()> {
            self.0.expand(nodes, out)
        }
        fn coordinates(&self, n: &[NodeId], out: &mut Vec<Option<(f64, f64)>>) -> Result<()> {
            assert_eq!(n.len(), 1, "asked for neighbours' coordinates: {n:?}");
            self.0.coordinates(n, out)
        }
        fn expand_located(
            &self,
            nodes: &[NodeId],
            out: &mut WeightedBatch,
            places: &mut Vec<Option<(f64, f64)>>,
        ) -> Result<()> {
            self.1.set(self.1.get() + 1);
            self.0.expand(nodes, out)?;
            places.clear();
            self.0.coordinates(&out.neighbours, places)
        }
    }
    let places = vec![Some((49.0, 6.0)), Some((49.0, 6.01)), Some((49.0, 6.02))];
    let arcs = vec![(0, 1, 800.0), (1, 2, 800.0), (0, 2, 2000.0)];
    let g = Located(Mem { arcs, places }, std::cell::Cell::new(0));
    let a_star = SearchOptions {
        goal: Goal::AStar,
        ..dijkstra()
    };
    let r = shortest_path(&g, 0, 2, &a_star, &mut SearchStats::default())
        .unwrap()
        .unwrap();
    assert_eq!((r.cost, r.nodes), (1600.0, vec![0, 1, 2]));
    assert_eq!(g.1.get(), 2, "one located expansion per settled node");
}

#[test]
fn cancellation_stops_a_search() {
    struct Cancelled(Mem);
    impl RouteGraph for Cancelled {
        fn expand(&self, nodes: &[NodeId], out: &mut WeightedBatch) -> Result<()> {
            self.0.expand(nodes, out)
        }
        fn coordinates(&self, n: &[NodeId], out: &mut Vec<Option<(f64, f64)>>) -> Result<()> {
            self.0.coordinates(n, out)
        }
        fn check_cancelled(&self) -> Result<()> {
            Err(Error::new(ErrorKind::QueryAborted, "stop"))
        }
    }
    let arcs = (0..2000).map(|i| (i, i + 1, 1.0)).collect();
    let g = Cancelled(Mem {
        arcs,
        places: vec![],
    });
    let e = shortest_path(&g, 0, 2000, &dijkstra(), &mut SearchStats::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::QueryAborted);
}

/// Every loopless path's cost from s to t, sorted (brute force).
fn all_path_costs(g: &Mem, n: usize, s: NodeId, t: NodeId) -> Vec<f64> {
    fn walk(g: &Mem, at: NodeId, t: NodeId, seen: &mut Vec<bool>, cost: f64, out: &mut Vec<f64>) {
        if at == t {
            out.push(cost);
            return;
        }
        for &(u, v, w) in &g.arcs {
            if u == at && !seen[v as usize] {
                seen[v as usize] = true;
                walk(g, v, t, seen, cost + w, out);
                seen[v as usize] = false;
            }
        }
    }
    let mut seen = vec![false; n];
    seen[s as usize] = true;
    let mut out = Vec::new();
    walk(g, s, t, &mut seen, 0.0, &mut out);
    out.sort_by(f64::total_cmp);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn costs_match_an_independent_search(
        arcs in proptest::collection::vec((0u64..8, 0u64..8, 0u32..20), 0..30),
        s in 0u64..8,
        t in 0u64..8,
    ) {
        let arcs: Vec<_> = arcs.into_iter().map(|(u, v, w)| (u, v, f64::from(w))).collect();
        let g = Mem { arcs: arcs.clone(), places: vec![] };
        let found = run(&g, s, t, &dijkstra()).unwrap();
        prop_assert_eq!(found.as_ref().map(|r| r.cost), reference_cost(&arcs, 8, s, t));
        if let Some(r) = &found {
            check_route(&g, r, s, t);
        }
    }

    #[test]
    fn k_shortest_paths_are_the_k_cheapest_loopless_paths(
        arcs in proptest::collection::vec((0u64..6, 0u64..6, 1u32..9), 0..14),
        k in 1usize..5,
    ) {
        let arcs: Vec<_> = arcs.into_iter().map(|(u, v, w)| (u, v, f64::from(w))).collect();
        let g = Mem { arcs, places: vec![] };
        let routes = k_shortest_paths(&g, 0, 5, k, &dijkstra(), &mut SearchStats::default()).unwrap();
        for r in &routes {
            check_route(&g, r, 0, 5);
            let mut seen = r.nodes.clone();
            seen.sort_unstable();
            seen.dedup();
            prop_assert_eq!(seen.len(), r.nodes.len(), "a loop in {:?}", r.nodes);
        }
        let all = all_path_costs(&g, 6, 0, 5);
        let want: Vec<f64> = all.into_iter().take(k).collect();
        prop_assert_eq!(routes.iter().map(|r| r.cost).collect::<Vec<_>>(), want);
    }
}

/// A graph that records the routes it was told about before anything else.
struct Preparing {
    inner: Mem,
    calls: std::cell::RefCell<Vec<String>>,
}

impl RouteGraph for Preparing {
    fn expand(&self, nodes: &[NodeId], out: &mut WeightedBatch) -> Result<()> {
        self.calls.borrow_mut().push("expand".into());
        self.inner.expand(nodes, out)
    }
    fn coordinates(&self, nodes: &[NodeId], out: &mut Vec<Option<(f64, f64)>>) -> Result<()> {
        self.calls.borrow_mut().push("coordinates".into());
        self.inner.coordinates(nodes, out)
    }
    fn prepare_route(&self, start: NodeId, end: NodeId) -> Result<()> {
        self.calls
            .borrow_mut()
            .push(format!("prepare {start}->{end}"));
        Ok(())
    }
}

#[test]
fn a_graph_is_told_the_route_once_before_the_search_reads_it() {
    let g = Preparing {
        inner: Mem {
            arcs: vec![(0, 1, 1.0), (1, 2, 1.0), (0, 2, 3.0)],
            places: vec![Some((0.0, 0.0)), Some((0.0, 0.0)), Some((0.0, 0.0))],
        },
        calls: Default::default(),
    };
    let a_star = SearchOptions {
        goal: Goal::AStar,
        ..dijkstra()
    };
    run_prepared(&g, &a_star, 1);
    g.calls.borrow_mut().clear();
    let paths = k_shortest_paths(&g, 0, 2, 2, &dijkstra(), &mut SearchStats::default()).unwrap();
    assert_eq!(paths.len(), 2);
    let calls = g.calls.borrow();
    assert_eq!(calls[0], "prepare 0->2");
    assert_eq!(calls.iter().filter(|c| c.starts_with("prepare")).count(), 1);
}

fn run_prepared(g: &Preparing, o: &SearchOptions, cost: u32) {
    let r = shortest_path(g, 0, 2, o, &mut SearchStats::default())
        .unwrap()
        .unwrap();
    assert_eq!(r.cost, 2.0 * cost as f64);
    let calls = g.calls.borrow();
    assert_eq!(calls[0], "prepare 0->2", "{calls:?}");
    assert_eq!(calls.iter().filter(|c| c.starts_with("prepare")).count(), 1);
}
