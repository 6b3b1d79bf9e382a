"""Rhizome's Python API beside Kuzu's on the same data: a 1M-row column
into pyarrow and pandas, SQ5 on the chain graph, A3 on a likes graph.

    python crates/rhizome-python/bench/bench.py [--nodes 1000000] [--degree 5]
        [--runs 10] [--data target/python-bench]

Use a release build of the package (`pip install ./crates/rhizome-python`)
and `pip install pyarrow pandas kuzu`; Kuzu's column is left out if it does
not import. The data (CSV files and both databases) is made on the first
run and reused. Prints the median and the minimum of `--runs` timed runs (after a warm-up
run; Rhizome's and Kuzu's runs alternate), in milliseconds; "engine" is Rhizome's own time for the statement
(Result.elapsed), the rest of the Arrow time is the conversion.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import time
from pathlib import Path

import rhizome

try:
    import kuzu
except ImportError:  # pragma: no cover - Kuzu is optional
    kuzu = None

SQ5 = "MATCH (m)--(n) WHERE m.id % 1113 = 7 RETURN n ORDER BY m.idMod7 DESC"
SQ5_IDS = "MATCH (m)--(n) WHERE m.id % 1113 = 7 RETURN n.id ORDER BY m.idMod7 DESC"
A3 = (
    "MATCH (p:Person {id: $id})-[:LIKES]->(:Item)<-[:LIKES]-(:Person)-[:LIKES]->(j:Item) "
    "RETURN count(*)"
)


def write_csv(path: Path, header: str, rows) -> None:
    with open(path, "w") as out:
        out.write(header + "\n")
        batch = []
        for row in rows:
            batch.append(row)
            if len(batch) == 100_000:
                out.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            out.write("\n".join(batch) + "\n")


def make_data(data: Path, nodes: int, degree: int, persons: int, items: int, likes: int) -> None:
    marker = data / f"csv-{nodes}-{degree}-{persons}-{items}-{likes}"
    if marker.exists():
        return
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    print(f"writing CSV: chain {nodes:,} nodes x {degree}, likes {persons:,} x {likes} -> {items:,}")
    write_csv(data / "chain_nodes.csv", "id:ID(Chain),idMod7:int", (f"{i},{i % 7}" for i in range(nodes)))
    write_csv(
        data / "chain_rels.csv",
        ":START_ID(Chain),:END_ID(Chain)",
        (f"{i},{(i + k) % nodes}" for i in range(nodes) for k in range(1, degree + 1)),
    )
    rng = random.Random(42)
    write_csv(data / "persons.csv", "id:ID(Person)", (str(i) for i in range(persons)))
    write_csv(data / "items.csv", "id:ID(Item)", (str(i) for i in range(items)))
    write_csv(
        data / "likes.csv",
        ":START_ID(Person),:END_ID(Item)",
        (f"{p},{rng.randrange(items)}" for p in range(persons) for _ in range(likes)),
    )
    marker.touch()


def rhizome_dbs(data: Path):
    chain, likes = data / "rhizome-chain", data / "rhizome-likes"
    if not chain.exists():
        rhizome.import_csv(
            chain,
            nodes={"LBL_ALL": data / "chain_nodes.csv"},
            relationships={"REL_ONE": data / "chain_rels.csv"},
            id_type="integer",
        )
    if not likes.exists():
        rhizome.import_csv(
            likes,
            nodes={"Person": data / "persons.csv", "Item": data / "items.csv"},
            relationships={"LIKES": data / "likes.csv"},
            id_type="integer",  # also indexes :Person(id) for A3's seek
        )
    return rhizome.Database(chain, read_only=True), rhizome.Database(likes, read_only=True)


def kuzu_dbs(data: Path):
    chain, likes = data / "kuzu-chain", data / "kuzu-likes"
    fresh_chain, fresh_likes = not chain.exists(), not likes.exists()
    cdb, ldb = kuzu.Database(str(chain)), kuzu.Database(str(likes))
    c, l = kuzu.Connection(cdb), kuzu.Connection(ldb)
    if fresh_chain:
        c.execute("CREATE NODE TABLE LBL_ALL(id INT64, idMod7 INT64, PRIMARY KEY (id))")
        c.execute("CREATE REL TABLE REL_ONE(FROM LBL_ALL TO LBL_ALL)")
        c.execute(f"COPY LBL_ALL FROM '{data / 'chain_nodes.csv'}' (HEADER=true)")
        c.execute(f"COPY REL_ONE FROM '{data / 'chain_rels.csv'}' (HEADER=true)")
    if fresh_likes:
        l.execute("CREATE NODE TABLE Person(id INT64, PRIMARY KEY (id))")
        l.execute("CREATE NODE TABLE Item(id INT64, PRIMARY KEY (id))")
        l.execute("CREATE REL TABLE LIKES(FROM Person TO Item)")
        l.execute(f"COPY Person FROM '{data / 'persons.csv'}' (HEADER=true)")
        l.execute(f"COPY Item FROM '{data / 'items.csv'}' (HEADER=true)")
        l.execute(f"COPY LIKES FROM '{data / 'likes.csv'}' (HEADER=true)")
    return (cdb, c), (ldb, l)


def timed_pair(ours, theirs, runs: int):
    """Median and minimum milliseconds of each, run alternately (the shared
    machine's speed shifts; a round sees both under the same load)."""
    fns = [f for f in (ours, theirs) if f is not None]
    times = [[] for _ in fns]
    for fn in fns:
        fn()  # warm-up
    for _ in range(runs):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            times[i].append((time.perf_counter() - start) * 1000)
    return [(statistics.median(t), min(t)) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--degree", type=int, default=5)
    parser.add_argument("--persons", type=int, default=20_000)
    parser.add_argument("--items", type=int, default=1_000)
    parser.add_argument("--likes", type=int, default=20)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--data", type=Path, default=Path("target/python-bench"))
    args = parser.parse_args()
    data = args.data.resolve()
    make_data(data, args.nodes, args.degree, args.persons, args.items, args.likes)
    chain, likes = rhizome_dbs(data)
    k = kuzu_dbs(data) if kuzu is not None else None
    person = 4242 % args.persons
    print(f"rhizome {rhizome.__version__}; kuzu {kuzu.__version__ if kuzu else 'not installed'}; "
          f"{os.cpu_count()} cores; median of {args.runs} runs")

    engine = {}

    def rz(db, query, to, params=None):
        def run():
            result = db.execute(query, params)
            engine[query] = result.elapsed * 1000
            return to(result)
        return run

    rows = [
        ("MATCH (n) RETURN n.id -> pyarrow", rz(chain, "MATCH (n) RETURN n.id", lambda r: r.arrow()),
         (lambda: k[0][1].execute("MATCH (n) RETURN n.id").get_as_arrow()) if k else None,
         lambda t: t.num_rows, "MATCH (n) RETURN n.id"),
        ("MATCH (n) RETURN n.id -> pandas", rz(chain, "MATCH (n) RETURN n.id", lambda r: r.df()),
         (lambda: k[0][1].execute("MATCH (n) RETURN n.id").get_as_df()) if k else None,
         len, "MATCH (n) RETURN n.id"),
        ("SQ5 (RETURN n) -> pyarrow", rz(chain, SQ5, lambda r: r.arrow()),
         (lambda: k[0][1].execute(SQ5).get_as_arrow()) if k else None,
         lambda t: t.num_rows, SQ5),
        ("SQ5 (RETURN n.id) -> pyarrow", rz(chain, SQ5_IDS, lambda r: r.arrow()),
         (lambda: k[0][1].execute(SQ5_IDS).get_as_arrow()) if k else None,
         lambda t: t.num_rows, SQ5_IDS),
        ("A3 count(*) -> fetchall", rz(likes, A3, lambda r: r.fetchall(), {"id": person}),
         (lambda: k[1][1].execute(A3, {"id": person}).get_all()) if k else None,
         lambda r: r[0][0], A3),
    ]
    print(f"{'query':32} {'rhizome med/min':>16} {'(engine)':>9} {'kuzu med/min':>14}  rows/result")
    for name, ours, theirs, size, query in rows:
        check = [ours(), theirs() if theirs else None]
        measured = timed_pair(ours, theirs, args.runs)
        (om, on) = measured[0]
        line = f"{name:32} {om:8.1f} /{on:6.1f} {engine[query]:9.1f}"
        if theirs is not None:
            (tm, tn) = measured[1]
            line += f" {tm:7.1f} /{tn:5.1f}  {size(check[0])} / {size(check[1])}"
        else:
            line += f" {'-':>14}  {size(check[0])}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
