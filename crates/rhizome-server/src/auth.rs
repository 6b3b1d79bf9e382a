//! Users, roles and logins.
//!
//! Users live with the database, in `users.json` in its directory: a name,
//! an argon2id password hash (PHC string, salted per user), roles, and
//! whether the password must be changed before anything else. The file is
//! replaced atomically (written beside, synced, renamed).
//!
//! Roles: `reader` reads; `editor` also writes data; `admin` also changes
//! the schema and manages users. Repeated failed logins of one user are
//! slowed down as Neo4j does by default: after 3 failures in a row, further
//! attempts are refused for 5 seconds (and logged).

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use password_hash::rand_core::OsRng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The name of the users file in a database directory.
pub const USERS_FILE: &str = "users.json";
/// The first administrator, as in Neo4j.
pub const ADMIN_USER: &str = "neo4j";
/// Failed logins in a row before a user is locked out for a while.
pub const MAX_FAILED_LOGINS: u32 = 3;
/// How long the lock-out lasts.
pub const LOCKOUT: Duration = Duration::from_secs(5);

/// A built-in role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads data.
    Reader,
    /// Reads and writes data.
    Editor,
    /// Also changes the schema and manages users and roles.
    Admin,
}

impl Role {
    /// All roles, weakest first.
    pub const ALL: [Role; 3] = [Role::Reader, Role::Editor, Role::Admin];

    /// The role's name.
    pub fn name(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Editor => "editor",
            Role::Admin => "admin",
        }
    }

    /// The role called `name` (case-insensitive).
    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(name))
    }
}

/// One user as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    /// The argon2id hash (PHC string).
    pub password_hash: String,
    /// Granted roles.
    pub roles: Vec<Role>,
    /// True if the password must be changed before anything else.
    pub change_required: bool,
}

/// What a statement needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    /// Reading.
    Read,
    /// Writing data.
    Write,
    /// Changing the schema or managing users.
    Admin,
}

impl User {
    /// True if the user's roles allow `need`.
    pub fn may(&self, need: Need) -> bool {
        self.roles.iter().any(|r| match need {
            Need::Read => true,
            Need::Write => *r >= Role::Editor,
            Need::Admin => *r == Role::Admin,
        })
    }
}

/// Why a login failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginError {
    /// Unknown user or wrong password (never said which).
    Refused,
    /// Too many failures: wait.
    RateLimited,
}

/// File name of the users lock inside a database directory: a server holds
/// a shared `flock` on it while it runs, an administration command an
/// exclusive one, so that a password reset never races a server that keeps
/// the users in memory (and would write its own copy back).
pub const USERS_LOCK_FILE: &str = "users.lock";

/// The users of one database, with their file.
pub struct UserStore {
    path: PathBuf,
    users: Mutex<BTreeMap<String, User>>,
    failures: Mutex<HashMap<String, (u32, Instant)>>,
    /// The `flock` on [`USERS_LOCK_FILE`], held as long as the store lives.
    _lock: std::fs::File,
}

/// Hashes `password` with argon2id and a fresh salt.
pub fn hash_password(password: &str) -> Result<String, String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| format!("cannot hash the password: {e}"))
}

fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// Takes the `flock` on the users lock of `db_dir`: shared (a server) or
/// exclusive (an administration command), without waiting.
fn lock_users(db_dir: &Path, exclusive: bool) -> Result<std::fs::File, String> {
    let path = db_dir.join(USERS_LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let taken = if exclusive {
        file.try_lock()
    } else {
        file.try_lock_shared()
    };
    match taken {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) if exclusive => Err(format!(
            "a running server (`rhizome serve`) holds the users of {}: change passwords \
             over a connection (ALTER USER ... SET PASSWORD) or stop the server first",
            db_dir.display()
        )),
        Err(std::fs::TryLockError::WouldBlock) => Err(format!(
            "an administration command (`rhizome admin`) is changing the users of {}; \
             try again when it has finished",
            db_dir.display()
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}

impl UserStore {
    /// Opens the users of the database in `db_dir` (none if it has no
    /// file) for a server: several servers may hold them at once, an
    /// administration command ([`UserStore::open_exclusive`]) may not.
    pub fn open(db_dir: &Path) -> Result<UserStore, String> {
        let lock = lock_users(db_dir, false)?;
        UserStore::open_locked(db_dir, lock)
    }

    /// Opens the users of the database in `db_dir` for an administration
    /// command; fails at once, saying so, while a server holds them.
    pub fn open_exclusive(db_dir: &Path) -> Result<UserStore, String> {
        let lock = lock_users(db_dir, true)?;
        UserStore::open_locked(db_dir, lock)
    }

    fn open_locked(db_dir: &Path, lock: std::fs::File) -> Result<UserStore, String> {
        let path = db_dir.join(USERS_FILE);
        let users = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| format!("{}: not a valid users file: {e}", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        Ok(UserStore {
            path,
            users: Mutex::new(users),
            failures: Mutex::new(HashMap::new()),
            _lock: lock,
        })
    }

    /// Sets the password of the existing user `name` (an administrator's
    /// reset of a lost password); with `change_required`, the user must
    /// change it at the next login.
    pub fn set_password(
        &self,
        name: &str,
        password: &str,
        change_required: bool,
    ) -> Result<(), String> {
        if password.is_empty() {
            return Err("the password must not be empty".into());
        }
        self.change(|users| {
            let user = users
                .get_mut(name)
                .ok_or_else(|| format!("there is no user `{name}`"))?;
            user.password_hash = hash_password(password)?;
            user.change_required = change_required;
            Ok(())
        })
    }

    fn users(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, User>> {
        self.users.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True if no user exists yet.
    pub fn is_empty(&self) -> bool {
        self.users().is_empty()
    }

    /// A copy of user `name`.
    pub fn get(&self, name: &str) -> Option<User> {
        self.users().get(name).cloned()
    }

    /// All users, by name.
    pub fn all(&self) -> Vec<(String, User)> {
        self.users()
            .iter()
            .map(|(n, u)| (n.clone(), u.clone()))
            .collect()
    }

    /// Creates the `neo4j` administrator with `password` if there are no
    /// users yet; true if it did.
    pub fn set_initial_password(&self, password: &str) -> Result<bool, String> {
        if !self.is_empty() {
            return Ok(false);
        }
        self.change(|users| {
            users.insert(
                ADMIN_USER.into(),
                User {
                    password_hash: hash_password(password)?,
                    roles: vec![Role::Admin],
                    change_required: false,
                },
            );
            Ok(())
        })?;
        Ok(true)
    }

    /// Applies `edit` and writes the file; on failure nothing changes.
    pub fn change(
        &self,
        edit: impl FnOnce(&mut BTreeMap<String, User>) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut users = self.users();
        let mut edited = users.clone();
        edit(&mut edited)?;
        self.write(&edited)?;
        *users = edited;
        Ok(())
    }

    fn write(&self, users: &BTreeMap<String, User>) -> Result<(), String> {
        let text = serde_json::to_string_pretty(users).map_err(|e| e.to_string())?;
        let temp = self.path.with_extension("json.tmp");
        let fail = |e: std::io::Error| format!("cannot write {}: {e}", self.path.display());
        {
            use std::io::Write;
            let mut file = std::fs::File::create(&temp).map_err(fail)?;
            file.write_all(text.as_bytes()).map_err(fail)?;
            file.sync_all().map_err(fail)?;
        }
        std::fs::rename(&temp, &self.path).map_err(fail)
    }

    /// Checks a login (slow on purpose: argon2). Three failures in a row
    /// lock the user out for [`LOCKOUT`].
    pub fn login(&self, name: &str, password: &str) -> Result<User, LoginError> {
        {
            let failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((count, last)) = failures.get(name) {
                if *count >= MAX_FAILED_LOGINS && last.elapsed() < LOCKOUT {
                    return Err(LoginError::RateLimited);
                }
            }
        }
        let user = self.get(name);
        let ok = match &user {
            Some(u) => verify_password(password, &u.password_hash),
            None => {
                // Spend the same time for an unknown user.
                let _ = hash_password(password);
                false
            }
        };
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        match (ok, user) {
            (true, Some(user)) => {
                failures.remove(name);
                Ok(user)
            }
            _ => {
                let entry = failures
                    .entry(name.to_string())
                    .or_insert((0, Instant::now()));
                if entry.0 >= MAX_FAILED_LOGINS {
                    entry.0 = 0; // the lock-out passed: count afresh
                }
                entry.0 += 1;
                entry.1 = Instant::now();
                Err(LoginError::Refused)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_reset_waits_for_no_server_and_needs_the_user() {
        let dir = tempfile::tempdir().unwrap();
        {
            let admin = UserStore::open_exclusive(dir.path()).unwrap();
            assert!(admin.set_initial_password("first").unwrap());
            let err = UserStore::open(dir.path()).err().unwrap();
            assert!(err.contains("rhizome admin"), "{err}");
            assert!(admin
                .set_password("nobody", "x", false)
                .unwrap_err()
                .contains("no user `nobody`"));
            assert!(admin.set_password(ADMIN_USER, "", false).is_err());
            admin.set_password(ADMIN_USER, "second", true).unwrap();
        }
        let server = UserStore::open(dir.path()).unwrap();
        let _another_server = UserStore::open(dir.path()).unwrap();
        let err = UserStore::open_exclusive(dir.path()).err().unwrap();
        assert!(err.contains("running server"), "{err}");
        assert!(server.login(ADMIN_USER, "first").is_err());
        let admin = server.login(ADMIN_USER, "second").unwrap();
        assert!(admin.change_required);
    }

    #[test]
    fn the_initial_password_makes_an_admin_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = UserStore::open(dir.path()).unwrap();
        assert!(store.set_initial_password("s3cret").unwrap());
        assert!(!store.set_initial_password("other").unwrap());
        let admin = store.login(ADMIN_USER, "s3cret").unwrap();
        assert!(admin.may(Need::Admin));
        // Stored with the database, hashed.
        let text = std::fs::read_to_string(dir.path().join(USERS_FILE)).unwrap();
        assert!(!text.contains("s3cret") && text.contains("$argon2id$"));
        let reopened = UserStore::open(dir.path()).unwrap();
        assert!(reopened.login(ADMIN_USER, "s3cret").is_ok());
    }

    #[test]
    fn wrong_passwords_are_refused_and_then_rate_limited() {
        let dir = tempfile::tempdir().unwrap();
        let store = UserStore::open(dir.path()).unwrap();
        store.set_initial_password("right").unwrap();
        for _ in 0..MAX_FAILED_LOGINS {
            assert_eq!(store.login(ADMIN_USER, "wrong"), Err(LoginError::Refused));
        }
        assert_eq!(
            store.login(ADMIN_USER, "right"),
            Err(LoginError::RateLimited)
        );
        assert_eq!(store.login("nobody", "x"), Err(LoginError::Refused));
        // Once the lock-out has passed, the right password logs in again
        // (the last failure is moved back rather than waited for).
        {
            let mut failures = store.failures.lock().unwrap();
            let (_, last) = failures.get_mut(ADMIN_USER).unwrap();
            *last = Instant::now() - LOCKOUT + Duration::from_millis(200);
        }
        assert_eq!(
            store.login(ADMIN_USER, "right"),
            Err(LoginError::RateLimited),
            "still inside the lock-out"
        );
        std::thread::sleep(Duration::from_millis(250));
        assert!(
            store.login(ADMIN_USER, "right").is_ok(),
            "after the lock-out"
        );
        // ... and a success clears the count: three new failures to lock again.
        for _ in 0..MAX_FAILED_LOGINS - 1 {
            assert_eq!(store.login(ADMIN_USER, "wrong"), Err(LoginError::Refused));
        }
        assert!(store.login(ADMIN_USER, "right").is_ok());
    }

    #[test]
    fn roles_grant_what_they_say() {
        let user = |role| User {
            password_hash: String::new(),
            roles: vec![role],
            change_required: false,
        };
        assert!(user(Role::Reader).may(Need::Read) && !user(Role::Reader).may(Need::Write));
        assert!(user(Role::Editor).may(Need::Write) && !user(Role::Editor).may(Need::Admin));
        assert!(user(Role::Admin).may(Need::Admin));
        let nobody = User {
            roles: vec![],
            ..user(Role::Reader)
        };
        assert!(!nobody.may(Need::Read));
    }
}
