//! Cypher's user and role administration, answered by the server:
//! `CREATE USER`, `DROP USER`, `ALTER USER … SET PASSWORD`,
//! `ALTER CURRENT USER SET PASSWORD FROM … TO …`, `SHOW USERS`,
//! `SHOW ROLES`, `GRANT ROLE … TO …`, `REVOKE ROLE … FROM …`.

use crate::admin::ServerResult;
use crate::auth::{hash_password, Need, Role, User, UserStore};
use crate::status::Failure;
use rhizome_common::Value;
use std::collections::BTreeMap;

/// A parsed administration command.
#[derive(Debug, Clone, PartialEq)]
pub enum UserCommand {
    /// `CREATE USER name [IF NOT EXISTS] SET [PLAINTEXT] PASSWORD pw [CHANGE [NOT] REQUIRED]`.
    Create {
        /// The user.
        name: String,
        /// The password.
        password: String,
        /// Must change it at first login (Neo4j's default: yes).
        change_required: bool,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
    },
    /// `DROP USER name [IF EXISTS]`.
    Drop {
        /// The user.
        name: String,
        /// `IF EXISTS`.
        if_exists: bool,
    },
    /// `ALTER USER name SET [PLAINTEXT] PASSWORD pw [CHANGE [NOT] REQUIRED]`.
    SetPassword {
        /// The user.
        name: String,
        /// The new password.
        password: String,
        /// Must change it at next login (default: yes).
        change_required: bool,
    },
    /// `ALTER CURRENT USER SET PASSWORD FROM old TO new`.
    ChangeOwnPassword {
        /// The current password.
        old: String,
        /// The new password.
        new: String,
    },
    /// `SHOW USERS`.
    ShowUsers,
    /// `SHOW ROLES`.
    ShowRoles,
    /// `GRANT ROLE r, … TO u, …`.
    Grant {
        /// Roles.
        roles: Vec<String>,
        /// Users.
        users: Vec<String>,
    },
    /// `REVOKE ROLE r, … FROM u, …`.
    Revoke {
        /// Roles.
        roles: Vec<String>,
        /// Users.
        users: Vec<String>,
    },
}

