//! Checkpoints: freezing the log's changes, writing delta or full
//! segments beside the old ones, staging the records that came meanwhile,
//! and installing the new manifest.

use super::*;

impl Shared {
    /// The checkpoint policy (see [`crate::autocheckpoint`]) for a log of
    /// `wal_len` bytes and `delta` over the segment of `generation`.
    pub(super) fn checkpoint_due(&self, generation: u64, wal_len: u64, delta: &Delta) -> bool {
        if wal_len >= self.options.checkpoint_wal_bytes {
            return true;
        }
        if self.options.checkpoint_delta_bytes == u64::MAX || delta.is_empty() {
            return false;
        }
        let (at, bytes) = *lock(&self.auto_baseline);
        // A checkpoint of another process (or a full one) resets the baseline.
        let baseline = if at == generation { bytes } else { 0 };
        crate::autocheckpoint::due(
            wal_len,
            delta.approx_bytes(),
            baseline,
            self.options.checkpoint_wal_bytes,
            self.options.checkpoint_delta_bytes,
        )
    }

    /// One look of the background checkpoint thread: checkpoints if due,
    /// taking the writer lock only if it is free within a moment.
    pub(super) fn auto_step(self: &Arc<Self>) -> Step {
        let v = self.current.load_full();
        let wal_len = if v.pos.live { v.pos.wal_len } else { 0 };
        if !self.checkpoint_due(v.store.manifest.generation, wal_len, &v.delta) {
            return Step::Idle;
        }
        drop(v);
        // Another checkpoint is running: look again later.
        let Ok(Some(ckpt)) = CheckpointLock::try_take(&self.dir) else {
            return Step::RetrySoon;
        };
        // Catching up or the commits before may have changed the picture:
        // the policy is asked again once the lock is held.
        match self.checkpoint_concurrently(ckpt, false, true, Duration::from_millis(50)) {
            Ok(true) => {
                self.auto_count.fetch_add(1, Ordering::Relaxed);
                // The commits made while it wrote may make another due,
                // and no commit may come to ring the thread again: look.
                Step::RetrySoon
            }
            Ok(false) => Step::Idle,
            Err(e) if e.kind == ErrorKind::TransientError => Step::RetrySoon,
            Err(_) => Step::Idle,
        }
    }

    /// Checkpoints the current state while the caller holds the writer lock
    /// (inline checkpoints, on open and on close): nothing is committed
    /// meanwhile. Does nothing (false) if a checkpoint is running elsewhere.
    pub(super) fn checkpoint_locked(&self, w: &mut LogState, full: bool) -> Result<bool> {
        let Some(ckpt) = CheckpointLock::try_take(&self.dir)? else {
            return Ok(false);
        };
        let superseded = self.checkpoint_held(w, full, &ckpt)?;
        Ok(superseded
            .map(|s| self.remove_superseded(s, &ckpt))
            .is_some())
    }

    /// [`Shared::checkpoint_locked`] with the checkpoint lock held, but
    /// the files it replaced are left to the caller; `None`: nothing to save.
    fn checkpoint_held(
        &self,
        w: &mut LogState,
        full: bool,
        ckpt: &CheckpointLock,
    ) -> Result<Option<Superseded>> {
        let Some(frozen) = self.freeze(w, full, false)? else {
            return Ok(None);
        };
        let prepared = self.write_checkpoint(&frozen)?;
        match self.stage(&frozen, prepared)? {
            Some(staged) => self.install(w, frozen, staged, ckpt),
            None => Err(Error::internal(
                "a checkpoint could not renumber the ids of commits it had to carry over",
            )),
        }
    }

    /// Removes the files a checkpoint replaced and what interrupted ones
    /// left, with the checkpoint lock but not the writer lock held
    /// (removing a large file takes a while).
    fn remove_superseded(&self, s: Superseded, ckpt: &CheckpointLock) {
        if let Some(segment) = s.segment {
            crate::lock::remove_if_unused(&self.dir.join(segment));
        }
        if let Some(old) = s.delta {
            // Read whole at load, never mapped: nobody needs it any more (a
            // process loading the old manifest right now retries).
            let _ = std::fs::remove_file(self.dir.join(old));
        }
        collect_leftovers(&self.dir, &s.manifest, ckpt);
    }

