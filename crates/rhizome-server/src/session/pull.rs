//! PULL and DISCARD: streaming a result's records to the client and its
//! summary at the end.

use super::*;

impl Session {
    pub(super) async fn pull<W: AsyncWrite + Unpin>(
        &mut self,
        n: i64,
        qid: i64,
        discard: bool,
        writer: &mut W,
    ) -> std::io::Result<()> {
        let index = if qid == -1 {
            self.results.len().checked_sub(1)
        } else {
            self.results.iter().position(|r| r.qid == qid)
        };
        let Some(index) = index else {
            self.fail(Failure::invalid(format!(
                "there is no open result with qid {qid}"
            )));
            return Ok(());
        };
        if discard && n < 0 && self.tx.is_none() {
            // Discarding the rest of an autocommit read stops its query at
            // once (in a transaction the rest is drained instead: a
            // cancelled statement would fail the transaction).
            if let Rows::Stream(buffer) = &self.results[index].rows {
                buffer.close();
                let summary = self.summary(index).await;
                self.results.remove(index);
                self.success(summary);
                self.state = if self.results.is_empty() {
                    State::Ready
                } else {
                    State::Streaming
                };
                return Ok(());
            }
        }
        if self.results[index].entry.is_terminated() {
            self.fail(transactions::terminated());
            return Ok(());
        }
        let mut left = if n < 0 { u64::MAX } else { n as u64 };
        let v5 = self.version.is_v5();
        let taken = if let Rows::Packed(rows) = &mut self.results[index].rows {
            while left > 0 {
                let Some(row) = rows.next() else { break };
                if !discard {
                    self.scratch.clear();
                    message::record_header(&mut self.scratch, row.len());
                    for value in &row {
                        value.encode(&mut self.scratch);
                    }
                    crate::framing::write_message(&mut self.out, &self.scratch);
                }
                left -= 1;
            }
            if rows.len() > 0 {
                Taken::More
            } else {
                Taken::Done(self.summary(index).await)
            }
        } else {
            loop {
                let result = &mut self.results[index];
                // Send rows already at hand.
                while left > 0 && result.pending.len() >= result.width.max(1) {
                    if result.width == 0 {
                        result.pending.clear();
                        break;
                    }
                    if !discard {
                        self.scratch.clear();
                        message::record_header(&mut self.scratch, result.width);
                        let writer_ = ValueWriter {
                            v5,
                            graph: result
                                .graph
                                .as_ref()
                                .map(|s| s as &dyn rhizome_storage::GraphRead),
                        };
                        for value in result.pending.drain(..result.width) {
                            writer_.write(&mut self.scratch, &value);
                        }
                        crate::framing::write_message(&mut self.out, &self.scratch);
                    } else {
                        result.pending.drain(..result.width);
                    }
                    left -= 1;
                    if self.out.len() >= FLUSH_AT {
                        break;
                    }
                }
                if self.out.len() >= FLUSH_AT {
                    self.flush_if_large(writer).await?;
                    continue;
                }
                if left == 0 {
                    break Taken::More;
                }
                let result = &mut self.results[index];
                match next_rows(result).await {
                    Some(Ok(rows)) => result.pending.extend(rows),
                    Some(Err(failure)) => {
                        let failure = if result.entry.is_terminated() {
                            transactions::terminated()
                        } else {
                            failure
                        };
                        self.fail(failure);
                        return Ok(());
                    }
                    None => {
                        let summary = self.summary(index).await;
                        break Taken::Done(summary);
                    }
                }
            }
        };
        match taken {
            Taken::More => {
                // Is there really more? A result whose query has ended
                // with nothing left says has_more only if rows remain.
                self.success(map([("has_more", true.into())]));
            }
            Taken::Done(summary) => {
                // Dropping the result (its `Tracked`) unlists its buffer.
                let result = self.results.remove(index);
                if self.results.is_empty() {
                    result.entry.end_query();
                }
                self.success(summary);
                self.state = match (self.tx.is_some(), self.results.is_empty()) {
                    (true, true) => State::TxReady,
                    (true, false) => State::TxStreaming,
                    (false, true) => State::Ready,
                    (false, false) => State::Streaming,
                };
            }
        }
        Ok(())
    }

    /// The metadata of the last response of a result.
    async fn summary(&mut self, index: usize) -> PackValue {
        let result = &mut self.results[index];
        let outcome = match &mut result.rows {
            Rows::Done(_, outcome) => outcome.take(),
            Rows::Stream(_) | Rows::Packed(_) => None,
        };
        let counters = outcome.as_ref().map(|o| o.counters).unwrap_or_default();
        let kind = if result.updating {
            if has_updates(&counters) {
                "w"
            } else {
                "rw"
            }
        } else {
            "r"
        };
        let mut metadata = vec![
            ("type".to_string(), PackValue::from(kind)),
            (
                "t_last".to_string(),
                PackValue::Int(result.started.elapsed().as_millis() as i64),
            ),
            ("db".to_string(), result.db.as_str().into()),
        ];
        if has_updates(&counters) {
            metadata.push(("stats".to_string(), stats(&counters)));
        }
        if let Some(bookmark) = &result.bookmark {
            metadata.push(("bookmark".to_string(), bookmark.as_str().into()));
        }
        if let Some(outcome) = &outcome {
            // EXPLAIN / PROFILE: the plan tree (drivers' summary.plan / .profile).
            metadata.extend(crate::plan::summary_entries(
                outcome,
                result.plan.as_ref(),
                result.over_source,
            ));
        }
        PackValue::Map(metadata)
    }
}

/// The next block of a result's rows, `None` at its end, or its failure.
async fn next_rows(result: &mut OpenResult) -> Option<Result<Vec<Value>, Failure>> {
    match &mut result.rows {
        Rows::Done(blocks, _) => blocks.next().map(Ok),
        Rows::Packed(_) => None,
        Rows::Stream(buffer) => match buffer.next().await {
            Next::Rows(rows) => Some(Ok(rows)),
            Next::Finished(outcome) => match *outcome {
                Ok(outcome) => {
                    result.rows = Rows::Done(Vec::new().into_iter(), Some(Box::new(outcome)));
                    None
                }
                Err(e) => Some(Err(Failure::from_error(&e, &result.query))),
            },
        },
    }
}
