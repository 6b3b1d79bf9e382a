"""The Python driver's side of `rhizome bench server`.

Usage: server_driver.py bolt://HOST:PORT ROUND_TRIPS

Prints `key = value` lines: the round trip of `RETURN 1` through a session
(p50 and p99 in microseconds, after a warm-up) and the rate at which
`MATCH (n) RETURN n.id` streams to the driver (rows per second, with the
wall and CPU seconds of the driver's process).
"""

import sys
import time

from neo4j import GraphDatabase


def main() -> None:
    uri, round_trips = sys.argv[1], int(sys.argv[2])
    with GraphDatabase.driver(uri, auth=None) as driver:
        with driver.session() as session:
            for _ in range(max(round_trips // 10, 10)):
                session.run("RETURN 1").consume()
            samples = []
            for _ in range(round_trips):
                started = time.perf_counter()
                session.run("RETURN 1").consume()
                samples.append(time.perf_counter() - started)
            samples.sort()
            pick = lambda p: samples[round((len(samples) - 1) * p / 100)] * 1e6
            print(f"rtt_p50_us = {pick(50):.1f}")
            print(f"rtt_p99_us = {pick(99):.1f}")
            started, cpu = time.perf_counter(), time.process_time()
            rows = 0
            for _ in session.run("MATCH (n) RETURN n.id"):
                rows += 1
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
            print(f"stream_rows = {rows}")
            print(f"stream_rows_per_second = {rows / elapsed:.0f}")
            # The driver's own CPU time: on a loaded machine the wall time
            # is mostly waiting for a core.
            print(f"stream_wall_seconds = {elapsed:.2f}")
            print(f"stream_cpu_seconds = {cpu:.2f}")


if __name__ == "__main__":
    main()
