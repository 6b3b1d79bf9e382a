//! RUN: planning a statement and starting it on the worker pool (or in
//! the session's transaction), with its options and the database it reads.

use super::*;

impl Session {
    pub(super) async fn run(&mut self, query: String, params: PackValue, extra: PackValue) {
        let params = match values::parameters(params) {
            Ok(p) => p,
            Err(why) => return self.fail(Failure::invalid(why)),
        };
        let in_tx = self.tx.is_some();
        if in_tx {
            self.finish_open_results();
            if self.tx.as_ref().is_some_and(OpenTx::expired) {
                return self.fail(timed_out());
            }
        }
        let entry = match &self.tx {
            Some(open) => open.db.clone(),
            None => {
                let db = match extra.get("db") {
                    Some(PackValue::String(s)) => Some(s.clone()),
                    _ => None,
                };
                match self.registry.get(db.as_deref()) {
                    Some(entry) => entry.clone(),
                    None => return self.fail(database_not_found(db.as_deref().unwrap_or(""))),
                }
            }
        };
        let qid = match self.tx.as_mut() {
            Some(open) => {
                open.next_qid += 1;
                open.next_qid - 1
            }
            None => -1,
        };
        // The statement's listing: its transaction's, or one of its own.
        let (running, registration) = match &self.tx {
            Some(open) => (open.registration.entry().clone(), None),
            None => {
                let registration =
                    self.config
                        .transactions
                        .register(&entry.name, self.owner(), None);
                (registration.entry().clone(), Some(registration))
            }
        };
        if running.is_terminated() {
            return self.fail(transactions::terminated());
        }
        running.start_query(&self.config.transactions, &query);
        let started = Instant::now();
        let mut shaping = None;
        let answer = match (
            transactions::parse(&query, &params),
            user_commands::parse(&query, &params),
        ) {
            (Some(Ok(command)), _) => match self.transaction_command(command, &params) {
                Ok(Listed::Answer(answer)) => Some(Ok(answer)),
                Ok(Listed::Shape(cypher, rows)) => {
                    shaping = Some((cypher, rows));
                    None
                }
                Err(failure) => Some(Err(failure)),
            },
            (Some(Err(failure)), _) => Some(Err(failure)),
            (None, Some(Ok(command))) => Some(self.user_command(command).await),
            (None, Some(Err(failure))) => Some(Err(failure)),
            (None, None) => {
                let roles = match self.current_user() {
                    Some(Ok(user)) => user.roles.iter().map(|r| r.name().to_string()).collect(),
                    _ => vec!["admin".to_string()],
                };
                admin::answer(&query, &self.registry, &self.user, &roles).map(Ok)
            }
        };
        let answer = match answer {
            Some(Ok(answer)) => Some(answer),
            Some(Err(failure)) => return self.fail(failure),
            None => None,
        };
        let opened = if let Some(shaping) = shaping {
            let listing = (running.clone(), registration);
            self.start_shaping(&entry, shaping, (qid, started), listing)
                .await
        } else if answer.is_none() && crate::schema_view::is_call(&query) {
            self.schema_view(&entry, &query, (qid, started), running.clone())
                .map(|mut result| {
                    result._registration = registration;
                    let columns = crate::schema_view::COLUMNS.map(String::from).to_vec();
                    (result, columns)
                })
        } else if let Some(answer) = answer {
            let mut result = OpenResult::new(
                (qid, started),
                answer.columns.len(),
                Rows::Done(answer.rows.into_iter(), None),
                &query,
                &entry.name,
                running.clone(),
            );
            result._registration = registration;
            Ok((result, answer.columns))
        } else {
            let listing = (running.clone(), registration);
            self.start(entry, query, params, &extra, (qid, started), listing)
                .await
        };
        match opened {
            Ok((result, columns)) => {
                let fields = PackValue::List(columns.into_iter().map(PackValue::String).collect());
                let mut metadata = vec![
                    ("fields".to_string(), fields),
                    (
                        "t_first".to_string(),
                        PackValue::Int(started.elapsed().as_millis() as i64),
                    ),
                ];
                if in_tx {
                    metadata.push(("qid".to_string(), PackValue::Int(qid)));
                }
                self.results.push(result);
                self.success(PackValue::Map(metadata));
                self.state = if in_tx {
                    State::TxStreaming
                } else {
                    State::Streaming
                };
            }
            Err(_) if running.is_terminated() => self.fail(transactions::terminated()),
            Err(failure) => self.fail(failure),
        }
    }

