//! How far the machine itself scales from one worker to all: a plain loop
//! with no query engine in it, run on the engine's own worker pool (so it
//! takes the same threads and wake-ups a query does) and timed in the same
//! rounds as each query. The suite prints its speedup beside the query's,
//! so a query that scales less than the target can be told apart from a
//! machine that, at that moment, does not scale either.
//!
//! The loop is memory-bound the way graph queries are: each worker reads
//! runs of 100 floats (one adjacency list's weights in A4) at random places
//! of a buffer of its own (64 MiB with two workers; 256 MiB in all for
//! more, 4 MiB each at least), and counts those above a threshold.
//!
//! A second loop, the *hand-off* probe, does what a parallel sort does to
//! memory: each worker radix-sorts 50,000 rows of 40 bytes, and on all
//! workers each takes the rows another worker sorted last, as SQ4's merge
//! reads the other worker's runs. On one worker the rows stay with it.
//! Beside them, [`MachineProbe::round_trip`] times a cache line's trip
//! between two workers and back.

use rhizome_exec::scheduler::{ScopeOptions, WorkerPool};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Floats in each worker's buffer at most (64 MiB).
const BUFFER_FLOATS: usize = 8 << 20;
/// Floats in all workers' buffers together at most (256 MiB), so a pool of
/// many workers does not take gigabytes; each buffer keeps at least
/// [`MIN_BUFFER_FLOATS`], and together they stay far larger than a
/// last-level cache.
const TOTAL_FLOATS: usize = 32 << 20;
/// Floats in each worker's buffer at least (4 MiB).
const MIN_BUFFER_FLOATS: usize = 512 << 10;
/// Floats read in a row: one list of A4's weights.
const RUN: usize = 100;
/// Runs each worker reads per probe (about 0.3 ms on this machine).
const RUNS_PER_PROBE: usize = 1500;

/// How long the untimed probe runs before a block of timed ones last: on
/// this virtual machine a core that sat idle (through a one-worker block
/// of a long query) is slow for a while after it has work again, and a
/// single 0.3 ms lead-in run showed a speedup of 1.13 after SQ3's
/// one-worker blocks where the query itself, after its 280 ms lead-in,
/// showed 1.95.
pub const LEAD_IN: Duration = Duration::from_millis(2);

/// Round trips of one cache line per [`MachineProbe::round_trip`].
const ROUND_TRIPS: u64 = 2000;

/// Rows each worker sorts in a hand-off probe run (about a worker's share
/// of SQ4's 100,000 rows).
const HANDOFF_ROWS: usize = 50_000;

/// A row of the hand-off probe: 40 bytes, as SQ4's sort rows are.
type ProbeRow = [u64; 5];

/// Rows of the hand-off probe and the buffer a sort pass scatters them to.
struct SortBuffers {
    rows: Vec<ProbeRow>,
    spare: Vec<ProbeRow>,
}

/// The probes' buffers, one set per worker of the global pool.
pub struct MachineProbe {
    buffers: Vec<Arc<[f64]>>,
    /// Rows of the hand-off probe; run `r` on all workers gives worker `t`
    /// set `(t + r) % workers`, so no worker sorts the rows it sorted last.
    handoff: Arc<[Mutex<SortBuffers>]>,
    pool: &'static WorkerPool,
}

impl MachineProbe {
    /// Buffers for every worker of the global pool, written once so their
    /// pages are mapped before any timing.
    pub fn new() -> MachineProbe {
        let workers = WorkerPool::global().threads().max(1);
        MachineProbe::with_buffer_floats(
            (TOTAL_FLOATS / workers).clamp(MIN_BUFFER_FLOATS, BUFFER_FLOATS),
        )
    }

    /// The probe with buffers of `floats` floats (more than [`RUN`]).
    fn with_buffer_floats(floats: usize) -> MachineProbe {
        let pool = WorkerPool::global();
        let buffers = (0..pool.threads())
            .map(|t| {
                (0..floats.max(RUN + 1))
                    .map(|i| ((i * 7 + t) % 1000) as f64 - 500.0)
                    .collect()
            })
            .collect();
        let handoff = (0..pool.threads())
            .map(|t| {
                let mut state = t as u64 + 1;
                let rows = (0..HANDOFF_ROWS)
                    .map(|i| [next_random(&mut state), i as u64, t as u64, 0, 0])
                    .collect();
                Mutex::new(SortBuffers {
                    rows,
                    spare: vec![[0; 5]; HANDOFF_ROWS],
                })
            })
            .collect();
        MachineProbe {
            buffers,
            handoff,
            pool,
        }
    }

