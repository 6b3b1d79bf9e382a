//! The test oracle for route costs: the arcs of a DIMACS `.gr` file read
//! with a few lines of code of their own, and a textbook Dijkstra over them,
//! sharing nothing with the code under test. Included by path from the
//! route and source test suites.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The arcs of a `.gr` file's text: `arcs[u]` lists `(v, weight)` for every
/// `a u v weight` line (node numbers are 1-based, so `arcs[0]` is empty).
pub fn gr_arcs(text: &str) -> Vec<Vec<(usize, u64)>> {
    let mut arcs: Vec<Vec<(usize, u64)>> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.first() {
            Some(&"p") => arcs = vec![Vec::new(); f[2].parse::<usize>().unwrap() + 1],
            Some(&"a") => arcs[f[1].parse::<usize>().unwrap()]
                .push((f[2].parse().unwrap(), f[3].parse().unwrap())),
            _ => {}
        }
    }
    arcs
}

/// The distance from `from` to every node over `arcs` (`u64::MAX` where
/// unreachable).
pub fn distances(arcs: &[Vec<(usize, u64)>], from: usize) -> Vec<u64> {
    let mut dist = vec![u64::MAX; arcs.len()];
    let mut heap = BinaryHeap::new();
    dist[from] = 0;
    heap.push(Reverse((0u64, from)));
    while let Some(Reverse((d, u))) = heap.pop() {
        if d > dist[u] {
            continue;
        }
        for &(v, w) in &arcs[u] {
            if d + w < dist[v] {
                dist[v] = d + w;
                heap.push(Reverse((d + w, v)));
            }
        }
    }
    dist
}