    /// Answers `SHOW TRANSACTIONS` or `TERMINATE TRANSACTIONS`. The rows of
    /// a SHOW with `YIELD` or `WHERE` are to be shaped by the engine: they
    /// come back as the shaping Cypher and its parameters (the statement's
    /// own, and the rows in [`transactions::ROWS_PARAMETER`]), which
    /// [`Session::start_shaping`] runs on the pool like any read.
    fn transaction_command(
        &mut self,
        command: transactions::Command,
        params: &BTreeMap<String, Value>,
    ) -> Result<Listed, Failure> {
        self.check(Need::Read, "listing transactions")?;
        let viewer = Viewer {
            user: &self.user,
            admin: self.is_admin(),
        };
        let answer = self.config.transactions.answer(&command, &viewer);
        let transactions::Command::Show(_, Some(shaping)) = command else {
            return Ok(Listed::Answer(answer));
        };
        let rows = answer
            .rows
            .into_iter()
            .map(|row| Value::Map(answer.columns.iter().cloned().zip(row).collect()))
            .collect();
        let mut params = params.clone();
        params.insert(transactions::ROWS_PARAMETER.to_string(), Value::List(rows));
        Ok(Listed::Shape(shaping, params))
    }

    /// Starts the Cypher that shapes `SHOW TRANSACTIONS … YIELD …` rows as
    /// one job on the worker pool, as every read starts
    /// ([`Session::start_on_pool`]): no blocking thread runs it, and its
    /// rows stream. It runs over the database's native base (it reads only
    /// its parameters; over a graph source that base is empty), in the
    /// transaction's state inside one. A tail that would write (`YIELD x
    /// CREATE …`) is refused: listing transactions never changes data.
    async fn start_shaping(
        &mut self,
        entry: &DatabaseEntry,
        (query, params): (String, BTreeMap<String, Value>),
        (qid, started): (i64, Instant),
        (running, registration): (Arc<Running>, Option<Registration>),
    ) -> Result<(OpenResult, Vec<String>), Failure> {
        let native = DatabaseEntry {
            source: None,
            ..entry.clone()
        };
        let read = self.read_on(&native).ok_or_else(transactions::terminated)?;
        match self
            .start_on_pool(
                &native,
                (&query, params),
                (qid, started),
                &running,
                read,
                (false, true),
            )
            .await?
        {
            PoolStart::Started(mut result, columns) => {
                result.over_source = false;
                result._registration = registration;
                Ok((*result, columns))
            }
            PoolStart::NotStarted(..) => Err(Failure::new(
                transactions::SYNTAX,
                "SHOW TRANSACTIONS … YIELD … only reads: its WHERE, YIELD and RETURN \
                 may not write",
            )),
        }
    }

    /// The result of `CALL db.schema.visualization()` on what the
    /// statement would read (the transaction's state in one).
    fn schema_view(
        &mut self,
        entry: &DatabaseEntry,
        query: &str,
        (qid, started): (i64, Instant),
        running: Arc<Running>,
    ) -> Result<OpenResult, Failure> {
        self.check(Need::Read, "reading")?;
        let graph = match &entry.source {
            Some(source) => source.snapshot(None),
            None => self
                .tx
                .as_ref()
                .and_then(|open| {
                    open.reading
                        .clone()
                        .or_else(|| open.registration.entry().snapshot())
                })
                .unwrap_or_else(|| entry.engine.database().snapshot()),
        };
        let row = crate::schema_view::visualization(&graph, self.version.is_v5());
        Ok(OpenResult::new(
            (qid, started),
            row.len(),
            Rows::Packed(vec![row].into_iter()),
            query,
            &entry.name,
            running,
        ))
    }

