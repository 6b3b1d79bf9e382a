//! Commits and the group sync: appending a commit to the log, one thread
//! syncing for every commit appended before it started, and publishing
//! them in order (see `docs/architecture.md`, *Group commit*).

use super::*;

impl Shared {
    /// Commits `txn` (group commit): under the log mutex, append its record
    /// (no sync yet), make its version the base of the next transaction and
    /// free the writer slot; then wait until a sync covers the record (one
    /// thread syncs for every commit appended before it started) and its
    /// version is published.
    pub(crate) fn commit(&self, mut txn: WriteTxn) -> Result<CommitInfo> {
        let counters = txn.state.counters;
        if txn.state.ops.is_empty() {
            return Ok(CommitInfo {
                commit: 0,
                counters,
            });
        }
        let mut w = lock(&self.log);
        let mut slot = lock(&self.gate.slot);
        if slot.holder != Some(txn.ticket) {
            return Err(Error::new(
                ErrorKind::TransientError,
                format!(
                    "the transaction was open longer than the transaction timeout ({:?}) \
                     and was rolled back; run it again",
                    self.options.transaction_timeout.unwrap_or_default()
                ),
            )
            .with_code("TransactionTimedOut"));
        }
        if let Some(why) = &w.broken {
            return Err(Error::new(ErrorKind::IoError, why.clone()));
        }
        let base = w.head.clone().unwrap_or_else(|| self.current.load_full());
        let commit = base.last_commit + 1;
        let record = wal::encode_record(commit, &txn.state.ops);
        if record.len() > u32::MAX as usize {
            return Err(Error::new(
                ErrorKind::IoError,
                "the transaction is too large for one log record (4 GiB); split it",
            ));
        }
        let generation = txn.state.snap.store().manifest.generation;
        let wal = self.ensure_wal(&mut w, generation)?;
        let start = wal.len();
        wal.append_unsynced(&record)?;
        let wal_len = wal.len();
        if txn.state.snap.delta().has_loose() {
            txn.state.snap.delta_mut().pack();
        }
        let background = self.options.background_checkpoints;
        let full = !background && self.checkpoint_due(generation, wal_len, txn.state.snap.delta());
        let pos = LogPosition {
            manifest: base.pos.manifest,
            wal: w.wal_id,
            wal_len,
            live: true,
        };
        let version = Arc::new(Version::new(
            txn.state.snap.store().clone(),
            txn.state.snap.delta().clone(),
            pos,
            commit,
        ));
        let seq = {
            let mut sync = lock(&self.sync);
            sync.next_seq += 1;
            sync.next_seq
        };
        w.head = Some(version.clone());
        w.pending.push_back(Pending {
            seq,
            start,
            version,
        });
        self.gate.unsynced.fetch_add(1, Ordering::SeqCst);
        // The next transaction may start now, from this one's version.
        // The next waiting transaction is woken only once this commit has
        // let go of the log mutex too: woken earlier, it queued for the
        // mutexes this commit still held (16 writers: 43–58% of 16 × the
        // raw sync rate against 33–52%, six pairs).
        self.gate.free_slot(&mut slot);
        drop(slot);
        if background {
            self.auto.wake();
        }
        if full {
            // Sync and publish everything now, then checkpoint (still under
            // the log mutex, so no commit slips in between).
            let synced = self.sync_pending(&mut w);
            if synced.is_ok() {
                // The commit is durable already; a failed checkpoint leaves the log in place.
                if self.checkpoint_locked(&mut w, false).is_ok() {
                    self.auto_count.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.release_file_if_idle();
            drop(w);
            self.gate.cv.notify_one();
            drop(txn);
            return synced.map(|_| CommitInfo { commit, counters });
        }
        drop(w);
        self.gate.cv.notify_one();
        drop(txn);
        self.wait_durable(seq)?;
        Ok(CommitInfo { commit, counters })
    }

    /// Gives the file lock back unless this handle still needs it.
    fn release_file_if_idle(&self) {
        let slot = lock(&self.gate.slot);
        self.gate.release_file_if_idle(&slot);
    }

    /// Waits until commit `seq` is durable and published; leads a sync if
    /// no thread is syncing. Waits parked (see `SyncState::waiters`).
    fn wait_durable(&self, seq: u64) -> Result<()> {
        let mut sync = lock(&self.sync);
        let me = std::thread::current();
        loop {
            if let Some((from, why)) = &sync.failed_from {
                if seq >= *from {
                    return Err(Error::new(ErrorKind::IoError, why.clone()));
                }
            }
            if sync.durable_seq >= seq {
                return Ok(());
            }
            if !sync.syncing {
                // Lead one sync, then hand the lead to whichever committer
                // waits next: the others wait awake while syncs are fast, so
                // one of them starts the next sync at once, and this thread
                // goes back to its own work. (Leading for up to 1 ms more,
                // as before, kept one writer of 16 from committing: 16
                // writers reached 44–53% of 16 × the raw sync rate against
                // 47–58% now, ten alternating pairs.)
                sync.syncing = true;
                self.syncing.store(true, Ordering::SeqCst);
                drop(sync);
                let outcome = self.lead_sync();
                sync = lock(&self.sync);
                match outcome {
                    Ok(upto) => self.mark_durable(&mut sync, upto),
                    Err((from, why)) => sync.failed_from = Some((from, why)),
                }
                sync.syncing = false;
                self.syncing.store(false, Ordering::SeqCst);
                sync.wake_waiters();
                continue;
            }
            // A sync runs: wait for it awake for a while, then sleep.
            drop(sync);
            let spin = self.durable_spin();
            if !spin.is_zero() {
                let until = Instant::now() + spin;
                while self.durable_seq.load(Ordering::SeqCst) < seq
                    && self.syncing.load(Ordering::SeqCst)
                    && Instant::now() < until
                {
                    std::thread::yield_now();
                }
                if self.durable_seq.load(Ordering::SeqCst) >= seq {
                    return Ok(());
                }
            }
            sync = lock(&self.sync);
            if sync.settled(seq) || !sync.syncing {
                continue;
            }
            sync.waiters.push((seq, me.clone()));
            drop(sync);
            // A wake-up meant for an earlier wait, or a spurious one, only
            // costs another look.
            std::thread::park();
            sync = lock(&self.sync);
            if let Some(i) = sync.waiters.iter().position(|w| w.1.id() == me.id()) {
                sync.waiters.swap_remove(i);
            }
        }
    }

    /// Records that every commit up to `upto` is durable and published,
    /// in `sync` and in its mirror for committers waiting awake.
    fn mark_durable(&self, sync: &mut SyncState, upto: u64) {
        sync.durable_seq = sync.durable_seq.max(upto);
        self.durable_seq.fetch_max(upto, Ordering::SeqCst);
    }

    /// How long a committer whose commit a running sync does not cover
    /// waits for it awake, giving the processor away between looks, before
    /// it sleeps: about two syncs (the running one and the one that will
    /// cover it) while syncs are fast, none when they are slow. Waking a
    /// sleeping thread costs about as much as a fast sync, and a writer
    /// woken late misses the next sync: with 16 writers on 2 vCPUs this
    /// took group commit from 35–42k to 52–66k commits/s.
    fn durable_spin(&self) -> Duration {
        let last = Duration::from_nanos(self.last_sync_ns.load(Ordering::Relaxed));
        if last <= SPIN_FOR_SYNCS_UP_TO {
            2 * last
        } else {
            Duration::ZERO
        }
    }

    /// Syncs the log outside the log mutex (commits go on appending), then
    /// publishes the commits the sync covered. Returns the last sequence
    /// number published, or where the failed ones start and why.
    fn lead_sync(&self) -> std::result::Result<u64, (u64, String)> {
        let (syncer, upto) = {
            let w = lock(&self.log);
            match (w.syncer.clone(), w.pending.back()) {
                (Some(syncer), Some(last)) => (syncer, last.seq),
                // Published meanwhile (a checkpoint synced everything).
                _ => return Ok(lock(&self.sync).next_seq),
            }
        };
        let started = Instant::now();
        let synced = syncer.sync();
        let took = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last_sync_ns.store(took, Ordering::Relaxed);
        let mut w = lock(&self.log);
        let result = match synced {
            Ok(()) => {
                self.publish_up_to(&mut w, upto);
                Ok(upto)
            }
            Err(e) => Err(self.fail_pending(&mut w, &e.to_string())),
        };
        drop(w);
        self.release_file_if_idle();
        result
    }

    /// Publishes the pending commits up to sequence number `upto`, in order.
    fn publish_up_to(&self, w: &mut LogState, upto: u64) {
        let mut newest = None;
        while w.pending.front().is_some_and(|p| p.seq <= upto) {
            newest = w.pending.pop_front().map(|p| p.version);
            self.gate.unsynced.fetch_sub(1, Ordering::SeqCst);
        }
        if let Some(v) = newest {
            self.current.store(v);
        }
        if w.pending.is_empty() {
            w.head = None;
        }
    }

    /// A sync failed: every pending commit fails, the log is cut back to
    /// before the first of them and refuses further commits until reopen.
    fn fail_pending(&self, w: &mut LogState, error: &str) -> (u64, String) {
        let first = w
            .pending
            .front()
            .map_or((u64::MAX, 0), |p| (p.seq, p.start));
        if let Some(wal) = w.wal.as_mut() {
            wal.sync_failed(first.1);
        }
        let n = w.pending.len();
        w.pending.clear();
        w.head = None;
        self.gate.unsynced.fetch_sub(n, Ordering::SeqCst);
        (
            first.0,
            format!("syncing the write-ahead log failed, the transaction was rolled back: {error}"),
        )
    }

    /// Syncs and publishes every pending commit now (caller holds the log mutex).
    pub(super) fn sync_pending(&self, w: &mut LogState) -> Result<()> {
        let Some(last) = w.pending.back().map(|p| p.seq) else {
            return Ok(());
        };
        let synced = match &w.syncer {
            Some(syncer) => syncer.sync().map_err(|e| e.to_string()),
            None => Err("the log is not open".to_string()),
        };
        let mut sync = lock(&self.sync);
        let outcome = match synced {
            Ok(()) => {
                self.publish_up_to(w, last);
                self.mark_durable(&mut sync, last);
                Ok(())
            }
            Err(e) => {
                let (from, why) = self.fail_pending(w, &e);
                sync.failed_from = Some((from, why.clone()));
                Err(Error::new(ErrorKind::IoError, why))
            }
        };
        sync.wake_waiters();
        outcome
    }
}
