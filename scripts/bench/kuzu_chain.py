"""Kuzu's figures for `rhizome bench aggregate`, measured on this machine.

Issue 21 compares Rhizome's aggregation on the chain graph with Kuzu 0.11.
This script loads the same chain graph (`rhizome generate chain`, N nodes of
degree D) into Kuzu, runs the suite's chain queries in Kuzu's dialect with
1 and 2 threads, each (query, threads) pair in a child process of its own so
the peak resident set (the child's own `ru_maxrss`) is that query's, and writes one line per pair to
`DATA_DIR/kuzu-chain-N-D/reference.tsv`, which `rhizome bench aggregate`
prints beside its own figures. Run it through `scripts/bench-kuzu.sh`, which
installs Kuzu into a virtual environment first.

Usage: kuzu_chain.py --rhizome BIN --data-dir DIR [--nodes N] [--degree D]
                     [--threads 1,2] [--runs R] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

# The chain queries of `rhizome bench aggregate` (crates/rhizome-bench/src/
# aggregate.rs) in Kuzu's Cypher: one node table, one relationship table.
# Kuzu matches walks where Cypher matches trails (no relationship twice), so
# SQ3C's count differs; the other results are equal.
QUERIES = {
    "COUNT": "MATCH (n) RETURN count(n)",
    "SQ2C": "MATCH (n) WHERE (n.id % 7) / (n.id % 5 + 1) > n.id % 3 RETURN count(n)",
    "FSUM": "MATCH (n:LBL_ALL) WHERE n.idMod7 < 3 RETURN sum(n.id) AS s, avg(n.id) AS a, max(n.id) AS m",
    "GROUP": "MATCH (n) RETURN n.idMod7 AS k, count(*) AS c, min(n.id) AS m",
    "SQ3C": "MATCH (:LBL_ALL {id: 777})--()--()--()--(n) RETURN count(n)",
    "DISTINCT": "MATCH (a)-->(b)-->(c) RETURN count(DISTINCT c)",
    "COLLECT": "MATCH (a)--(b) WITH a, collect(b.id) AS ids "
    "RETURN a.id, size(ids) ORDER BY size(ids) DESC, a.id LIMIT 1",
}


def load(kuzu, csv: Path, db: Path) -> None:
    """Creates the Kuzu database `db` from the chain CSV files in `csv`."""
    database = kuzu.Database(str(db))
    conn = kuzu.Connection(database)
    conn.execute("CREATE NODE TABLE LBL_ALL(id INT64, idMod7 INT64, PRIMARY KEY (id))")
    conn.execute("CREATE REL TABLE REL_ONE(FROM LBL_ALL TO LBL_ALL)")
    for nodes in ("nodes_10pct.csv", "nodes.csv"):
        conn.execute(f"COPY LBL_ALL FROM '{csv / nodes}' (HEADER=true)")
    conn.execute(f"COPY REL_ONE FROM '{csv / 'rels.csv'}' (HEADER=true)")


def child(db: Path, name: str, threads: int, runs: int) -> None:
    """Runs one query `runs` times after a warm-up and prints a JSON line."""
    import kuzu

    database = kuzu.Database(str(db), read_only=True)
    conn = kuzu.Connection(database, num_threads=threads)
    query = QUERIES[name]
    result = conn.execute(query).get_all()  # warm-up; also the result
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        conn.execute(query).get_all()
        times.append((time.perf_counter() - start) * 1000)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB on Linux
    print(json.dumps({"median_ms": statistics.median(times), "min_ms": min(times),
                      "peak_mb": peak_kb / 1024, "result": str(result)[:200]}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rhizome", default="rhizome", help="the rhizome binary (generates the CSV)")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--degree", type=int, default=50)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="")
    parser.add_argument("--child", nargs=3, metavar=("DB", "NAME", "THREADS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), args.child[1], int(args.child[2]), args.runs)
        return 0

    if args.data_dir is None:
        parser.error("--data-dir is required")
    import kuzu

    # Like the benchmark: every chain query but COLLECT (100M ids) unless
    # named; names of the suite's other graph have no Kuzu formulation here.
    asked = [n.strip().upper() for n in args.only.split(",") if n.strip()]
    names = [n for n in asked if n in QUERIES] if asked else [n for n in QUERIES if n != "COLLECT"]
    for n in asked:
        if n not in QUERIES:
            print(f"{n}: no Kuzu formulation (only the chain queries {', '.join(QUERIES)})")
    threads = [int(t) for t in args.threads.split(",")]
    home = args.data_dir / f"kuzu-chain-{args.nodes}-{args.degree}"
    db = home / "db"
    if not (home / "loaded").exists():
        csv = home / "csv"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        subprocess.run([args.rhizome, "generate", "chain", str(csv), "--nodes", str(args.nodes),
                        "--degree", str(args.degree)], check=True, stdout=subprocess.DEVNULL)
        start = time.perf_counter()
        load(kuzu, csv, db)
        print(f"loaded the chain graph into Kuzu in {time.perf_counter() - start:.1f} s", flush=True)
        shutil.rmtree(csv)
        (home / "loaded").touch()

    # Rows of earlier runs stay for the (query, threads) pairs not measured now.
    reference = home / "reference.tsv"
    rows = {}
    if reference.exists():
        for line in reference.read_text().splitlines():
            if line and not line.startswith("#"):
                fields = line.split("\t")
                rows[(fields[0], fields[1])] = line
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for name in names:
        for t in threads:
            load_avg = os.getloadavg()[0]
            proc = subprocess.Popen(
                [sys.executable, __file__, "--runs", str(args.runs), "--child", str(db), name, str(t)],
                stdout=subprocess.PIPE, text=True)
            out, _ = proc.communicate()
            if proc.returncode != 0:
                print(f"{name} with {t} threads failed (exit {proc.returncode})", file=sys.stderr)
                return 1
            row = json.loads(out.strip().splitlines()[-1])
            rows[(name, str(t))] = "\t".join([
                name, str(t), f"{row['median_ms']:.3f}", f"{row['min_ms']:.3f}", f"{row['peak_mb']:.0f}",
                str(args.runs), when, f"{load_avg:.1f}", kuzu.__version__, row["result"]])
            print(f"Kuzu {name:9} {t} thread(s): median {row['median_ms']:9.2f} ms, min {row['min_ms']:9.2f} ms, "
                  f"peak {row['peak_mb']:6.0f} MB, {row['result']}", flush=True)
    header = ("# Kuzu on the chain graph, measured by scripts/bench/kuzu_chain.py: median and minimum of RUNS "
              "warm runs, peak resident set of the process\n"
              "# name\tthreads\tmedian_ms\tmin_ms\tpeak_mb\truns\twhen\tload\tkuzu\tresult\n")
    reference.write_text(header + "".join(line + "\n" for line in rows.values()))
    print(f"wrote {reference}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