    /// Who runs this connection's transactions (SHOW TRANSACTIONS).
    pub(super) fn owner(&self) -> Owner {
        Owner {
            connection_id: self.connection_id.clone(),
            client_address: self.client_address.clone(),
            username: self.user.clone(),
            tenant: self.config.tenants.of(&self.user).name().to_string(),
        }
    }

    /// True if the user is an administrator (always, without authentication).
    fn is_admin(&self) -> bool {
        match self.current_user() {
            None => true,
            Some(Ok(user)) => user.may(Need::Admin),
            Some(Err(_)) => false,
        }
    }

    fn query_options(&self, cancel: Arc<CancelToken>, deadline: Option<Instant>) -> QueryOptions {
        let timeout = match deadline {
            Some(d) => Some(d.saturating_duration_since(Instant::now())),
            None => self.config.transaction_timeout,
        };
        QueryOptions {
            threads: self.config.threads,
            timeout,
            memory_limit: self.config.memory_limit,
            memory_pool: self.config.memory_pool.clone(),
            cancel: Some(cancel),
            // This statement's thread only waits: every task runs on the
            // engine's worker pool (docs/server.md, Threads).
            caller_waits: true,
            tenant: Some(self.config.tenants.of(&self.user)),
            session: Some(self.clock.clone()),
            ..QueryOptions::default()
        }
    }

    /// The state a read of this session reads now: a fresh snapshot
    /// outside a transaction, the snapshot of a transaction that has only
    /// read (taken now if it is its first read), or the state of a write
    /// transaction (its own writes included). `None` if the transaction's
    /// state is gone (terminated).
    fn read_on(&self, entry: &DatabaseEntry) -> Option<ReadOn> {
        let Some(open) = &self.tx else {
            return Some(ReadOn {
                snapshot: entry.engine.database().snapshot(),
                holding_writer: false,
                deadline: self.config.transaction_timeout.map(|t| Instant::now() + t),
            });
        };
        let snapshot = match (open.writing, &open.reading) {
            (true, _) => open.registration.entry().snapshot()?,
            (false, Some(seen)) => seen.clone(),
            (false, None) => entry.engine.database().snapshot(),
        };
        Some(ReadOn {
            snapshot,
            holding_writer: open.writing,
            deadline: open.deadline,
        })
    }

