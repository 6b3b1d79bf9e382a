//! Golden EXPLAIN plans: query → expected plan text, planned against a
//! small fake graph's statistics:
//!
//! * 1,000 `:Person`, 5,000 `:Item`, 100 `:Tag` (6,100 nodes);
//! * 20,000 `LIKES` (every one `:Person` → `:Item`), 5,000 `KNOWS`
//!   (`:Person` → `:Person`), 10,000 `HAS_TAG` (`:Item` → `:Tag`);
//! * indexes on `:Person(id)` (1,000 distinct values), `:Person(name)`
//!   (900) and `:Item(price)` (500).
//!
//! Run with `BLESS=1` to print the actual plans instead of failing.

use rhizome_planner::{explain, plan_statement, PlannerContext};

struct Fake;

const LABELS: &[(&str, u64)] = &[("Person", 1000), ("Item", 5000), ("Tag", 100)];
const TRIPLES: &[(&str, &str, &str, u64)] = &[
    ("Person", "LIKES", "Item", 20_000),
    ("Person", "KNOWS", "Person", 5_000),
    ("Item", "HAS_TAG", "Tag", 10_000),
];
const INDEXES: &[(&str, &str, u64)] = &[
    ("Person", "id", 1000),
    ("Person", "name", 900),
    ("Item", "price", 500),
];

impl PlannerContext for Fake {
    fn label_count(&self, label: &str) -> Option<u64> {
        LABELS.iter().find(|(l, _)| *l == label).map(|(_, c)| *c)
    }
    fn node_count(&self) -> u64 {
        6_100
    }
    fn rel_count(&self, rel_type: Option<&str>) -> u64 {
        TRIPLES
            .iter()
            .filter(|(_, t, _, _)| rel_type.is_none_or(|x| x == *t))
            .map(|(.., c)| c)
            .sum()
    }
    fn triple_count(&self, src: Option<&str>, t: Option<&str>, dst: Option<&str>) -> u64 {
        TRIPLES
            .iter()
            .filter(|(s, ty, d, _)| {
                src.is_none_or(|x| x == *s)
                    && t.is_none_or(|x| x == *ty)
                    && dst.is_none_or(|x| x == *d)
            })
            .map(|(.., c)| c)
            .sum()
    }
    fn has_index(&self, label: &str, key: &str) -> bool {
        INDEXES.iter().any(|(l, k, _)| *l == label && *k == key)
    }
    fn distinct_values(&self, label: &str, key: &str) -> Option<u64> {
        INDEXES
            .iter()
            .find(|(l, k, _)| *l == label && *k == key)
            .map(|(.., d)| *d)
    }
}

fn plan_text(query: &str) -> String {
    let analyzed = rhizome_cypher::compile(query).expect("query compiles");
    let planned = plan_statement(&analyzed, &Fake).expect("query plans");
    explain(&planned)
}

