//! Who sends an HTTP request: `Authorization: Basic` checked against the
//! server's users (the same argon2 check, failure log and lock-out as a
//! Bolt login), or `Authorization: Bearer` with a token that
//! `POST /auth/token` issued to a user who logged in with Basic.

use crate::auth::{LoginError, UserStore, ADMIN_USER, LOCKOUT};
use crate::status::{codes, Failure};
use base64::Engine as _;
use password_hash::rand_core::{OsRng, RngCore};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bearer tokens issued by `POST /auth/token`, in memory only.
pub struct Tokens {
    ttl: Duration,
    issued: Mutex<HashMap<String, (String, Instant)>>,
}

impl Tokens {
    /// Tokens valid for `ttl`.
    pub fn new(ttl: Duration) -> Tokens {
        Tokens {
            ttl,
            issued: Mutex::new(HashMap::new()),
        }
    }

    /// A new token for `user` and how long it is valid.
    pub fn issue(&self, user: &str) -> (String, Duration) {
        let mut bytes = [0u8; 32];
        OsRng.fill_bytes(&mut bytes);
        let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let mut issued = self.issued.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        issued.retain(|_, (_, expires)| *expires > now);
        issued.insert(token.clone(), (user.to_string(), now + self.ttl));
        (token, self.ttl)
    }

    /// The user of a valid token.
    pub fn user(&self, token: &str) -> Option<String> {
        let issued = self.issued.lock().unwrap_or_else(|e| e.into_inner());
        issued
            .get(token)
            .filter(|(_, expires)| *expires > Instant::now())
            .map(|(user, _)| user.clone())
    }

    /// Forgets `token`; whether it was known.
    pub fn revoke(&self, token: &str) -> bool {
        let mut issued = self.issued.lock().unwrap_or_else(|e| e.into_inner());
        issued.remove(token).is_some()
    }
}

fn unauthorized(message: &str) -> Failure {
    Failure::new(codes::UNAUTHORIZED, message.to_string())
}

/// The credentials of an `Authorization` header.
#[derive(Debug, PartialEq, Eq)]
pub enum Credentials {
    /// User name and password.
    Basic(String, String),
    /// A token from `POST /auth/token`.
    Bearer(String),
}

/// Reads an `Authorization` header value.
pub fn parse_header(value: &str) -> Result<Credentials, Failure> {
    let (scheme, rest) = value.trim().split_once(' ').unwrap_or((value.trim(), ""));
    let rest = rest.trim();
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(rest)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| {
                unauthorized("the Basic credentials are not valid base64 of `user:password`")
            })?;
        let (user, password) = decoded.split_once(':').ok_or_else(|| {
            unauthorized("the Basic credentials have no `:` between user and password")
        })?;
        Ok(Credentials::Basic(user.to_string(), password.to_string()))
    } else if scheme.eq_ignore_ascii_case("bearer") && !rest.is_empty() {
        Ok(Credentials::Bearer(rest.to_string()))
    } else {
        Err(unauthorized(
            "unsupported Authorization scheme: use `Basic` (user:password) or `Bearer` (a token from POST /auth/token)",
        ))
    }
}

/// The user a request acts as. Without authentication (`users` is
/// `None`, loopback only) everyone is the administrator.
pub async fn authenticate(
    users: Option<&Arc<UserStore>>,
    tokens: &Tokens,
    header: Option<&str>,
    who: &str,
) -> Result<String, Failure> {
    let Some(users) = users else {
        return Ok(ADMIN_USER.to_string());
    };
    let Some(header) = header else {
        return Err(unauthorized(
            "no Authorization header: send `Authorization: Basic base64(user:password)` or a Bearer token",
        ));
    };
    match parse_header(header)? {
        Credentials::Bearer(token) => {
            let user = tokens.user(&token).ok_or_else(|| {
                crate::log(format_args!(
                    "{who}: refused an unknown or expired bearer token"
                ));
                unauthorized(
                    "the bearer token is unknown or expired: get a new one from POST /auth/token",
                )
            })?;
            if users.get(&user).is_none() {
                tokens.revoke(&token);
                return Err(unauthorized("the token's user no longer exists"));
            }
            Ok(user)
        }
        Credentials::Basic(user, password) => {
            let store = users.clone();
            let name = user.clone();
            let login = tokio::task::spawn_blocking(move || store.login(&name, &password))
                .await
                .map_err(|e| Failure::new(codes::UNKNOWN, e.to_string()))?;
            match login {
                Ok(_) => Ok(user),
                Err(LoginError::Refused) => {
                    crate::log(format_args!("{who}: failed login for user `{user}`"));
                    Err(unauthorized(
                        "The client is unauthorized due to authentication failure.",
                    ))
                }
                Err(LoginError::RateLimited) => {
                    crate::log(format_args!(
                        "{who}: login for user `{user}` refused: too many failed attempts, locked for {} s",
                        LOCKOUT.as_secs()
                    ));
                    Err(Failure::new(
                        "Neo.ClientError.Security.AuthenticationRateLimit",
                        "The client has provided incorrect authentication details too many times in a row.",
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(
            parse_header("Basic bmVvNGo6cGFzczpwYXJ0").unwrap(),
            Credentials::Basic("neo4j".into(), "pass:part".into())
        );
        assert_eq!(
            parse_header("bearer abc").unwrap(),
            Credentials::Bearer("abc".into())
        );
        assert!(parse_header("Basic !!!").is_err());
        assert!(parse_header("Basic bm9jb2xvbg==").is_err()); // "nocolon"
        assert!(parse_header("Digest x").is_err());
        assert!(parse_header("").is_err());
        assert!(parse_header("Bearer ").is_err());
    }

    #[test]
    fn tokens_expire_and_revoke() {
        let tokens = Tokens::new(Duration::from_secs(60));
        let (t, _) = tokens.issue("ann");
        assert_eq!(tokens.user(&t).as_deref(), Some("ann"));
        assert!(tokens.revoke(&t));
        assert_eq!(tokens.user(&t), None);
        let short = Tokens::new(Duration::ZERO);
        let (t, _) = short.issue("ann");
        assert_eq!(short.user(&t), None);
    }
}