    /// Checkpoints with the writer lock held only for a moment at each end:
    /// to freeze the state to write (waiting at most `lock_wait` for the
    /// lock) and to install what was written; commits go on while the
    /// files are written. `if_due`: only if a checkpoint is still due once
    /// the lock is held.
    pub(super) fn checkpoint_concurrently(
        self: &Arc<Self>,
        ckpt: CheckpointLock,
        full: bool,
        if_due: bool,
        lock_wait: Duration,
    ) -> Result<bool> {
        let ticket = self.acquire_writer_within(lock_wait)?;
        let frozen = self.freeze(&mut lock(&self.log), full, if_due);
        self.release_writer(ticket);
        let Some(frozen) = frozen? else {
            return Ok(false);
        };
        // A failure leaves the written files as debris, collected later.
        let prepared = self.write_checkpoint(&frozen)?;
        if let Some(hook) = &self.options.checkpoint_hook {
            hook(CheckpointStep::Written)?;
        }
        let staged = self.stage(&frozen, prepared)?;
        if let Some(hook) = &self.options.checkpoint_hook {
            hook(CheckpointStep::Staged)?;
        }
        let ticket = self.acquire_writer()?;
        let installed = match staged {
            Some(staged) => self.install(&mut lock(&self.log), frozen, staged, &ckpt),
            // Ids the renumbering could not place: checkpoint again with
            // the lock held (nothing commits meanwhile).
            None => self.checkpoint_held(&mut lock(&self.log), true, &ckpt),
        };
        self.release_writer(ticket);
        Ok(installed?
            .map(|s| self.remove_superseded(s, &ckpt))
            .is_some())
    }

    /// Under the writer lock: syncs what this handle committed and returns
    /// the state a checkpoint is to write, or `None` if there is nothing to
    /// save (or, with `if_due`, no checkpoint is due).
    fn freeze(&self, w: &mut LogState, full: bool, if_due: bool) -> Result<Option<Frozen>> {
        if let Some(why) = &w.broken {
            return Err(Error::new(ErrorKind::IoError, why.clone()));
        }
        self.sync_pending(w)?;
        let v = self.current.load_full();
        let wal_len = if v.pos.live { v.pos.wal_len } else { 0 };
        if if_due && !self.checkpoint_due(v.store.manifest.generation, wal_len, &v.delta) {
            return Ok(None);
        }
        // After an incremental checkpoint the delta is not empty, but the
        // delta file holds all of it until the log gets a record.
        let saved = v.store.manifest.delta.is_some()
            && (!v.pos.live || v.pos.wal_len <= crate::wal::HEADER_LEN);
        if v.delta.is_empty() || (saved && !full) {
            return Ok(None);
        }
        Ok(Some(Frozen {
            generation: v.store.manifest.generation + 1,
            version: v,
            full,
        }))
    }

    /// Writes the files of a checkpoint of `f` (no lock needed): a delta
    /// file if the changes are small enough (see
    /// [`DatabaseOptions::delta_checkpoint_ratio`]) and a full one was not
    /// asked for, else a new segment. Nothing names them yet.
    fn write_checkpoint(&self, f: &Frozen) -> Result<Prepared> {
        let v = &f.version;
        if !f.full {
            let bytes = crate::deltafile::encode(&v.delta, &v.store);
            let limit = self.options.delta_checkpoint_ratio * v.store.manifest.segment_len as f64;
            if bytes.len() as f64 <= limit {
                let file = crate::deltafile::file_name(f.generation);
                crate::deltafile::write(&self.dir, &file, &bytes)?;
                crate::manifest::sync_dir(&self.dir)?;
                let mut manifest = v.store.manifest.clone();
                manifest.generation = f.generation;
                manifest.delta = Some(crate::manifest::DeltaFileMeta {
                    file,
                    len: bytes.len() as u64,
                });
                return Ok(Prepared::Incremental(manifest));
            }
        }
        Ok(Prepared::Full(crate::checkpoint::write(
            &self.dir,
            &v.snapshot(),
            f.generation,
        )?))
    }

