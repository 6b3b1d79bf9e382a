//! HELLO and LOGON: authentication, the privileges a request needs,
//! user administration commands and ROUTE.

use super::*;

impl Session {
    pub(super) async fn hello(&mut self, extra: PackValue) {
        if !self.version_at_least(Version::V5_1) {
            // Before 5.1 the credentials come with HELLO.
            if let Err(failure) = self.authenticate(&extra).await {
                message::failure(&mut self.out, failure.code, &failure.message);
                self.state = State::Defunct;
                return;
            }
        }
        let mut metadata = vec![
            (
                "server".to_string(),
                PackValue::from(format!("Neo4j/{NEO4J_COMPATIBLE_VERSION}")),
            ),
            (
                "connection_id".to_string(),
                self.connection_id.as_str().into(),
            ),
        ];
        if self.version.is_v5() {
            metadata.push(("hints".to_string(), map([])));
        }
        self.success(PackValue::Map(metadata));
        self.state = if self.version_at_least(Version::V5_1) {
            State::Authentication
        } else {
            State::Ready
        };
    }

    fn version_at_least(&self, v: Version) -> bool {
        self.version >= v
    }

    /// Checks credentials. With authentication off (allowed on loopback
    /// only) every scheme is accepted and the client is `neo4j`; with it on,
    /// only `basic` with a user's right password (argon2, off the I/O
    /// threads), and repeated failures are rate-limited and logged.
    async fn authenticate(&mut self, auth: &PackValue) -> Result<(), Failure> {
        let text = |key: &str| match auth.get(key) {
            Some(PackValue::String(s)) => Some(s.clone()),
            _ => None,
        };
        let Some(users) = self.users.clone() else {
            self.user = "neo4j".into();
            return Ok(());
        };
        let unauthorized = || {
            Failure::new(
                codes::UNAUTHORIZED,
                "The client is unauthorized due to authentication failure.",
            )
        };
        let (Some("basic"), Some(principal), Some(credentials)) = (
            text("scheme").as_deref(),
            text("principal"),
            text("credentials"),
        ) else {
            crate::log(format_args!(
                "{}: failed login: the server needs scheme `basic` with a user name and password",
                self.connection_id
            ));
            return Err(unauthorized());
        };
        let name = principal.clone();
        let login = tokio::task::spawn_blocking(move || users.login(&name, &credentials))
            .await
            .map_err(|e| Failure::new(codes::UNKNOWN, e.to_string()))?;
        match login {
            Ok(_) => {
                self.user = principal;
                Ok(())
            }
            Err(LoginError::Refused) => {
                crate::log(format_args!(
                    "{}: failed login for user `{principal}`",
                    self.connection_id
                ));
                Err(unauthorized())
            }
            Err(LoginError::RateLimited) => {
                crate::log(format_args!(
                    "{}: login for user `{principal}` refused: too many failed attempts, locked for {} s",
                    self.connection_id,
                    crate::auth::LOCKOUT.as_secs()
                ));
                Err(Failure::new(
                    "Neo.ClientError.Security.AuthenticationRateLimit",
                    "The client has provided incorrect authentication details too many times in a row.",
                ))
            }
        }
    }

    pub(super) async fn logon(&mut self, auth: PackValue) {
        match self.authenticate(&auth).await {
            Ok(()) => {
                self.success(map([]));
                self.state = State::Ready;
            }
            Err(failure) => {
                message::failure(&mut self.out, failure.code, &failure.message);
                self.state = State::Defunct;
            }
        }
    }

    /// The logged-in user as stored now (`None` without authentication).
    pub(super) fn current_user(&self) -> Option<Result<User, Failure>> {
        let users = self.users.as_ref()?;
        Some(users.get(&self.user).ok_or_else(|| {
            Failure::new(
                codes::UNAUTHORIZED,
                format!("the user `{}` no longer exists", self.user),
            )
        }))
    }

    /// Fails unless the user may do `need` (and need not change its password first).
    pub(super) fn check(&self, need: Need, what: &str) -> Result<(), Failure> {
        let Some(user) = self.current_user() else {
            return Ok(());
        };
        let user = user?;
        if user.change_required {
            return Err(Failure::new(
                "Neo.ClientError.Security.CredentialsExpired",
                "The password must be changed first: ALTER CURRENT USER SET PASSWORD FROM 'old' TO 'new'",
            ));
        }
        if user.may(need) {
            Ok(())
        } else {
            Err(Failure::new(
                "Neo.ClientError.Security.Forbidden",
                format!(
                    "{what} is not allowed for user `{}` with roles {:?}",
                    self.user,
                    user.roles.iter().map(|r| r.name()).collect::<Vec<_>>()
                ),
            ))
        }
    }

    /// Runs a user or role command.
    pub(super) async fn user_command(
        &mut self,
        command: UserCommand,
    ) -> Result<admin::ServerResult, Failure> {
        let Some(users) = self.users.clone() else {
            return Err(Failure::new(
                "Neo.ClientError.Statement.NotSystemDatabaseError",
                "users and roles exist only when the server runs with authentication (auth = basic)",
            ));
        };
        if let Some(need) = command.need() {
            self.check(need, "managing users and roles")?;
        }
        let current = self.user.clone();
        tokio::task::spawn_blocking(move || user_commands::run(command, &users, &current))
            .await
            .map_err(|e| Failure::new(codes::UNKNOWN, e.to_string()))?
    }

    pub(super) fn route(&mut self, _routing: PackValue, db: Option<String>) {
        let Some(entry) = self.registry.get(db.as_deref()) else {
            return self.fail(database_not_found(db.as_deref().unwrap_or("")));
        };
        let address = PackValue::List(vec![self.config.advertised_address.as_str().into()]);
        let server = |role: &str| map([("addresses", address.clone()), ("role", role.into())]);
        let table = map([
            ("ttl", 300.into()),
            ("db", entry.name.as_str().into()),
            (
                "servers",
                PackValue::List(vec![server("WRITE"), server("READ"), server("ROUTE")]),
            ),
        ]);
        self.success(map([("rt", table)]));
    }
}
