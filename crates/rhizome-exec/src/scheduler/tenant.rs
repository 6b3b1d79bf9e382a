//! Tenants and client sessions: the levels of the scheduling tree above a
//! query, and the virtual-time rules that order them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A tenant of the pool: the queries of one user or group, which together
/// get CPU in proportion to the tenant's share against other tenants with
/// runnable work, however many queries each runs. Create one per user or
/// group ([`Tenant::new`]) and pass it to every query of theirs
/// ([`ScopeOptions::tenant`]); queries without one belong to the pool's
/// default tenant.
#[derive(Debug)]
pub struct Tenant {
    name: String,
    pub(super) share: u64,
    /// CPU time consumed (ns) divided by the share.
    pub(super) vtime: AtomicU64,
    /// The least virtual time of the tenant's runnable queries when a worker
    /// last picked among them (never decreases): a query of the tenant
    /// starts, or becomes runnable again, at no less than this.
    pub(super) query_floor: AtomicU64,
    /// The least virtual time of the sessions of the tenant's runnable
    /// queries when a worker last picked among them (never decreases): a
    /// session's work is ordered at no less than this less
    /// [`START_CREDIT`] ([`ClientSession`]).
    pub(super) session_floor: AtomicU64,
    pub(super) busy_nanos: AtomicU64,
}

impl Tenant {
    /// A tenant named `name` (shown by `SHOW TRANSACTIONS`) with `share`
    /// (at least 1; relative to other tenants' shares).
    pub fn new(name: impl Into<String>, share: u64) -> Arc<Tenant> {
        Arc::new(Tenant {
            name: name.into(),
            share: share.max(1),
            vtime: AtomicU64::new(0),
            query_floor: AtomicU64::new(0),
            session_floor: AtomicU64::new(0),
            busy_nanos: AtomicU64::new(0),
        })
    }

    /// The tenant's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tenant's share.
    pub fn share(&self) -> u64 {
        self.share
    }

    /// Total worker time spent in the tenant's queries' tasks.
    pub fn busy_time(&self) -> Duration {
        Duration::from_nanos(self.busy_nanos.load(Ordering::Relaxed))
    }
}

/// A client's session (a server connection): the statements one client
/// runs, one after another. Within a tenant, sessions share the CPU by
/// virtual time (the CPU time of their queries) as tenants share the
/// process: a worker takes the queued job (a statement's start) of the
/// tenant's session that has used the least, and among the tenant's
/// runnable queries first one of that session, then by the queries' own
/// virtual times ([`ScopeOptions::session`], [`JobOptions::session`]). So
/// a client whose statements are short is served before other clients of
/// the same user that run heavy queries back to back, instead of queueing
/// behind their statements in arrival order. A session is ordered at no
/// less than its tenant's session floor (the least virtual time of the
/// sessions with runnable queries when a worker last picked) less
/// [`START_CREDIT`], so an idle session banks no more than that. Work with
/// no session counts as a session at that credited floor.
#[derive(Debug, Default)]
pub struct ClientSession {
    /// CPU time (ns) of the session's queries, raised to the credited
    /// floor when a worker picks work of the session below it.
    pub(super) vtime: AtomicU64,
    pub(super) busy_nanos: AtomicU64,
}

impl ClientSession {
    /// A new session that has used no CPU.
    pub fn new() -> Arc<ClientSession> {
        Arc::new(ClientSession::default())
    }

    /// Total worker time spent in the session's queries' tasks.
    pub fn busy_time(&self) -> Duration {
        Duration::from_nanos(self.busy_nanos.load(Ordering::Relaxed))
    }
}

/// Where work of `session` (none: a session just begun) stands among its
/// tenant's sessions whose floor is `session_floor`: its virtual time,
/// raised to the floor less [`START_CREDIT`].
pub(super) fn session_key(session: Option<&Arc<ClientSession>>, session_floor: u64) -> u64 {
    let credited = session_floor.saturating_sub(START_CREDIT);
    session.map_or(credited, |s| s.vtime.load(Ordering::Relaxed).max(credited))
}

/// A session's identity in a job queue (0: none).
pub(super) fn session_id(session: Option<&Arc<ClientSession>>) -> usize {
    session.map_or(0, |s| Arc::as_ptr(s) as usize)
}

/// Worker time (ns) charged to a query and its tenant when a worker picks
/// one of its tasks, ahead of the task's own time (charged when it ends,
/// less this advance). Without it a query or tenant whose long tasks run
/// keeps the floor's virtual time until they end and ties with one that
/// has nothing running, which lost the tie half the time (by position):
/// a foreground query waited behind background queries' long tasks.
pub(super) const PICK_ADVANCE: u64 = 1_000;

/// Worker time (ns) a query may run ahead of its tenant's floor: a query
/// starts, or becomes runnable again, at no less than the floor less this
/// much of its own CPU time (in its weight's virtual time). A short
/// statement (a point read of a fraction of a millisecond) thus runs its
/// tasks before the long queries of its tenant instead of taking turns with
/// each of them — behind W running queries it waited about W/2 quanta per
/// task — while a query longer than the credit falls back to its fair
/// share, and idling banks no more than this.
pub(super) const START_CREDIT: u64 = 4_000_000;

/// `query_floor` less [`START_CREDIT`] in the virtual time of a query of
/// `weight`: where such a query starts, and the least key it takes.
pub(super) fn credited_floor(query_floor: u64, weight: u64) -> u64 {
    query_floor.saturating_sub(START_CREDIT.saturating_mul(100) / weight.max(1))
}

/// The name of the tenant of queries that name none ([`ScopeOptions::tenant`]).
pub const DEFAULT_TENANT: &str = "default";