    /// Prepares the switch of a checkpoint of `f` without the writer lock:
    /// the commits the log holds after the freeze so far (whole records
    /// only) are written to `wal.next` — renumbered after a full checkpoint
    /// — and the manifest is staged as `manifest.json.tmp`, so that the
    /// install under the lock has only the commits made after this to
    /// carry over. `None`: a full checkpoint's ids could not be renumbered
    /// (its segment is removed; the caller checkpoints under the lock).
    fn stage(&self, f: &Frozen, prepared: Prepared) -> Result<Option<Staged>> {
        let old = &f.version;
        let (wal, raw) = match old.pos.live {
            // A log created since a stale one was frozen is read under the lock.
            false => (None, Vec::new()),
            true => {
                let path = self.wal_path();
                match self
                    .options
                    .io
                    .read_from(&path, old.pos.wal_len)
                    .map_err(|e| Error::io(path.display(), e))?
                {
                    Some((id, mut bytes)) if Some(id) == old.pos.wal => {
                        // Whole records only: one may be being appended.
                        let valid = crate::wal::parse_records(&bytes, old.pos.wal_len).valid_len;
                        bytes.truncate(valid as usize);
                        (Some(id), bytes)
                    }
                    _ => (None, Vec::new()),
                }
            }
        };
        self.stage_records(f, prepared, wal, raw)
    }

    /// [`Shared::stage`] with the log bytes to carry (`raw`, whole records
    /// from the frozen position, of the log `wal`) read.
    fn stage_records(
        &self,
        f: &Frozen,
        prepared: Prepared,
        wal: Option<FileId>,
        raw: Vec<u8>,
    ) -> Result<Option<Staged>> {
        let from = tail_start(&f.version);
        let records = crate::wal::parse_records(&raw, from).records;
        let (manifest, log_records, full) = match prepared {
            Prepared::Incremental(manifest) => (manifest, raw.clone(), None),
            Prepared::Full(written) => {
                let segment = written.manifest.segment.clone();
                let store = match Store::from_manifest(&self.dir, written.manifest.clone()) {
                    Ok(store) => Arc::new(store),
                    Err(_) => {
                        crate::lock::remove_if_unused(&self.dir.join(segment));
                        return Ok(None);
                    }
                };
                let base = Arc::new(empty_delta(&store));
                let mut full = FullStage {
                    store,
                    delta: base.clone(),
                    base,
                    node_map: written.node_map,
                };
                match self.carry_renumbered(&f.version, &mut full, &records) {
                    Some(bytes) => (written.manifest, bytes, Some(full)),
                    None => {
                        drop(full);
                        crate::lock::remove_if_unused(&self.dir.join(segment));
                        return Ok(None);
                    }
                }
            }
        };
        let io = &*self.options.io;
        crate::relog::write_next(&self.dir, io, f.generation, &log_records)?;
        manifest.stage(&self.dir)?;
        Ok(Some(Staged {
            manifest,
            wal,
            raw,
            full,
        }))
    }

    /// `records` (old ids) renumbered into the ids of the new segment of
    /// `full` and replayed over its state; the framed records, or `None` if
    /// an id could not be renumbered or the records do not replay.
    fn carry_renumbered(
        &self,
        old: &Version,
        full: &mut FullStage,
        records: &[crate::wal::Record],
    ) -> Option<Vec<u8>> {
        if records.is_empty() {
            return Some(Vec::new());
        }
        let new = Snapshot::new(full.store.clone(), full.base.clone());
        let renumbering = crate::relog::Renumbering {
            old: &old.snapshot(),
            new: &new,
            node_map: &full.node_map,
        };
        let bytes = renumbering.records(records)?;
        let over = Snapshot::new(full.store.clone(), full.delta.clone());
        let at = crate::wal::HEADER_LEN;
        match follow::replay(over, &bytes, at, 0, &self.dir) {
            Ok((delta, _, scan)) if scan.valid_len == bytes.len() as u64 => {
                full.delta = delta;
                Some(bytes)
            }
            _ => None,
        }
    }