    /// Workers of the pool, so the most [`MachineProbe::run`] can use.
    pub fn threads(&self) -> usize {
        self.buffers.len()
    }

    /// Runs the probe on `threads` workers at once (each reads the same
    /// amount from its own buffer) and returns the wall time; `seed` picks
    /// the places read. With more workers the same time means they scaled
    /// perfectly: the speedup is `threads × time(1) / time(threads)`.
    pub fn run(&self, threads: usize, seed: u64) -> Duration {
        let buffers = self.buffers.clone();
        self.on_workers(threads, move |t| {
            std::hint::black_box(count_runs(&buffers[t], seed + t as u64));
        })
    }

    /// Runs the hand-off probe on `threads` workers at once: each sorts one
    /// set of rows, on more than one worker a set another worker sorted in
    /// the run before (`run` numbers the runs). Returns the wall time; the
    /// speedup is `threads × time(1) / time(threads)` as for
    /// [`MachineProbe::run`].
    pub fn run_handoff(&self, threads: usize, run: u64) -> Duration {
        let threads = threads.clamp(1, self.threads());
        let sets = self.handoff.clone();
        self.on_workers(threads, move |t| {
            let set = (t + run as usize) % threads;
            let mut buffers = sets[set].lock().unwrap_or_else(|p| p.into_inner());
            sort_rows(&mut buffers);
        })
    }

    /// How long one cache line takes to go from one worker to another and
    /// back, on average over [`ROUND_TRIPS`]: two workers take turns
    /// writing one counter. On the 2-vCPU virtual machine this is 50–120 ns
    /// while the host runs the vCPUs on cores that share a cache, and
    /// 300–400 ns while it does not; in the latter placement every line the
    /// workers hand each other (task queues, counters, sorted rows) costs
    /// several times more. None on a pool of one worker. Runs on the pool's
    /// own threads, so no third thread competes with them for the cores.
    pub fn round_trip(&self) -> Option<Duration> {
        if self.threads() < 2 {
            return None;
        }
        let shared = Arc::new(crate::PaddedCount::default());
        let elapsed = Arc::new(AtomicU64::new(0));
        let e = elapsed.clone();
        self.on_workers(2, move |t| {
            let ball = &shared.0;
            if t == 1 {
                for i in 0..ROUND_TRIPS {
                    wait_for(ball, 2 * i + 1);
                    ball.store(2 * i + 2, Ordering::Release);
                }
                return;
            }
            // The first trip waits for the other worker to start; the
            // rest are timed.
            ball.store(1, Ordering::Release);
            wait_for(ball, 2);
            let start = Instant::now();
            for i in 1..ROUND_TRIPS {
                ball.store(2 * i + 1, Ordering::Release);
                wait_for(ball, 2 * i + 2);
            }
            e.store(start.elapsed().as_nanos() as u64, Ordering::Release);
        });
        Some(Duration::from_nanos(
            elapsed.load(Ordering::Acquire) / (ROUND_TRIPS - 1),
        ))
    }

    /// Runs `work(t)` for `t` in `0..threads` as tasks of one scope on the
    /// pool (the calling thread runs `work(0)`), and returns the wall time
    /// until all are done.
    fn on_workers(&self, threads: usize, work: impl Fn(usize) + Send + Sync + 'static) -> Duration {
        let threads = threads.clamp(1, self.threads());
        let scope = self.pool.open_scope(ScopeOptions {
            max_parallel: threads,
            ..ScopeOptions::default()
        });
        let _close = self.pool.close_on_drop(&scope);
        let work = Arc::new(work);
        let remaining = Arc::new(AtomicUsize::new(threads));
        let start = Instant::now();
        for t in 1..threads {
            let (work, remaining) = (work.clone(), remaining.clone());
            scope.spawn(Box::new(move |_| {
                work(t);
                remaining.fetch_sub(1, Ordering::AcqRel);
            }));
        }
        let (first, left) = (work.clone(), remaining.clone());
        scope.run_here(Box::new(move |_| {
            first(0);
            left.fetch_sub(1, Ordering::AcqRel);
        }));
        while !scope.watch(|| remaining.load(Ordering::Acquire) == 0) {
            std::thread::yield_now();
        }
        start.elapsed()
    }
}

