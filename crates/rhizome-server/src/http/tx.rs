//! Explicit transactions of the HTTP API: each is a Bolt session (see
//! [`super::bridge`]) kept between requests under a random id, owned by
//! the user who opened it, and rolled back when it is not used for
//! `http_transaction_timeout_secs` (every request on it extends it).

use super::bridge::Bridge;
use base64::Engine as _;
use password_hash::rand_core::{OsRng, RngCore};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// One open HTTP transaction.
pub struct HttpTx {
    /// Its session (with the engine transaction inside).
    pub bridge: Bridge,
    /// The user who opened it; nobody else may use it.
    pub user: String,
    /// The database it runs on (as the client named it).
    pub db: String,
    /// When it is rolled back unless used again.
    pub expires: Instant,
}

/// The open transactions.
pub struct Transactions {
    timeout: Duration,
    open: Mutex<HashMap<String, Arc<tokio::sync::Mutex<HttpTx>>>>,
}

/// A transaction handed to a request.
pub type TxHandle = Arc<tokio::sync::Mutex<HttpTx>>;

impl Transactions {
    /// Transactions that expire `timeout` after their last request.
    pub fn new(timeout: Duration) -> Transactions {
        Transactions {
            timeout,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// How long a transaction lives after a request.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Registers a transaction; its id.
    pub fn insert(&self, bridge: Bridge, user: &str, db: &str) -> (String, TxHandle) {
        let mut bytes = [0u8; 16];
        OsRng.fill_bytes(&mut bytes);
        let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let tx = Arc::new(tokio::sync::Mutex::new(HttpTx {
            bridge,
            user: user.to_string(),
            db: db.to_string(),
            expires: Instant::now() + self.timeout,
        }));
        self.lock().insert(id.clone(), tx.clone());
        (id, tx)
    }

    /// The transaction `id` if it is open (another user's is not found).
    pub async fn get(&self, id: &str, user: &str) -> Option<TxHandle> {
        let tx = self.lock().get(id).cloned()?;
        let expired = {
            let guard = tx.lock().await;
            if guard.user != user {
                return None;
            }
            guard.expires <= Instant::now()
        };
        if expired {
            self.remove(id);
            return None;
        }
        Some(tx)
    }

    /// Forgets `id` (its session, once dropped, rolls back what is left).
    pub fn remove(&self, id: &str) {
        let removed = self.lock().remove(id);
        drop(removed);
    }

    /// Number of open transactions.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when none is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rolls back every transaction that expired and is not in use.
    pub fn sweep(&self) {
        let now = Instant::now();
        let mut open = self.lock();
        let expired: Vec<String> = open
            .iter()
            .filter(|(_, tx)| tx.try_lock().is_ok_and(|t| t.expires <= now))
            .map(|(id, _)| id.clone())
            .collect();
        let removed: Vec<_> = expired
            .into_iter()
            .filter_map(|id| open.remove(&id).map(|tx| (id, tx)))
            .collect();
        drop(open);
        for (id, tx) in removed {
            crate::log(format_args!("http: transaction {id} expired, rolled back"));
            drop(tx);
        }
    }

    /// Drops every transaction (server shutdown): each rolls back.
    pub fn clear(&self) {
        let all: Vec<_> = self.lock().drain().collect();
        drop(all);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TxHandle>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `instant` (in the future) as an RFC 3339 UTC time stamp.
pub fn rfc3339(instant: Instant) -> String {
    let wall = SystemTime::now() + instant.saturating_duration_since(Instant::now());
    let since = wall
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs() as i64;
    let (y, m, d) = rhizome_common::temporal::civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}