    /// Under the writer lock: installs a checkpoint staged of `f`, carrying
    /// the commits made since it was staged over to the new log too (see
    /// [`crate::relog`] for the order of the steps and why a crash between
    /// any two loses nothing). Returns the files it replaced.
    fn install(
        &self,
        w: &mut LogState,
        f: Frozen,
        mut staged: Staged,
        ckpt: &CheckpointLock,
    ) -> Result<Option<Superseded>> {
        if let Some(why) = &w.broken {
            return Err(Error::new(ErrorKind::IoError, why.clone()));
        }
        self.sync_pending(w)?;
        let cur = self.current.load_full();
        let old = &f.version;
        if cur.pos.manifest != old.pos.manifest || (old.pos.live && cur.pos.wal != old.pos.wal) {
            return Err(Error::new(
                ErrorKind::TransientError,
                "the database was checkpointed by another handle meanwhile; \
                 this checkpoint was abandoned",
            )
            .with_code("DatabaseChanging"));
        }
        // The commits since the freeze: the rest of the log the frozen state
        // read, or all of a log created since (the frozen one was stale).
        let from = tail_start(old);
        let to = if cur.pos.live { cur.pos.wal_len } else { from };
        let io = &*self.options.io;
        let (raw, _) = crate::relog::read_tail(&self.dir, io, cur.pos.wal, from, to)?;
        let carried = staged.raw.len();
        let still = carried <= raw.len()
            && raw[..carried] == staged.raw[..]
            && (carried == 0 || staged.wal == cur.pos.wal);
        if !still {
            // The log changed under the staged part (a commit whose sync
            // failed was cut off): stage again, now that nothing commits.
            let prepared = match staged.full.take() {
                None => Prepared::Incremental(staged.manifest),
                Some(full) => Prepared::Full(crate::checkpoint::Written {
                    manifest: staged.manifest,
                    node_map: full.node_map,
                }),
            };
            staged = match self.stage_records(&f, prepared, cur.pos.wal, raw.clone())? {
                Some(s) => s,
                None => return self.checkpoint_held(w, true, ckpt),
            };
        }
        let extra_raw = &raw[staged.raw.len()..];
        let extra = crate::wal::parse_records(extra_raw, from + staged.raw.len() as u64).records;
        let extra_bytes = match staged.full.as_mut() {
            None => extra_raw.to_vec(),
            Some(full) => match self.carry_renumbered(old, full, &extra) {
                Some(bytes) => bytes,
                None => {
                    // Ids the renumbering could not place: write it again
                    // with the lock held (nothing commits now).
                    let segment = staged.manifest.segment.clone();
                    drop(staged);
                    crate::lock::remove_if_unused(&self.dir.join(segment));
                    return self.checkpoint_held(w, true, ckpt);
                }
            },
        };
        let generation = f.generation;
        if !extra_bytes.is_empty() {
            crate::relog::append_next(&self.dir, io, &extra_bytes)?;
        }
        if let Err(e) = Manifest::install_staged(&self.dir) {
            if Manifest::read_with_id(&self.dir).map_or(true, |(_, id)| id != cur.pos.manifest) {
                w.broken = Some(format!(
                    "a checkpoint failed while it installed its manifest ({e}); reopen the database"
                ));
            }
            return Err(e);
        }
        // From here on the old log is stale (its generation is older than the manifest's).
        w.wal = None;
        w.wal_id = None;
        w.syncer = None;
        w.fresh = false;
        if let Some(hook) = &self.options.checkpoint_hook {
            if let Err(e) = hook(CheckpointStep::ManifestInstalled) {
                w.broken = Some(format!(
                    "a checkpoint was interrupted ({e}); reopen the database"
                ));
                return Err(e);
            }
        }
        let switched = crate::relog::rename_next(&self.dir)
            .and_then(|_| Manifest::read_with_id(&self.dir))
            .and_then(|(m, id)| {
                let store = match staged.full.as_ref() {
                    Some(full) => Arc::clone(&full.store),
                    None => Arc::new(Store::from_manifest(&self.dir, m)?),
                };
                Ok((store, id))
            })
            .and_then(|(store, id)| {
                let wal_len = self.ensure_wal(w, generation)?.len();
                Ok((store, id, wal_len))
            });
        let (store, manifest_id, wal_len) = match switched {
            Ok(s) => s,
            Err(e) => {
                w.wal = None;
                w.broken = Some(format!(
                    "a checkpoint could not open its own files ({e}); reopen the database"
                ));
                return Err(e);
            }
        };
        let pos = LogPosition {
            manifest: manifest_id,
            wal: w.wal_id,
            wal_len,
            live: true,
        };
        // After an incremental checkpoint the state is the same delta over
        // the same segment, now saved in the delta file (the commits since
        // the freeze included: they are in the new log too).
        // The doubling rule of the checkpoint policy counts from the delta
        // an incremental checkpoint kept; a full one leaves only the
        // commits it carried over, so it resets the baseline.
        let (delta, baseline) = match staged.full {
            Some(full) => (full.delta, 0),
            None => (cur.delta.clone(), cur.delta.approx_bytes()),
        };
        let old_segment = &old.store.manifest.segment;
        let superseded = Superseded {
            segment: (*old_segment != store.manifest.segment).then(|| old_segment.clone()),
            delta: old.store.manifest.delta.as_ref().map(|d| d.file.clone()),
            manifest: store.manifest.clone(),
        };
        *lock(&self.auto_baseline) = (store.manifest.generation, baseline);
        self.current
            .store(Arc::new(Version::new(store, delta, pos, cur.last_commit)));
        Ok(Some(superseded))
    }
}