    /// Starts a statement: checks it, then runs it (a read streams; a write
    /// runs to its end here, its rows kept).
    async fn start(
        &mut self,
        entry: DatabaseEntry,
        query: String,
        params: BTreeMap<String, Value>,
        extra: &PackValue,
        (qid, started): (i64, Instant),
        (running, registration): (Arc<Running>, Option<Registration>),
    ) -> Result<(OpenResult, Vec<String>), Failure> {
        // Only a statement that names EXPLAIN or PROFILE can have a plan to
        // send (the engine decides; this spares other statements a lookup).
        let may_have_plan = query
            .as_bytes()
            .windows(7)
            .any(|w| w.eq_ignore_ascii_case(b"EXPLAIN") || w.eq_ignore_ascii_case(b"PROFILE"));
        // Every statement is planned by one job on the pool, which also
        // starts it there if it reads: no thread waits for it. A write
        // comes back described, to run below.
        let Some(read) = self.read_on(&entry) else {
            return Err(transactions::terminated());
        };
        let may_read = self.check(Need::Read, "").is_ok();
        let (info, plan) = match self
            .start_on_pool(
                &entry,
                (&query, params.clone()),
                (qid, started),
                &running,
                read,
                (may_have_plan, may_read),
            )
            .await?
        {
            PoolStart::Started(mut result, columns) => {
                if let Some(open) = self.tx.as_mut() {
                    if !open.writing && entry.source.is_none() {
                        // Its later reads read the same snapshot.
                        open.reading = result.graph.clone();
                    }
                }
                result._registration = registration;
                return Ok((*result, columns));
            }
            PoolStart::NotStarted(info, plan) => (info, plan),
        };
        if info.updating {
            if let Some(source) = &entry.source {
                return Err(read_only(&entry.name, source));
            }
        }
        let need = match (info.updating, user_commands::is_schema_command(&query)) {
            (false, _) => Need::Read,
            (true, false) => Need::Write,
            (true, true) => Need::Admin,
        };
        let what = match need {
            Need::Read => "reading",
            Need::Write => "writing data",
            Need::Admin => "changing the schema",
        };
        self.check(need, what)?;
        let _ = extra; // `mode` is a routing hint only: one server serves both.
        let deadline = match self.tx.as_ref() {
            Some(open) => open.deadline,
            None => self.config.transaction_timeout.map(|t| Instant::now() + t),
        };
        let cancel = CancelToken::root();
        let options = self.query_options(cancel.clone(), deadline);
        let buffer = ResultBuffer::new(cancel, self.config.stream, info.ordered);
        let tracked = self.interrupt.track(&buffer);
        running.set_buffer(&buffer);
        let width = info.columns.len();
        let mut result = OpenResult::new(
            (qid, started),
            width,
            Rows::Done(Vec::new().into_iter(), None),
            &query,
            &entry.name,
            running.clone(),
        );
        result.updating = info.updating;
        result.plan = plan;
        result.over_source = entry.source.is_some();
        result._registration = registration;
        if info.updating {
            // Writes run to their end before RUN is answered; their rows are
            // the engine's collected rows (the engine materialises them
            // anyway). The writer lock is waited for on a blocking thread
            // (an autocommit write takes a transaction of its own; an
            // explicit one takes it at its first write), the updating plan
            // runs as a job on the worker pool, and the commit (which waits
            // for the log) on a blocking thread again.
            self.upgrade(&running).await?;
            let tx = self.tx.as_mut().and_then(|open| open.take());
            let own = self.tx.is_none();
            let mut writer = match tx {
                Some(tx) => tx,
                None if own => Session::lock_writer(&entry, &running).await?,
                None => return Err(transactions::terminated()),
            };
            let (answer, answered) = tokio::sync::oneshot::channel();
            let job_options = JobOptions {
                tenant: options.tenant.clone(),
                session: options.session.clone(),
                short: false,
            };
            let job: Task = Box::new(move |_| {
                let r = writer.execute(&query, params, &options);
                let snapshot = writer.snapshot();
                let _ = answer.send((r.map(|r| (r, snapshot)), writer));
            });
            WorkerPool::global().submit_with(job_options, job);
            let (outcome, writer) = answered.await.map_err(|_| {
                Failure::new(
                    codes::UNKNOWN,
                    "the statement's job ended without an answer",
                )
            })?;
            let (outcome, tx) = match (own, outcome) {
                (false, outcome) => (outcome, Some(writer)),
                (true, Ok(done)) => {
                    let committed = tokio::task::spawn_blocking(move || writer.commit())
                        .await
                        .map_err(|e| Failure::new(codes::UNKNOWN, e.to_string()))?;
                    (committed.map(|_| done), None)
                }
                (true, Err(e)) => {
                    writer.rollback();
                    (Err(e), None)
                }
            };
            drop(tracked);
            if let Some(open) = self.tx.as_mut() {
                open.registration.entry().put(tx);
            }
            let (mut outcome, snapshot) =
                outcome.map_err(|e| Failure::from_error(&e, &result.query))?;
            result.graph = Some(snapshot.unwrap_or_else(|| entry.engine.database().snapshot()));
            if self.tx.is_none() && has_updates(&outcome.counters) {
                result.bookmark = Some(bookmark(0));
            }
            let rows = std::mem::replace(&mut outcome.rows, rhizome_engine::Rows::new(width));
            result.rows = Rows::Done(rows.into_blocks(), Some(Box::new(outcome)));
        } else {
            // A read is started on the pool above, unless the user may not
            // read, which the check refused.
            return Err(Failure::new(
                codes::UNKNOWN,
                "a read was neither started nor refused",
            ));
        }
        Ok((result, info.columns))
    }

