//! Which scheduler tenant each user's queries belong to, from the
//! `[scheduling]` table of the server's configuration (docs/server.md,
//! Scheduling; docs/scheduling.md, Tenants).
//!
//! A group (`[scheduling.groups.NAME]`, with `share` and `members`) is one
//! tenant: its members' queries together get its share of the CPU. A user
//! in no group is a tenant of its own, with the share given in
//! `[scheduling.users]` or 1. Without the table every user is a tenant of
//! its own with share 1. Members need not exist yet (users are created and
//! dropped while the server runs); a user may be in one group only, and
//! not in a group and in `users` at once.

use rhizome_exec::scheduler::{Tenant, DEFAULT_TENANT};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// The `[scheduling]` table of the configuration file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SchedulingConfig {
    /// Users' own shares (a user in no group; default 1).
    pub users: BTreeMap<String, i64>,
    /// Groups of users that share one tenant.
    pub groups: BTreeMap<String, GroupConfig>,
}

/// One `[scheduling.groups.NAME]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    /// The group's share (at least 1).
    pub share: i64,
    /// The users whose queries run as the group.
    #[serde(default)]
    pub members: Vec<String>,
}

/// The tenants of a server: resolves a user to the tenant their queries
/// run as. Tenants live as long as the server, so a user's CPU account
/// carries over between their statements and connections.
#[derive(Debug)]
pub struct Tenants {
    /// Users named in the configuration (as members or with a share).
    configured: HashMap<String, Arc<Tenant>>,
    /// Other users, each a tenant of share 1, made when first seen.
    others: Mutex<HashMap<String, Arc<Tenant>>>,
    /// The tenant of sessions without a user (authentication off).
    anonymous: Arc<Tenant>,
}

impl Default for Tenants {
    fn default() -> Tenants {
        Tenants::from_config(&SchedulingConfig::default()).expect("the empty table is valid")
    }
}

/// A share from the file: an error naming `key` unless it is at least 1.
fn share(key: &str, value: i64) -> Result<u64, String> {
    match u64::try_from(value) {
        Ok(share) if share >= 1 => Ok(share),
        _ => Err(format!(
            "`{key}` = {value}: a scheduling share must be a whole number of at least 1"
        )),
    }
}

impl Tenants {
    /// The tenants `config` describes; an error naming the key for a share
    /// below 1, a user in two groups, or a user both in a group and in
    /// `scheduling.users`.
    pub fn from_config(config: &SchedulingConfig) -> Result<Tenants, String> {
        let mut configured: HashMap<String, Arc<Tenant>> = HashMap::new();
        let mut group_of: HashMap<&str, &str> = HashMap::new();
        for (name, group) in &config.groups {
            let share = share(&format!("scheduling.groups.{name}.share"), group.share)?;
            let tenant = Tenant::new(name.clone(), share);
            for member in &group.members {
                if let Some(other) = group_of.insert(member, name) {
                    return Err(format!(
                        "`scheduling.groups.{name}.members`: the user `{member}` is already a \
                         member of `scheduling.groups.{other}`; a user may be in one group only"
                    ));
                }
                configured.insert(member.clone(), tenant.clone());
            }
        }
        for (user, value) in &config.users {
            let key = format!("scheduling.users.{user}");
            let share = share(&key, *value)?;
            if let Some(group) = group_of.get(user.as_str()) {
                return Err(format!(
                    "`{key}`: the user `{user}` is a member of `scheduling.groups.{group}`, \
                     whose share it uses; give it a share of its own or a group, not both"
                ));
            }
            configured.insert(user.clone(), Tenant::new(user.clone(), share));
        }
        Ok(Tenants {
            configured,
            others: Mutex::default(),
            anonymous: Tenant::new(DEFAULT_TENANT, 1),
        })
    }

    /// The tenant `user`'s queries run as (`""`: a session without a user).
    pub fn of(&self, user: &str) -> Arc<Tenant> {
        if user.is_empty() {
            return self.anonymous.clone();
        }
        if let Some(tenant) = self.configured.get(user) {
            return tenant.clone();
        }
        let mut others = self.others.lock().unwrap_or_else(|p| p.into_inner());
        others
            .entry(user.to_string())
            .or_insert_with(|| Tenant::new(user, 1))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<Tenants, String> {
        let config: SchedulingConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        Tenants::from_config(&config)
    }

    #[test]
    fn groups_share_a_tenant_and_users_default_to_their_own() {
        let tenants =
            parsed("[users]\nada = 3\n[groups.analysts]\nshare = 2\nmembers = [\"bob\", \"cy\"]\n")
                .unwrap();
        let (ada, bob, cy) = (tenants.of("ada"), tenants.of("bob"), tenants.of("cy"));
        assert_eq!((ada.name(), ada.share()), ("ada", 3));
        assert_eq!((bob.name(), bob.share()), ("analysts", 2));
        assert!(Arc::ptr_eq(&bob, &cy));
        let dan = tenants.of("dan");
        assert_eq!((dan.name(), dan.share()), ("dan", 1));
        assert!(Arc::ptr_eq(&dan, &tenants.of("dan")), "one tenant per user");
        assert_eq!(tenants.of("").name(), DEFAULT_TENANT);
        let none = Tenants::default();
        assert_eq!((none.of("ada").name(), none.of("ada").share()), ("ada", 1));
    }

    #[test]
    fn bad_tables_fail_naming_the_key() {
        let cases = [
            ("[users]\nada = 0\n", "`scheduling.users.ada` = 0"),
            ("[users]\nada = -2\n", "`scheduling.users.ada` = -2"),
            (
                "[groups.g]\nshare = 0\nmembers = []\n",
                "`scheduling.groups.g.share` = 0",
            ),
            (
                "[groups.a]\nshare = 1\nmembers = [\"x\"]\n[groups.b]\nshare = 1\nmembers = [\"x\"]\n",
                "`scheduling.groups.b.members`: the user `x` is already a member of `scheduling.groups.a`",
            ),
            (
                "[users]\nx = 2\n[groups.a]\nshare = 1\nmembers = [\"x\"]\n",
                "`scheduling.users.x`: the user `x` is a member of `scheduling.groups.a`",
            ),
        ];
        for (text, wanted) in cases {
            let error = parsed(text).unwrap_err();
            assert!(error.contains(wanted), "{text}: {error}");
        }
        for bad in [
            "[groups.g]\nmembers = []\n",
            "[users]\nada = 1.5\n",
            "shares = 1\n",
        ] {
            assert!(parsed(bad).is_err(), "{bad}");
        }
    }
}