/// Where the commits after the frozen state `old` start in the log.
fn tail_start(old: &Version) -> u64 {
    if old.pos.live {
        old.pos.wal_len
    } else {
        crate::wal::HEADER_LEN
    }
}

/// A checkpoint's switch prepared without the writer lock (see [`Shared::stage`]).
struct Staged {
    /// The manifest to install (staged as `manifest.json.tmp`).
    manifest: Manifest,
    /// The log the carried bytes were read from.
    wal: Option<FileId>,
    /// The log bytes from the frozen position carried into `wal.next`
    /// (checked unchanged under the writer lock).
    raw: Vec<u8>,
    /// A full checkpoint's new segment and state.
    full: Option<FullStage>,
}

/// The new segment of a full checkpoint, opened, and the commits carried
/// over replayed on it.
struct FullStage {
    store: Arc<Store>,
    /// No changes over `store` (its ids are the new ones).
    base: Arc<Delta>,
    /// The commits carried so far, replayed over `store`.
    delta: Arc<Delta>,
    /// New id of every node id of the frozen state.
    node_map: Vec<NodeId>,
}

/// The state a checkpoint writes, frozen under the writer lock.
struct Frozen {
    /// The state (synced and published).
    version: Arc<Version>,
    /// Generation of the manifest the checkpoint installs.
    generation: u64,
    /// A full checkpoint was asked for.
    full: bool,
}

/// The files an installed checkpoint replaced.
struct Superseded {
    /// The old segment, if the checkpoint wrote a new one.
    segment: Option<String>,
    /// The old delta file, if there was one.
    delta: Option<String>,
    /// The manifest installed.
    manifest: Manifest,
}

/// The files a checkpoint wrote, not yet installed.
enum Prepared {
    /// A delta file, and the manifest that names it.
    Incremental(Manifest),
    /// A new segment, its manifest and the map from old node ids to new ones.
    Full(crate::checkpoint::Written),
}