    /// Starts a read with one job on the engine's worker pool, which plans
    /// the statement and starts its query there (its first task on that
    /// worker: a query of one morsel ends inside the job), over the state
    /// `read` names (outside a transaction, or in one). The connection's
    /// task only awaits the job's answer and then the result's blocks: no
    /// thread of its own waits for the query, and a short read costs one
    /// hand-over each way. A statement that turns out to write, or any
    /// statement when `may_read` is false, is not started: its description
    /// (and plan, if `may_have_plan`) comes back for the usual path.
    async fn start_on_pool(
        &mut self,
        entry: &DatabaseEntry,
        (query, params): (&str, BTreeMap<String, Value>),
        (qid, started): (i64, Instant),
        running: &Arc<Running>,
        read: ReadOn,
        (may_have_plan, may_read): (bool, bool),
    ) -> Result<PoolStart, Failure> {
        let cancel = CancelToken::root();
        let options = self.query_options(cancel.clone(), read.deadline);
        let buffer = ResultBuffer::new(cancel, self.config.stream, false);
        let tracked = self.interrupt.track(&buffer);
        running.set_buffer(&buffer);
        let (answer, answered) = tokio::sync::oneshot::channel();
        // Over a source: the statement's own view of it (read live, through
        // the source's cache), which its entities render from.
        let (source, statement) = match &entry.source {
            Some(source) => {
                let statement = source.statement(&options);
                (Some(source.clone()), Some(statement))
            }
            None => (None, None),
        };
        let snapshot = match &statement {
            Some(statement) => statement.snapshot().clone(),
            None => read.snapshot,
        };
        let (engine, q, state, receiver) = (
            entry.engine.clone(),
            query.to_string(),
            snapshot.clone(),
            buffer.clone(),
        );
        let holding_writer = read.holding_writer;
        let native = source.is_none();
        // Closes the buffer (stopping the query) if this future is dropped
        // before the result is the session's (a request gone mid-RUN).
        let mut abandoned = CloseOnDrop(Some(buffer.clone()));
        // A native read's start never blocks: it may run nested in a long
        // task at a yield point, so it starts within a quantum. (One over a
        // source may wait for its backend.)
        let job_options = JobOptions {
            tenant: options.tenant.clone(),
            session: options.session.clone(),
            short: native,
        };
        let job: Task = Box::new(move |_| {
            let plan = match (may_have_plan, &source) {
                (false, _) => Ok(None),
                (true, Some(source)) => source.plan_description(&q, &params),
                (true, None) => engine.plan_description_on(&state, &q, &params),
            };
            let plan = match plan {
                Ok(plan) => plan,
                Err(e) => {
                    let _ = answer.send(Err(e));
                    return;
                }
            };
            let finisher = receiver.clone();
            let mut answer = Some(answer);
            // RUN is answered before the query's first task runs here.
            let admit = |info: &StatementInfo| {
                if !may_read {
                    return false;
                }
                receiver.set_ordered(info.ordered);
                if let Some(answer) = answer.take() {
                    let _ = answer.send(Ok((info.clone(), true, plan.clone())));
                }
                true
            };
            let done: rhizome_exec::OnEnd = Box::new(move |result| finisher.finish(result));
            let outcome = match (&source, &statement) {
                (Some(source), Some(statement)) => source.start_statement(
                    statement,
                    &q,
                    params,
                    &options,
                    receiver.clone(),
                    admit,
                    done,
                ),
                _ => engine.start_streaming_on(
                    state,
                    holding_writer,
                    &q,
                    params,
                    &options,
                    receiver.clone(),
                    admit,
                    done,
                ),
            };
            if let Some(answer) = answer {
                let _ = answer.send(outcome.map(|(info, started)| (info, started, plan)));
            }
        });
        WorkerPool::global().submit_with(job_options, job);
        let outcome = answered
            .await
            .map_err(|_| {
                Failure::new(
                    codes::UNKNOWN,
                    "the statement's job ended without an answer",
                )
            })?
            .map_err(|e| Failure::from_error(&e, query))?;
        abandoned.0 = None;
        let (info, true, plan) = outcome else {
            return Ok(PoolStart::NotStarted(outcome.0, outcome.2));
        };
        let mut result = OpenResult::new(
            (qid, started),
            info.columns.len(),
            Rows::Stream(buffer),
            query,
            &entry.name,
            running.clone(),
        );
        result.graph = Some(snapshot);
        result.plan = plan;
        result.over_source = entry.source.is_some();
        result._tracked = Some(tracked);
        Ok(PoolStart::Started(Box::new(result), info.columns))
    }
}
