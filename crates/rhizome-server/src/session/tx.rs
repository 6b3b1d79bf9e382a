//! RESET and explicit transactions: BEGIN, the writer lock at a
//! transaction's first write, COMMIT and ROLLBACK.

use super::*;

impl Session {
    /// RESET: ends what runs and rolls back an open transaction, as
    /// ROLLBACK does.
    pub(super) async fn reset(&mut self) {
        self.rollback().await;
    }

    /// Stops and forgets every open result.
    pub(super) fn close_results(&mut self) {
        for result in &mut self.results {
            if let Rows::Stream(buffer) = &result.rows {
                buffer.close();
            }
        }
        self.results.clear();
    }

    /// Makes `registration` the session's open transaction on `entry` and
    /// answers BEGIN: the one way both native and source transactions start.
    fn enter_tx(
        &mut self,
        registration: Registration,
        entry: DatabaseEntry,
        timeout: Option<Duration>,
    ) {
        self.tx = Some(OpenTx {
            registration,
            db: entry,
            deadline: timeout.map(|t| Instant::now() + t),
            next_qid: 0,
            reading: None,
            writing: false,
        });
        self.success(map([]));
        self.state = State::TxReady;
    }

    /// Opens an explicit transaction. It takes no lock: the writer lock
    /// is taken by its first statement that writes (see the module docs).
    pub(super) fn begin(&mut self, extra: PackValue) {
        let db = match extra.get("db") {
            Some(PackValue::String(s)) => Some(s.clone()),
            _ => None,
        };
        let Some(entry) = self.registry.get(db.as_deref()).cloned() else {
            return self.fail(database_not_found(db.as_deref().unwrap_or("")));
        };
        let timeout = tx_timeout(&extra).or(self.config.transaction_timeout);
        let registration = self
            .config
            .transactions
            .register(&entry.name, self.owner(), None);
        self.enter_tx(registration, entry, timeout);
    }

    /// Waits for `entry`'s writer lock on a blocking thread, listed in
    /// `running` as blocked meanwhile: SHOW TRANSACTIONS shows the wait and
    /// TERMINATE ends it at once (a lock the abandoned wait still gets is
    /// given back as soon as it does).
    pub(super) async fn lock_writer(
        entry: &DatabaseEntry,
        running: &Arc<Running>,
    ) -> Result<Transaction, Failure> {
        let engine = entry.engine.clone();
        running.waits();
        let mut waiting = tokio::task::spawn_blocking(move || engine.begin());
        let began = tokio::select! {
            began = &mut waiting => began,
            _ = running.until_terminated() => {
                tokio::spawn(async move {
                    if let Ok(Ok(tx)) = waiting.await {
                        tx.rollback();
                    }
                });
                return Err(transactions::terminated());
            }
        };
        running.stops_waiting();
        match began {
            Ok(Ok(tx)) if running.is_terminated() => {
                tx.rollback();
                Err(transactions::terminated())
            }
            Ok(Ok(tx)) => Ok(tx),
            Ok(Err(e)) => Err(Failure::from_error(&e, "")),
            Err(e) => Err(Failure::new(codes::UNKNOWN, e.to_string())),
        }
    }

    /// Gives the open transaction the writer lock for its first write. If
    /// it read before, its reads must still hold: a commit since its
    /// snapshot rolls it back with a retryable `Outdated` failure.
    pub(super) async fn upgrade(&mut self, running: &Arc<Running>) -> Result<(), Failure> {
        let Some(open) = self.tx.as_mut() else {
            return Ok(());
        };
        if open.writing {
            return Ok(());
        }
        let tx = Session::lock_writer(&open.db, running).await?;
        if let Some(seen) = open.reading.take() {
            if !tx.snapshot().is_some_and(|now| now.same_state(&seen)) {
                tx.rollback();
                return Err(outdated());
            }
        }
        open.writing = true;
        running.put(Some(tx));
        Ok(())
    }

    pub(super) async fn commit(&mut self) {
        self.finish_open_results();
        let Some(open) = self.tx.take() else {
            return self.fail(Failure::invalid("no transaction is open"));
        };
        if open.expired() {
            if let Some(tx) = open.take() {
                tx.rollback();
            }
            return self.fail(timed_out());
        }
        if open.db.source.is_some() || !open.writing {
            // Nothing to commit: its statements only read (a source, or a
            // snapshot without the writer lock).
            if open.registration.entry().is_terminated() {
                return self.fail(transactions::terminated());
            }
            let metadata = match open.db.source {
                Some(_) => map([]),
                None => map([("bookmark", bookmark(0).into())]),
            };
            self.success(metadata);
            self.state = State::Ready;
            return;
        }
        let Some(tx) = open.take() else {
            return self.fail(transactions::terminated());
        };
        match tokio::task::spawn_blocking(move || tx.commit()).await {
            Ok(Ok(info)) => {
                self.success(map([("bookmark", bookmark(info.commit).into())]));
                self.state = State::Ready;
            }
            Ok(Err(e)) => self.fail(Failure::from_error(&e, "")),
            Err(e) => self.fail(Failure::new(codes::UNKNOWN, e.to_string())),
        }
    }

    /// ROLLBACK (and RESET): closes every open result, rolls back the
    /// open transaction if any and returns to READY.
    pub(super) async fn rollback(&mut self) {
        self.close_results();
        if let Some(open) = self.tx.take() {
            if let Some(tx) = open.take() {
                tx.rollback();
            }
        }
        self.success(map([]));
        self.state = State::Ready;
    }

    /// Lets every open result of the transaction run to its end, its rest
    /// kept in memory for the client to pull, before its next statement or
    /// its commit. The next statement need not wait for them: they read
    /// states that its writes do not change.
    pub(super) fn finish_open_results(&mut self) {
        for result in &self.results {
            if let Rows::Stream(buffer) = &result.rows {
                buffer.unbound();
            }
        }
    }
}