/// Spins until `ball` holds `value`.
fn wait_for(ball: &AtomicU64, value: u64) {
    while ball.load(Ordering::Acquire) != value {
        std::hint::spin_loop();
    }
}

/// xorshift64: cheap pseudo-random numbers from a non-zero state.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Sorts the rows by the low 16 bits of their first word: two radix passes,
/// each counting a byte and scattering every row to the spare buffer.
fn sort_rows(buffers: &mut SortBuffers) {
    for shift in [0, 8] {
        let mut counts = [0usize; 256];
        for row in &buffers.rows {
            counts[(row[0] >> shift) as usize & 255] += 1;
        }
        let mut next = [0usize; 256];
        let mut at = 0;
        for (slot, count) in next.iter_mut().zip(counts) {
            *slot = at;
            at += count;
        }
        for row in &buffers.rows {
            let bucket = (row[0] >> shift) as usize & 255;
            buffers.spare[next[bucket]] = *row;
            next[bucket] += 1;
        }
        std::mem::swap(&mut buffers.rows, &mut buffers.spare);
    }
}

impl Default for MachineProbe {
    fn default() -> MachineProbe {
        MachineProbe::new()
    }
}

/// Reads [`RUNS_PER_PROBE`] runs of [`RUN`] floats at pseudo-random places
/// of `buffer` and counts the values above -1.0.
fn count_runs(buffer: &[f64], seed: u64) -> usize {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let places = (buffer.len() - RUN) as u64;
    let mut count = 0;
    for _ in 0..RUNS_PER_PROBE {
        let at = (next_random(&mut state) % places) as usize;
        count += buffer[at..at + RUN].iter().filter(|&&x| x > -1.0).count();
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_count_what_they_read() {
        let buffer: Vec<f64> = (0..1000)
            .map(|i| if i % 2 == 0 { 1.0 } else { -2.0 })
            .collect();
        // Every run of 100 consecutive values holds 50 above -1.0.
        assert_eq!(count_runs(&buffer, 7), RUNS_PER_PROBE * RUN / 2);
    }

    #[test]
    fn a_round_trip_between_workers_is_measured() {
        let probe = MachineProbe::with_buffer_floats(1000);
        match probe.round_trip() {
            Some(trip) => assert!(trip > Duration::ZERO && trip < Duration::from_secs(1)),
            None => assert_eq!(probe.threads(), 1),
        }
    }

    #[test]
    fn a_sort_pass_orders_rows_by_their_low_bits_and_keeps_them_all() {
        let mut state = 7;
        let rows: Vec<ProbeRow> = (0..1000)
            .map(|i| [next_random(&mut state), i, 0, 0, 0])
            .collect();
        let mut buffers = SortBuffers {
            rows: rows.clone(),
            spare: vec![[0; 5]; rows.len()],
        };
        sort_rows(&mut buffers);
        assert!(buffers.rows.is_sorted_by_key(|r| r[0] & 0xffff));
        let mut ids: Vec<u64> = buffers.rows.iter().map(|r| r[1]).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn hand_off_runs_on_every_worker_count_and_return() {
        let probe = MachineProbe::with_buffer_floats(1000);
        for threads in 1..=probe.threads() + 1 {
            assert!(probe.run_handoff(threads, threads as u64) > Duration::ZERO);
        }
    }

    #[test]
    fn a_probe_runs_on_every_worker_count_and_returns() {
        let probe = MachineProbe::with_buffer_floats(10_000);
        for threads in 1..=probe.threads() + 1 {
            assert!(probe.run(threads, threads as u64) > Duration::ZERO);
        }
    }
}