impl UserCommand {
    /// What running the command needs.
    pub fn need(&self) -> Option<Need> {
        match self {
            UserCommand::ChangeOwnPassword { .. } => None,
            _ => Some(Need::Admin),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Text(String),
    Comma,
}

fn tokens(query: &str, params: &BTreeMap<String, Value>) -> Result<Vec<Token>, Failure> {
    let mut out = Vec::new();
    let mut chars = query.trim().trim_end_matches(';').chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == ',' {
            chars.next();
            out.push(Token::Comma);
        } else if c == '\'' || c == '"' {
            chars.next();
            let mut text = String::new();
            loop {
                match chars.next() {
                    None => return Err(Failure::new(SYNTAX, "a string is not closed")),
                    Some('\\') => text.extend(chars.next()),
                    Some(q) if q == c => break,
                    Some(ch) => text.push(ch),
                }
            }
            out.push(Token::Text(text));
        } else if c == '$' {
            chars.next();
            let name: String =
                std::iter::from_fn(|| chars.next_if(|c| c.is_alphanumeric() || *c == '_'))
                    .collect();
            match params.get(&name) {
                Some(Value::String(s)) => out.push(Token::Text(s.clone())),
                Some(_) => {
                    return Err(Failure::new(
                        TYPE,
                        format!("parameter `{name}` must be a STRING"),
                    ))
                }
                None => {
                    return Err(Failure::new(
                        "Neo.ClientError.Statement.ParameterMissing",
                        format!("expected parameter(s): {name}"),
                    ))
                }
            }
        } else if c == '`' {
            chars.next();
            let name: String = std::iter::from_fn(|| chars.next_if(|c| *c != '`')).collect();
            chars.next();
            out.push(Token::Word(name));
        } else {
            let word: String = std::iter::from_fn(|| {
                chars.next_if(|c| c.is_alphanumeric() || *c == '_' || *c == '-' || *c == '.')
            })
            .collect();
            if word.is_empty() {
                return Err(Failure::new(SYNTAX, format!("unexpected `{c}`")));
            }
            out.push(Token::Word(word));
        }
    }
    Ok(out)
}

const SYNTAX: &str = "Neo.ClientError.Statement.SyntaxError";
const TYPE: &str = "Neo.ClientError.Statement.TypeError";

/// Reads tokens with keyword matching.
struct Reader {
    tokens: Vec<Token>,
    pos: usize,
}

impl Reader {
    fn keyword(&mut self, word: &str) -> bool {
        match self.tokens.get(self.pos) {
            Some(Token::Word(w)) if w.eq_ignore_ascii_case(word) => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }
    fn keywords(&mut self, words: &[&str]) -> bool {
        let start = self.pos;
        if words.iter().all(|w| self.keyword(w)) {
            true
        } else {
            self.pos = start;
            false
        }
    }
    fn expect(&mut self, words: &[&str]) -> Result<(), Failure> {
        if self.keywords(words) {
            Ok(())
        } else {
            Err(Failure::new(
                SYNTAX,
                format!("expected `{}`", words.join(" ")),
            ))
        }
    }
    fn name(&mut self) -> Result<String, Failure> {
        match self.tokens.get(self.pos) {
            Some(Token::Word(w)) => {
                self.pos += 1;
                Ok(w.clone())
            }
            _ => Err(Failure::new(SYNTAX, "expected a name")),
        }
    }
    fn names(&mut self) -> Result<Vec<String>, Failure> {
        let mut names = vec![self.name()?];
        while self.tokens.get(self.pos) == Some(&Token::Comma) {
            self.pos += 1;
            names.push(self.name()?);
        }
        Ok(names)
    }
    fn text(&mut self) -> Result<String, Failure> {
        match self.tokens.get(self.pos) {
            Some(Token::Text(t)) => {
                self.pos += 1;
                Ok(t.clone())
            }
            _ => Err(Failure::new(
                SYNTAX,
                "expected a password (a string or a parameter)",
            )),
        }
    }
    fn password(&mut self) -> Result<String, Failure> {
        self.expect(&["SET"])?;
        self.keyword("PLAINTEXT");
        self.expect(&["PASSWORD"])?;
        self.text()
    }
    fn change_required(&mut self) -> bool {
        if self.keywords(&["CHANGE", "NOT", "REQUIRED"]) {
            return false;
        }
        self.keywords(&["CHANGE", "REQUIRED"]);
        true
    }
    fn end(&self) -> Result<(), Failure> {
        match self.tokens.get(self.pos) {
            None => Ok(()),
            Some(t) => Err(Failure::new(SYNTAX, format!("unexpected {t:?} at the end"))),
        }
    }
}

/// Parses `query` if it is a user or role command.
pub fn parse(
    query: &str,
    params: &BTreeMap<String, Value>,
) -> Option<Result<UserCommand, Failure>> {
    let head: Vec<String> = query
        .split_whitespace()
        .take(3)
        .map(str::to_ascii_uppercase)
        .collect();
    let is_command = matches!(
        head.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["CREATE", "USER", ..]
            | ["DROP", "USER", ..]
            | ["ALTER", "USER", ..]
            | ["ALTER", "CURRENT", "USER"]
            | ["SHOW", "USERS", ..]
            | ["SHOW", "ROLES", ..]
            | ["GRANT", "ROLE" | "ROLES", ..]
            | ["REVOKE", "ROLE" | "ROLES", ..]
    );
    if !is_command {
        return None;
    }
    Some(tokens(query, params).and_then(|tokens| command(Reader { tokens, pos: 0 })))
}

fn command(mut r: Reader) -> Result<UserCommand, Failure> {
    let command = if r.keywords(&["CREATE", "USER"]) {
        let name = r.name()?;
        let if_not_exists = r.keywords(&["IF", "NOT", "EXISTS"]);
        let password = r.password()?;
        UserCommand::Create {
            name,
            password,
            change_required: r.change_required(),
            if_not_exists,
        }
    } else if r.keywords(&["DROP", "USER"]) {
        let name = r.name()?;
        UserCommand::Drop {
            name,
            if_exists: r.keywords(&["IF", "EXISTS"]),
        }
    } else if r.keywords(&["ALTER", "CURRENT", "USER"]) {
        r.expect(&["SET", "PASSWORD", "FROM"])?;
        let old = r.text()?;
        r.expect(&["TO"])?;
        UserCommand::ChangeOwnPassword {
            old,
            new: r.text()?,
        }
    } else if r.keywords(&["ALTER", "USER"]) {
        let name = r.name()?;
        let password = r.password()?;
        UserCommand::SetPassword {
            name,
            password,
            change_required: r.change_required(),
        }
    } else if r.keywords(&["SHOW", "USERS"]) {
        UserCommand::ShowUsers
    } else if r.keywords(&["SHOW", "ROLES"]) {
        UserCommand::ShowRoles
    } else if r.keyword("GRANT") {
        if !r.keyword("ROLE") {
            r.expect(&["ROLES"])?;
        }
        let roles = r.names()?;
        r.expect(&["TO"])?;
        UserCommand::Grant {
            roles,
            users: r.names()?,
        }
    } else {
        r.expect(&["REVOKE"])?;
        if !r.keyword("ROLE") {
            r.expect(&["ROLES"])?;
        }
        let roles = r.names()?;
        r.expect(&["FROM"])?;
        UserCommand::Revoke {
            roles,
            users: r.names()?,
        }
    };
    r.end()?;
    Ok(command)
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::new("Neo.ClientError.General.InvalidArguments", message)
}

fn roles_of(names: &[String]) -> Result<Vec<Role>, Failure> {
    names
        .iter()
        .map(|n| {
            Role::parse(n).ok_or_else(|| {
                invalid(format!(
                    "there is no role `{n}` (roles: reader, editor, admin)"
                ))
            })
        })
        .collect()
}

fn empty() -> ServerResult {
    ServerResult {
        columns: vec![],
        rows: vec![],
    }
}

/// Runs `command` for `current` (the logged-in user's name). Slow for
/// commands that hash a password (argon2): call it off the I/O threads.
pub fn run(
    command: UserCommand,
    store: &UserStore,
    current: &str,
) -> Result<ServerResult, Failure> {
    let stored = |e: String| Failure::new(crate::status::codes::UNKNOWN, e);
    match command {
        UserCommand::Create {
            name,
            password,
            change_required,
            if_not_exists,
        } => {
            if store.get(&name).is_some() {
                return if if_not_exists {
                    Ok(empty())
                } else {
                    Err(invalid(format!("the user `{name}` already exists")))
                };
            }
            if password.is_empty() {
                return Err(invalid("a password must not be empty"));
            }
            let hash = hash_password(&password).map_err(stored)?;
            store
                .change(|users| {
                    users.insert(
                        name,
                        User {
                            password_hash: hash,
                            roles: vec![],
                            change_required,
                        },
                    );
                    Ok(())
                })
                .map_err(stored)?;
        }
        UserCommand::Drop { name, if_exists } => {
            if name == current {
                return Err(invalid("you cannot drop the user you are logged in as"));
            }
            if store.get(&name).is_none() {
                return if if_exists {
                    Ok(empty())
                } else {
                    Err(invalid(format!("there is no user `{name}`")))
                };
            }
            store
                .change(|users| {
                    users.remove(&name);
                    Ok(())
                })
                .map_err(stored)?;
        }
        UserCommand::SetPassword {
            name,
            password,
            change_required,
        } => {
            if store.get(&name).is_none() {
                return Err(invalid(format!("there is no user `{name}`")));
            }
            let hash = hash_password(&password).map_err(stored)?;
            store
                .change(|users| {
                    let user = users.get_mut(&name).ok_or("the user was dropped")?;
                    user.password_hash = hash;
                    user.change_required = change_required;
                    Ok(())
                })
                .map_err(stored)?;
        }
        UserCommand::ChangeOwnPassword { old, new } => {
            if store.login(current, &old).is_err() {
                return Err(Failure::new(
                    "Neo.ClientError.General.InvalidArguments",
                    "the current password is not right",
                ));
            }
            if old == new {
                return Err(invalid("the new password must differ from the old one"));
            }
            let hash = hash_password(&new).map_err(stored)?;
            store
                .change(|users| {
                    let user = users.get_mut(current).ok_or("the user was dropped")?;
                    user.password_hash = hash;
                    user.change_required = false;
                    Ok(())
                })
                .map_err(stored)?;
        }
        UserCommand::ShowUsers => {
            return Ok(ServerResult {
                columns: [
                    "user",
                    "roles",
                    "passwordChangeRequired",
                    "suspended",
                    "home",
                ]
                .map(String::from)
                .to_vec(),
                rows: store
                    .all()
                    .into_iter()
                    .map(|(name, user)| {
                        vec![
                            Value::String(name),
                            Value::List(
                                user.roles
                                    .iter()
                                    .map(|r| Value::String(r.name().into()))
                                    .collect(),
                            ),
                            Value::Bool(user.change_required),
                            Value::Bool(false),
                            Value::Null,
                        ]
                    })
                    .collect(),
            })
        }
        UserCommand::ShowRoles => {
            return Ok(ServerResult {
                columns: vec!["role".into()],
                rows: Role::ALL
                    .iter()
                    .map(|r| vec![Value::String(r.name().into())])
                    .collect(),
            })
        }
        UserCommand::Grant { roles, users } | UserCommand::Revoke { roles, users }
            if users.is_empty() || roles.is_empty() =>
        {
            let _ = (roles, users);
            return Err(invalid("name at least one role and one user"));
        }
        UserCommand::Grant { roles, users } => {
            let roles = roles_of(&roles)?;
            store
                .change(|all| {
                    for name in &users {
                        let user = all
                            .get_mut(name)
                            .ok_or(format!("there is no user `{name}`"))?;
                        for role in &roles {
                            if !user.roles.contains(role) {
                                user.roles.push(*role);
                            }
                        }
                        user.roles.sort();
                    }
                    Ok(())
                })
                .map_err(invalid)?;
        }
        UserCommand::Revoke { roles, users } => {
            let roles = roles_of(&roles)?;
            store
                .change(|all| {
                    for name in &users {
                        let user = all
                            .get_mut(name)
                            .ok_or(format!("there is no user `{name}`"))?;
                        user.roles.retain(|r| !roles.contains(r));
                    }
                    Ok(())
                })
                .map_err(invalid)?;
        }
    }
    Ok(empty())
}

/// True if `query` changes the schema (needs the admin role).
pub fn is_schema_command(query: &str) -> bool {
    let head: Vec<String> = query
        .split_whitespace()
        .take(2)
        .map(str::to_ascii_uppercase)
        .collect();
    matches!(
        head.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        [
            "CREATE" | "DROP",
            "INDEX" | "CONSTRAINT" | "RANGE" | "TEXT" | "POINT" | "LOOKUP" | "FULLTEXT" | "VECTOR"
        ] | ["CREATE", "OR"]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(query: &str) -> Result<UserCommand, Failure> {
        let params = [("pw".to_string(), Value::String("from-param".into()))].into();
        parse(query, &params).expect("a user command")
    }

    #[test]
    fn commands_parse_with_neo4js_defaults() {
        assert_eq!(
            parsed("CREATE USER alice SET PASSWORD 'pw1'"),
            Ok(UserCommand::Create {
                name: "alice".into(),
                password: "pw1".into(),
                change_required: true,
                if_not_exists: false
            })
        );
        assert_eq!(
            parsed(
                "create user `bob` if not exists set plaintext password $pw change not required;"
            ),
            Ok(UserCommand::Create {
                name: "bob".into(),
                password: "from-param".into(),
                change_required: false,
                if_not_exists: true
            })
        );
        assert_eq!(
            parsed("ALTER CURRENT USER SET PASSWORD FROM 'a' TO 'b'"),
            Ok(UserCommand::ChangeOwnPassword {
                old: "a".into(),
                new: "b".into()
            })
        );
        assert_eq!(
            parsed("GRANT ROLE reader, editor TO alice"),
            Ok(UserCommand::Grant {
                roles: vec!["reader".into(), "editor".into()],
                users: vec!["alice".into()]
            })
        );
        assert!(parsed("CREATE USER alice SET PASSWORD").is_err());
        assert!(parse("MATCH (n) RETURN n", &BTreeMap::new()).is_none());
        assert!(is_schema_command("CREATE INDEX FOR (n:A) ON (n.x)"));
        assert!(!is_schema_command("CREATE (n:A)"));
    }

    #[test]
    fn commands_change_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = UserStore::open(dir.path()).unwrap();
        store.set_initial_password("admin-pw").unwrap();
        run(
            parsed("CREATE USER alice SET PASSWORD 'pw1' CHANGE NOT REQUIRED").unwrap(),
            &store,
            "neo4j",
        )
        .unwrap();
        run(
            parsed("GRANT ROLE reader TO alice").unwrap(),
            &store,
            "neo4j",
        )
        .unwrap();
        let alice = store.login("alice", "pw1").unwrap();
        assert_eq!(alice.roles, vec![Role::Reader]);
        assert!(run(
            parsed("GRANT ROLE wizard TO alice").unwrap(),
            &store,
            "neo4j"
        )
        .is_err());
        run(
            parsed("ALTER CURRENT USER SET PASSWORD FROM 'pw1' TO 'pw2'").unwrap(),
            &store,
            "alice",
        )
        .unwrap();
        assert!(store.login("alice", "pw2").is_ok());
        let users = run(parsed("SHOW USERS").unwrap(), &store, "neo4j").unwrap();
        assert_eq!(users.rows.len(), 2);
        run(parsed("DROP USER alice").unwrap(), &store, "neo4j").unwrap();
        assert!(store.get("alice").is_none());
        assert!(run(parsed("DROP USER neo4j").unwrap(), &store, "neo4j").is_err());
    }
}