fn golden(query: &str, expected: &str) {
    let actual = plan_text(query);
    if std::env::var_os("BLESS").is_some() {
        println!("=== {query}\n{actual}");
        return;
    }
    let expected = expected
        .lines()
        .map(|l| l.strip_prefix("        ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        actual.trim_end(),
        expected.trim(),
        "\nquery: {query}\nactual plan:\n{actual}"
    );
}

#[test]
fn label_scan_and_expand() {
    golden(
        "MATCH (t:Tag)<-[:HAS_TAG]-(i) RETURN i.price AS price",
        r#"
        Projection i.price AS price  [est. 10000 rows]
        └─ Expand (t)<-[  anon_0:HAS_TAG]-(i)  [est. 10000 rows]
           └─ LabelScan (t:Tag)  [est. 100 rows]
              └─ Argument  [est. 1 rows]
        Columns: price
        "#,
    );
}

#[test]
fn index_seek_for_equality() {
    golden(
        "MATCH (p:Person {id: $id})-[:KNOWS]->(f) RETURN f.name",
        r#"
        Projection f.name AS f.name  [est. 5 rows]
        └─ Expand (p)-[  anon_0:KNOWS]->(f)  [est. 5 rows]
           └─ IndexSeek (p:Person {id = $id})  [est. 1 rows] [index_seek]
              └─ Argument  [est. 1 rows]
        Columns: f.name
        "#,
    );
}

#[test]
fn index_seek_for_range() {
    golden(
        "MATCH (i:Item) WHERE i.price >= 10 AND i.price < 20 AND i.name STARTS WITH 'a' RETURN i",
        r#"
        Filter (i.name STARTS WITH 'a')  [est. 750 rows]
        └─ IndexSeek (i:Item {price range >= 10 < 20})  [est. 1500 rows] [index_seek]
           └─ Argument  [est. 1 rows]
        Columns: i
        "#,
    );
}

#[test]
fn var_length_expand() {
    golden("MATCH (a:Person {name: 'Ann'})-[r:KNOWS*1..3 {since: 2020}]->(b:Person) RETURN b, size(r) AS hops", r#"
        Projection size(r) AS hops  [est. 172 rows]
        └─ VarLengthExpand (a)-[r:KNOWS*1..3]->(b)  [est. 172 rows]
           └─ IndexSeek (a:Person {name = 'Ann'})  [est. 1 rows] [index_seek]
              └─ Argument  [est. 1 rows]
        Columns: b, hops
        "#);
}

#[test]
fn optional_match() {
    golden(
        "MATCH (p:Person) OPTIONAL MATCH (p)-[:LIKES]->(i:Item) WHERE i.price > 100 RETURN p, i",
        r#"
        Optional  [est. 6000 rows]
        ├─ LabelScan (p:Person)  [est. 1000 rows]
        │  └─ Argument  [est. 1 rows]
        └─ Filter (i.price > 100)  [est. 6 rows]
           └─ Expand (p)-[  anon_0:LIKES]->(i)  [est. 20 rows] [drop_implied_label]
              └─ Argument  [est. 1 rows]
        Columns: p, i
        "#,
    );
}

#[test]
fn optional_single_expand() {
    golden(
        "MATCH (p:Person) OPTIONAL MATCH (p)-[:KNOWS]->(f) RETURN p, f",
        r#"
        OptionalExpand (p)-[  anon_0:KNOWS]->(f)  [est. 5000 rows] [optional_expand]
        └─ LabelScan (p:Person)  [est. 1000 rows]
           └─ Argument  [est. 1 rows]
        Columns: p, f
        "#,
    );
}

#[test]
fn aggregation_with_grouping() {
    golden("MATCH (p:Person)-[:LIKES]->(i:Item) RETURN p.name AS name, count(*) AS likes, avg(i.price) + 1 AS avg", r#"
        Projection (  anon_1 + 1) AS avg  [est. 141 rows]
        └─ Aggregate keys [p.name AS name], aggregates [CountStar() AS likes, Avg(i.price) AS   anon_1]  [est. 141 rows]
           └─ Expand (p)-[  anon_0:LIKES]->(i)  [est. 20000 rows] [drop_implied_label]
              └─ LabelScan (p:Person)  [est. 1000 rows]
                 └─ Argument  [est. 1 rows]
        Columns: name, likes, avg
        "#);
}

#[test]
fn order_by_limit_becomes_top() {
    golden(
        "MATCH (i:Item) RETURN i.name AS name ORDER BY i.price DESC, name SKIP 5 LIMIT 10",
        r#"
        Skip 5  [est. 10 rows] [limit_to_top]
        └─ Top   anon_0 DESC, name LIMIT 15  [est. 15 rows] [fold_constants]
           └─ Projection i.price AS   anon_0  [est. 5000 rows]
              └─ Projection i.name AS name  [est. 5000 rows]
                 └─ LabelScan (i:Item)  [est. 5000 rows]
                    └─ Argument  [est. 1 rows]
        Columns: name
        "#,
    );
}

#[test]
fn exists_becomes_semi_apply() {
    golden("MATCH (p:Person) WHERE p.age > 30 AND EXISTS { (p)-[:LIKES]->(:Item {price: 1}) } AND NOT (p)-[:KNOWS]->() RETURN p", r#"
        AntiSemiApply scope: dfs max_si=1  [est. 75 rows] [exists_to_semi_apply]
        ├─ SemiApply scope: dfs max_si=1  [est. 150 rows] [exists_to_semi_apply]
        │  ├─ Filter (p.age > 30)  [est. 300 rows]
        │  │  └─ LabelScan (p:Person)  [est. 1000 rows]
        │  │     └─ Argument  [est. 1 rows]
        │  └─ Filter (  anon_0.price = 1)  [est. 2 rows]
        │     └─ Expand (p)-[  anon_1:LIKES]->(  anon_0)  [est. 20 rows] [drop_implied_label]
        │        └─ Argument  [est. 1 rows]
        └─ Expand (p)-[  anon_3:KNOWS]->(  anon_2)  [est. 5 rows]
           └─ Argument  [est. 1 rows]
        Columns: p
        "#);
}

#[test]
fn pattern_comprehension_subquery() {
    golden(
        "MATCH (p:Person) RETURN p.name, [(p)-[:LIKES]->(i) WHERE i.price > 5 | i.name] AS items",
        r#"
        Projection p.name AS p.name, [pattern comprehension] AS items  [est. 1000 rows]
        ├─ LabelScan (p:Person)  [est. 1000 rows]
        │  └─ Argument  [est. 1 rows]
        └─ [COLLECT subquery] Filter (i.price > 5)  [est. 1 rows]
           └─ Expand (p)-[  anon_0:LIKES]->(i)  [est. 3 rows]
              └─ Argument  [est. 1 rows]
        Columns: p.name, items
        "#,
    );
}

#[test]
fn cyclic_triangle_uses_expand_into() {
    golden(
        "MATCH (a:Person)-[:KNOWS]->(b)-[:KNOWS]->(c)-[:KNOWS]->(a) RETURN a, b, c",
        r#"
        ExpandInto (c)-[  anon_2:KNOWS]->(a)  [est. 3 rows]
        └─ Expand (b)-[  anon_1:KNOWS]->(c)  [est. 4098 rows]
           └─ Expand (a)-[  anon_0:KNOWS]->(b)  [est. 5000 rows]
              └─ LabelScan (a:Person)  [est. 1000 rows]
                 └─ Argument  [est. 1 rows]
        Columns: a, b, c
        "#,
    );
}

#[test]
fn disconnected_patterns() {
    golden(
        "MATCH (t:Tag), (p:Person {id: 1}) RETURN t, p",
        r#"
        CartesianProduct  [est. 100 rows]
        ├─ IndexSeek (p:Person {id = 1})  [est. 1 rows] [index_seek]
        │  └─ Argument  [est. 1 rows]
        └─ LabelScan (t:Tag)  [est. 100 rows]
           └─ Argument  [est. 1 rows]
        Columns: t, p
        "#,
    );
    golden(
        "MATCH (p:Person), (i:Item) WHERE p.name = i.name RETURN p, i",
        r#"
        HashJoin   anon_0  [est. 5000 rows]
        ├─ Projection i.name AS   anon_0  [est. 5000 rows]
        │  └─ LabelScan (i:Item)  [est. 5000 rows]
        │     └─ Argument  [est. 1 rows]
        └─ Projection p.name AS   anon_1  [est. 1000 rows]
           └─ LabelScan (p:Person)  [est. 1000 rows]
              └─ Argument  [est. 1 rows]
        Columns: p, i
        "#,
    );
}

#[test]
fn counting_query_uses_expand_count() {
    golden(
        "MATCH (p:Person {id: $id})-[:LIKES]->(:Item)<-[:LIKES]-(:Person)-[:LIKES]->(j:Item) RETURN count(*)",
        r#"
        Aggregate keys [], aggregates [Sum(  anon_5) AS count(*)]  [est. 1 rows] [expand_count]
        └─ ExpandCount count of (  anon_0)<-[:LIKES]-()-[:LIKES]->() AS   anon_5  [est. 20 rows] [fuse_count_hops]
           └─ Expand (p)-[  anon_1:LIKES]->(  anon_0)  [est. 20 rows] [drop_implied_label]
              └─ IndexSeek (p:Person {id = $id})  [est. 1 rows] [index_seek]
                 └─ Argument  [est. 1 rows]
        Columns: count(*)
        "#,
    );
    golden(
        "MATCH (p:Person {id: $id})-[:KNOWS]->(f)-[r:LIKES]->(i) WHERE r.weight > 0.5 RETURN f.name AS name, count(*) AS n",
        r#"
        Aggregate keys [f.name AS name], aggregates [Sum(  anon_1) AS n]  [est. 1 rows] [expand_count]
        └─ Filter (  anon_1 > 0)  [est. 2 rows]
           └─ ExpandCount count of (f)-[:LIKES]->() AS   anon_1  [est. 5 rows] [expand_count]
              └─ Expand (p)-[  anon_0:KNOWS]->(f)  [est. 5 rows]
                 └─ IndexSeek (p:Person {id = $id})  [est. 1 rows] [index_seek]
                    └─ Argument  [est. 1 rows]
        Columns: name, n
        "#,
    );
}

#[test]
fn union() {
    golden(
        "MATCH (p:Person) RETURN p.name AS name UNION MATCH (t:Tag) RETURN t.name AS name",
        r#"
        Union distinct  [est. 1100 rows]
        ├─ Projection name AS name  [est. 1000 rows]
        │  └─ Projection p.name AS name  [est. 1000 rows]
        │     └─ LabelScan (p:Person)  [est. 1000 rows]
        │        └─ Argument  [est. 1 rows]
        └─ Projection name AS name  [est. 100 rows]
           └─ Projection t.name AS name  [est. 100 rows]
              └─ LabelScan (t:Tag)  [est. 100 rows]
                 └─ Argument  [est. 1 rows]
        Columns: name
        "#,
    );
}

#[test]
fn unwind() {
    golden(
        "UNWIND $ids AS id MATCH (p:Person {id: id}) RETURN p",
        r#"
        IndexSeek (p:Person {id = id})  [est. 10 rows] [index_seek]
        └─ Unwind $ids AS id  [est. 10 rows]
           └─ Argument  [est. 1 rows]
        Columns: p
        "#,
    );
}

#[test]
fn call_subquery() {
    golden("MATCH (p:Person) CALL { WITH p MATCH (p)-[:LIKES]->(i) RETURN count(i) AS n } RETURN p.name, n", r#"
        Projection p.name AS p.name  [est. 1000 rows]
        └─ Apply  [est. 1000 rows]
           ├─ LabelScan (p:Person)  [est. 1000 rows]
           │  └─ Argument  [est. 1 rows]
           └─ Aggregate keys [], aggregates [Sum(  anon_1) AS n]  [est. 1 rows] [expand_count]
              └─ ExpandCount count of (p)-[:LIKES]->() AS   anon_1  [est. 1 rows] [expand_count]
                 └─ Argument  [est. 1 rows]
        Columns: p.name, n
        "#);
}

#[test]
fn shortest_path() {
    golden("MATCH (a:Person {id: 1}), (b:Person {id: 2}), p = shortestPath((a)-[:KNOWS*..6]-(b)) RETURN length(p)", r#"
        Projection length(p) AS length(p)  [est. 1 rows]
        └─ ShortestPath p = Single((a)..(b))  [est. 1 rows]
           └─ IndexSeek (b:Person {id = 2})  [est. 1 rows] [index_seek]
              └─ IndexSeek (a:Person {id = 1})  [est. 1 rows] [index_seek]
                 └─ Argument  [est. 1 rows]
        Columns: length(p)
        "#);
}

#[test]
fn node_by_id_seek_and_projection_pruning() {
    golden(
        "MATCH (n) WHERE id(n) IN [1, 2] RETURN n",
        r#"
        NodeByIdSeek (n) WHERE id = [1, 2]  [est. 2 rows] [node_by_id_seek]
        └─ Argument  [est. 1 rows]
        Columns: n
        "#,
    );
    golden(
        "MATCH (p:Person) WITH p, p.name AS unused, p.age AS age RETURN p, age",
        r#"
        Projection p.age AS age  [est. 1000 rows] [prune_projections]
        └─ LabelScan (p:Person)  [est. 1000 rows]
           └─ Argument  [est. 1 rows]
        Columns: p, age
        "#,
    );
}

#[test]
fn top_k_computes_returned_expressions_after_the_cut() {
    golden(
        "MATCH (i:Item) RETURN i.name AS name, i.price * 2 AS double ORDER BY i.price DESC LIMIT 3",
        r#"
        Projection i.name AS name, (i.price * 2) AS double  [est. 3 rows]
        └─ Top   anon_0 DESC LIMIT 3  [est. 3 rows] [push_down_limit]
           └─ Projection i.price AS   anon_0  [est. 5000 rows]
              └─ LabelScan (i:Item)  [est. 5000 rows]
                 └─ Argument  [est. 1 rows]
        Columns: name, double
        "#,
    );
}

#[test]
fn create_after_match_reuses_bound_nodes() {
    golden(
        "MATCH (a:Person {id: 1}), (b:Person {id: 2}) CREATE (a)-[r:KNOWS {since: 2024}]->(b) RETURN r",
        r#"
        Eager  [est. 1 rows]
        └─ Create (a)-[r:KNOWS {since: 2024}]->(b)  [est. 1 rows]
           └─ IndexSeek (b:Person {id = 2})  [est. 1 rows] [index_seek]
              └─ IndexSeek (a:Person {id = 1})  [est. 1 rows] [index_seek]
                 └─ Argument  [est. 1 rows]
        Columns: r
        "#,
    );
}

#[test]
fn reads_after_a_write_sit_behind_an_eager_barrier() {
    golden(
        "UNWIND range(1, 3) AS i CREATE (n:Tag {i: i}) WITH n MATCH (t:Tag) RETURN count(t) AS c",
        r#"
        Aggregate keys [], aggregates [Count(t) AS c]  [est. 1 rows]
        └─ CartesianProduct  [est. 1000 rows]
           ├─ Eager  [est. 10 rows]
           │  └─ Create (n:Tag {i: i})  [est. 10 rows]
           │     └─ Unwind range(1, 3) AS i  [est. 10 rows]
           │        └─ Argument  [est. 1 rows]
           └─ LabelScan (t:Tag)  [est. 100 rows]
              └─ Argument  [est. 1 rows]
        Columns: c
        "#,
    );
}

#[test]
fn set_remove_delete() {
    golden(
        "MATCH (p:Person {id: 1}) SET p.seen = true, p:Seen, p += {n: 1} REMOVE p.old, p:New DETACH DELETE p",
        r#"
        DetachDelete p  [est. 1 rows]
        └─ Remove p.old, p:New  [est. 1 rows]
           └─ Set p.seen = true, p:Seen, p += {n: 1}  [est. 1 rows]
              └─ IndexSeek (p:Person {id = 1})  [est. 1 rows] [index_seek]
                 └─ Argument  [est. 1 rows]
        Columns:
        "#,
    );
}

#[test]
fn merge_with_actions_and_foreach() {
    golden(
        "MERGE (t:Tag {name: 'x'}) ON CREATE SET t.new = true ON MATCH SET t.hits = t.hits + 1 \
         FOREACH (i IN [1, 2] | CREATE (:Item {price: i}))",
        r#"
        Foreach i IN [1, 2]  [est. 1 rows]
        ├─ Merge create (t:Tag {name: 'x'}) on create t.new = true on match t.hits = (t.hits + 1)  [est. 1 rows]
        │  ├─ Argument  [est. 1 rows]
        │  └─ Filter (t.name = 'x')  [est. 10 rows]
        │     └─ LabelScan (t:Tag)  [est. 100 rows]
        │        └─ Argument  [est. 1 rows]
        └─ Create (  anon_0:Item {price: i})  [est. 1 rows]
           └─ Argument  [est. 1 rows]
        Columns:
        "#,
    );
}

#[test]
fn distinct_end_nodes_use_a_frontier_walk() {
    golden(
        "MATCH (a:Person)-[:LIKES]->(b)-[:HAS_TAG]->(c) RETURN min(c.name) AS m, count(DISTINCT c) AS k",
        r#"
        Aggregate keys [], aggregates [Min(c.name) AS m, Count(c) AS k]  [est. 1 rows] [distinct_endpoints]
        └─ DistinctEndpoints distinct c of (a)-[:LIKES]->()-[:HAS_TAG]->(c)  [est. 1000 rows] [distinct_endpoints]
           └─ LabelScan (a:Person)  [est. 1000 rows]
              └─ Argument  [est. 1 rows]
        Columns: m, k
        "#,
    );
}
