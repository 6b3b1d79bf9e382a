//! Rhizome's formulations of the LDBC SNB Interactive reads
//! (`crates/rhizome-bench/ldbc/*.cypher`) on `ldbc-tiny`, checked against
//! answers computed independently of the engine: plain Rust over the raw
//! CSV files (hash maps, breadth-first search), following the definitions
//! of the LDBC SNB specification.
//!
//! Parameters come from the data set's `substitution_parameters` (IC) and
//! from ids in its CSV files (IS). The data set is read from
//! `../shared/datasets/ldbc-tiny` beside the workspace; the test is skipped
//! with a message when that directory is absent.

use rhizome_bench::ldbc::{import_ldbc, ldbc_query_text, LdbcQuery};
use rhizome_common::Value;
use rhizome_engine::{Engine, QueryOptions};
use rhizome_import::LdbcLayout;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

type Id = i64;

fn dataset_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/ldbc-tiny")
}

/// The data rows of one `|`-separated file (header skipped).
fn read(dir: &Path, file: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    text.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

fn num(s: &str) -> Id {
    s.parse().unwrap()
}

fn opt(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

struct Person {
    first: String,
    last: String,
    gender: String,
    birthday: i64,
    creation: i64,
    ip: String,
    browser: String,
    speaks: Vec<String>,
    emails: Vec<String>,
}

struct Message {
    creation: i64,
    content: Option<String>,
    image: Option<String>,
    is_post: bool,
    creator: Id,
    reply_of: Option<Id>,
    place: Id,
}

/// The graph, from the CSV files, in plain maps.
#[derive(Default)]
struct Graph {
    persons: HashMap<Id, Person>,
    knows: HashMap<Id, Vec<(Id, i64)>>,
    messages: HashMap<Id, Message>,
    by_creator: HashMap<Id, Vec<Id>>,
    replies: HashMap<Id, Vec<Id>>,
    message_tags: HashMap<Id, Vec<Id>>,
    tag_name: HashMap<Id, String>,
    tag_type: HashMap<Id, Vec<Id>>,
    class_name: HashMap<Id, String>,
    class_parents: HashMap<Id, Vec<Id>>,
    forum_title: HashMap<Id, String>,
    forum_of_post: HashMap<Id, Id>,
    moderator: HashMap<Id, Id>,
    members: Vec<(Id, Id, i64)>,
    likes: Vec<(Id, Id, i64)>,
    person_place: HashMap<Id, Id>,
    place_name: HashMap<Id, String>,
    place_kind: HashMap<Id, String>,
    part_of: HashMap<Id, Id>,
    org_name: HashMap<Id, String>,
    org_kind: HashMap<Id, String>,
    org_place: HashMap<Id, Id>,
    work_at: HashMap<Id, Vec<(Id, i64)>>,
    study_at: HashMap<Id, Vec<(Id, i64)>>,
    interests: HashMap<Id, HashSet<Id>>,
}

impl Graph {
    fn load(dir: &Path) -> Graph {
        let mut g = Graph::default();
        for r in read(dir, "dynamic/person_0_0.csv") {
            let list = |s: &str| {
                s.split(';')
                    .filter(|x| !x.is_empty())
                    .map(str::to_string)
                    .collect()
            };
            g.persons.insert(
                num(&r[0]),
                Person {
                    first: r[1].clone(),
                    last: r[2].clone(),
                    gender: r[3].clone(),
                    birthday: num(&r[4]),
                    creation: num(&r[5]),
                    ip: r[6].clone(),
                    browser: r[7].clone(),
                    speaks: list(&r[8]),
                    emails: list(&r[9]),
                },
            );
        }
        for r in read(dir, "dynamic/person_knows_person_0_0.csv") {
            let (a, b, d) = (num(&r[0]), num(&r[1]), num(&r[2]));
            g.knows.entry(a).or_default().push((b, d));
            g.knows.entry(b).or_default().push((a, d));
        }
        for r in read(dir, "dynamic/comment_0_0.csv") {
            g.messages.insert(
                num(&r[0]),
                Message {
                    creation: num(&r[1]),
                    content: opt(&r[4]),
                    image: None,
                    is_post: false,
                    creator: 0,
                    reply_of: None,
                    place: 0,
                },
            );
        }
        for r in read(dir, "dynamic/post_0_0.csv") {
            g.messages.insert(
                num(&r[0]),
                Message {
                    creation: num(&r[2]),
                    content: opt(&r[6]),
                    image: opt(&r[1]),
                    is_post: true,
                    creator: 0,
                    reply_of: None,
                    place: 0,
                },
            );
        }
        for kind in ["comment", "post"] {
            for r in read(dir, &format!("dynamic/{kind}_hasCreator_person_0_0.csv")) {
                let (m, p) = (num(&r[0]), num(&r[1]));
                g.messages.get_mut(&m).unwrap().creator = p;
                g.by_creator.entry(p).or_default().push(m);
            }
            for r in read(dir, &format!("dynamic/{kind}_isLocatedIn_place_0_0.csv")) {
                g.messages.get_mut(&num(&r[0])).unwrap().place = num(&r[1]);
            }
            for r in read(dir, &format!("dynamic/{kind}_hasTag_tag_0_0.csv")) {
                g.message_tags
                    .entry(num(&r[0]))
                    .or_default()
                    .push(num(&r[1]));
            }
            for r in read(dir, &format!("dynamic/comment_replyOf_{kind}_0_0.csv")) {
                let (c, m) = (num(&r[0]), num(&r[1]));
                g.messages.get_mut(&c).unwrap().reply_of = Some(m);
                g.replies.entry(m).or_default().push(c);
            }
        }
        for r in read(dir, "static/tag_0_0.csv") {
            g.tag_name.insert(num(&r[0]), r[1].clone());
        }
        for r in read(dir, "static/tag_hasType_tagclass_0_0.csv") {
            g.tag_type.entry(num(&r[0])).or_default().push(num(&r[1]));
        }
        for r in read(dir, "static/tagclass_0_0.csv") {
            g.class_name.insert(num(&r[0]), r[1].clone());
        }
        for r in read(dir, "static/tagclass_isSubclassOf_tagclass_0_0.csv") {
            g.class_parents
                .entry(num(&r[0]))
                .or_default()
                .push(num(&r[1]));
        }
        for r in read(dir, "dynamic/forum_0_0.csv") {
            g.forum_title.insert(num(&r[0]), r[1].clone());
        }
        for r in read(dir, "dynamic/forum_containerOf_post_0_0.csv") {
            g.forum_of_post.insert(num(&r[1]), num(&r[0]));
        }
        for r in read(dir, "dynamic/forum_hasModerator_person_0_0.csv") {
            g.moderator.insert(num(&r[0]), num(&r[1]));
        }
        for r in read(dir, "dynamic/forum_hasMember_person_0_0.csv") {
            g.members.push((num(&r[0]), num(&r[1]), num(&r[2])));
        }
        for kind in ["comment", "post"] {
            for r in read(dir, &format!("dynamic/person_likes_{kind}_0_0.csv")) {
                g.likes.push((num(&r[0]), num(&r[1]), num(&r[2])));
            }
        }
        for r in read(dir, "dynamic/person_isLocatedIn_place_0_0.csv") {
            g.person_place.insert(num(&r[0]), num(&r[1]));
        }
        for r in read(dir, "static/place_0_0.csv") {
            g.place_name.insert(num(&r[0]), r[1].clone());
            g.place_kind.insert(num(&r[0]), r[3].clone());
        }
        for r in read(dir, "static/place_isPartOf_place_0_0.csv") {
            g.part_of.insert(num(&r[0]), num(&r[1]));
        }
        for r in read(dir, "static/organisation_0_0.csv") {
            g.org_kind.insert(num(&r[0]), r[1].clone());
            g.org_name.insert(num(&r[0]), r[2].clone());
        }
        for r in read(dir, "static/organisation_isLocatedIn_place_0_0.csv") {
            g.org_place.insert(num(&r[0]), num(&r[1]));
        }
        for r in read(dir, "dynamic/person_workAt_organisation_0_0.csv") {
            g.work_at
                .entry(num(&r[0]))
                .or_default()
                .push((num(&r[1]), num(&r[2])));
        }
        for r in read(dir, "dynamic/person_studyAt_organisation_0_0.csv") {
            g.study_at
                .entry(num(&r[0]))
                .or_default()
                .push((num(&r[1]), num(&r[2])));
        }
        for r in read(dir, "dynamic/person_hasInterest_tag_0_0.csv") {
            g.interests
                .entry(num(&r[0]))
                .or_default()
                .insert(num(&r[1]));
        }
        g
    }

    fn person(&self, id: Id) -> &Person {
        &self.persons[&id]
    }

    fn friends(&self, id: Id) -> impl Iterator<Item = Id> + '_ {
        self.knows.get(&id).into_iter().flatten().map(|&(o, _)| o)
    }

    fn knows(&self, a: Id, b: Id) -> bool {
        self.friends(a).any(|o| o == b)
    }

    /// Breadth-first distances from `start` over KNOWS, up to `max` hops.
    fn distances(&self, start: Id, max: usize) -> HashMap<Id, usize> {
        let mut dist = HashMap::from([(start, 0)]);
        let mut queue = VecDeque::from([start]);
        while let Some(p) = queue.pop_front() {
            let d = dist[&p];
            if d == max {
                continue;
            }
            for o in self.friends(p) {
                if let std::collections::hash_map::Entry::Vacant(e) = dist.entry(o) {
                    e.insert(d + 1);
                    queue.push_back(o);
                }
            }
        }
        dist
    }

    /// Friends and friends of friends, without the person.
    fn circle(&self, start: Id) -> BTreeSet<Id> {
        self.distances(start, 2)
            .into_iter()
            .filter(|&(p, d)| p != start && d > 0)
            .map(|(p, _)| p)
            .collect()
    }

    fn messages_of(&self, p: Id) -> impl Iterator<Item = (Id, &Message)> + '_ {
        self.by_creator
            .get(&p)
            .into_iter()
            .flatten()
            .map(|m| (*m, &self.messages[m]))
    }

    fn root_post(&self, mut m: Id) -> Id {
        while let Some(parent) = self.messages[&m].reply_of {
            m = parent;
        }
        m
    }

    fn country_of_city(&self, city: Id) -> Id {
        self.part_of[&city]
    }
}

/// A result value rendered for comparison.
fn show(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::String(s) => format!("{s:?}"),
        Value::List(l) => format!("[{}]", l.iter().map(show).collect::<Vec<_>>().join(", ")),
        other => format!("{other:?}"),
    }
}

fn s(x: &str) -> String {
    format!("{x:?}")
}

fn opt_s(x: &Option<String>) -> String {
    x.as_deref().map(s).unwrap_or_else(|| "null".into())
}

fn list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// Sorts the elements of a rendered list column (collections whose order
/// the query does not define: IC1's universities and companies, IC12's tags).
fn unordered(items: &[String]) -> String {
    let mut v = items.to_vec();
    v.sort();
    list(&v)
}

type Row = Vec<String>;

struct Checker {
    engine: Engine,
    checked: usize,
}

impl Checker {
    /// Runs `query` and compares its rows with `expected`: the rows must be
    /// the same multiset, and the values of the columns `keys` (the ORDER BY
    /// columns) must come in the same order. Columns in `sets` are unordered
    /// lists.
    fn check(
        &mut self,
        query: LdbcQuery,
        params: &[(&str, Value)],
        keys: &[usize],
        sets: &[usize],
        expected: Vec<Row>,
    ) {
        let text = ldbc_query_text(query);
        let params: BTreeMap<String, Value> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let result = self
            .engine
            .execute(text, params.clone(), &QueryOptions::default())
            .unwrap_or_else(|e| panic!("{} {params:?}: {e}", query.name()));
        let actual: Vec<Row> = result
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .map(|(i, v)| match (sets.contains(&i), v) {
                        (true, Value::List(l)) => {
                            unordered(&l.iter().map(show).collect::<Vec<_>>())
                        }
                        _ => show(v),
                    })
                    .collect()
            })
            .collect();
        let key = |rows: &[Row]| -> Vec<Vec<String>> {
            rows.iter()
                .map(|r| keys.iter().map(|&k| r[k].clone()).collect())
                .collect()
        };
        let (mut a, mut e) = (actual.clone(), expected.clone());
        a.sort();
        e.sort();
        assert_eq!(
            a,
            e,
            "{} {params:?}: rows differ\nactual:   {actual:?}\nexpected: {expected:?}",
            query.name()
        );
        assert_eq!(
            key(&actual),
            key(&expected),
            "{} {params:?}: order differs",
            query.name()
        );
        self.checked += 1;
    }
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

fn string(x: &str) -> Value {
    Value::String(x.to_string())
}

/// The first `n` parameter rows of `interactive_{q}_param.txt`, as maps,
/// then (the files hold only two or three rows) the first row again with
/// the person replaced by every 16th person of the data set (for IC13 and
/// IC14: pairs of them).
fn substitution(dir: &Path, q: usize, n: usize) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(
        dir.join(format!("substitution_parameters/interactive_{q}_param.txt")),
    )
    .unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('|').collect();
    let mut sets: Vec<HashMap<String, String>> = lines
        .take(n)
        .map(|l| {
            header
                .iter()
                .zip(l.split('|'))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect();
    let others: Vec<String> = read(dir, "dynamic/person_0_0.csv")
        .into_iter()
        .step_by(16)
        .map(|r| r[0].clone())
        .collect();
    let Some(first) = sets.first().cloned() else {
        return sets;
    };
    for (i, person) in others.iter().enumerate() {
        let mut set = first.clone();
        if set.contains_key("personId") {
            set.insert("personId".into(), person.clone());
        } else {
            set.insert("person1Id".into(), person.clone());
            set.insert("person2Id".into(), others[(i + 1) % others.len()].clone());
        }
        sets.push(set);
    }
    sets
}

/// Civil date (month, day) of a Unix time in milliseconds, UTC.
fn month_day(millis: i64) -> (i64, i64) {
    let days = millis.div_euclid(86_400_000);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (m, d)
}

/// Sorts `rows` by `cmp` and keeps the first `limit`.
fn top<T>(mut rows: Vec<T>, limit: usize, cmp: impl FnMut(&T, &T) -> std::cmp::Ordering) -> Vec<T> {
    rows.sort_by(cmp);
    rows.truncate(limit);
    rows
}

#[test]
fn ldbc_tiny_reads_match_independent_answers() {
    let dir = dataset_dir();
    if !dir.is_dir() {
        eprintln!(
            "SKIPPED: LDBC tiny data set not found at {} (../shared/datasets/ldbc-tiny beside the workspace)",
            dir.display()
        );
        return;
    }
    let db = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ldbc-tiny-reads");
    let engine = import_ldbc(&db, &dir, LdbcLayout::Tiny).unwrap();
    let g = Graph::load(&dir);
    let mut c = Checker { engine, checked: 0 };
    use LdbcQuery::*;
    const SETS: usize = 5;

    // Parameters of the short reads: persons from the IC parameters,
    // messages of both kinds from the CSV files.
    let persons: Vec<Id> = substitution(&dir, 1, SETS)
        .iter()
        .chain(&substitution(&dir, 9, SETS))
        .map(|p| num(&p["personId"]))
        .collect();
    let mut messages: Vec<Id> = g.messages.keys().copied().collect();
    messages.sort();
    let mut replied: Vec<Id> = g.replies.keys().copied().collect();
    replied.sort();
    let messages: Vec<Id> = messages
        .iter()
        .step_by(messages.len() / 12)
        .chain(replied.iter().step_by(replied.len() / 12))
        .copied()
        .collect();

    for &p in &persons {
        let person = g.person(p);
        // IS1
        let city = g.person_place[&p];
        c.check(
            Is1,
            &[("personId", int(p))],
            &[],
            &[],
            vec![vec![
                s(&person.first),
                s(&person.last),
                person.birthday.to_string(),
                s(&person.ip),
                s(&person.browser),
                city.to_string(),
                s(&person.gender),
                person.creation.to_string(),
            ]],
        );
        // IS2
        let recent = top(g.messages_of(p).collect(), 10, |a, b| {
            b.1.creation.cmp(&a.1.creation).then(a.0.cmp(&b.0))
        });
        let rows = recent
            .iter()
            .map(|(id, m)| {
                let root = g.root_post(*id);
                let op = g.messages[&root].creator;
                vec![
                    id.to_string(),
                    opt_s(&m.image.clone().or(m.content.clone())),
                    m.creation.to_string(),
                    root.to_string(),
                    op.to_string(),
                    s(&g.person(op).first),
                    s(&g.person(op).last),
                ]
            })
            .collect();
        c.check(Is2, &[("personId", int(p))], &[2, 0], &[], rows);
        // IS3
        let friends = top(
            g.knows.get(&p).cloned().unwrap_or_default(),
            usize::MAX,
            |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)),
        );
        let rows = friends
            .iter()
            .map(|&(o, d)| {
                vec![
                    o.to_string(),
                    s(&g.person(o).first),
                    s(&g.person(o).last),
                    d.to_string(),
                ]
            })
            .collect();
        c.check(Is3, &[("personId", int(p))], &[3], &[], rows);
    }

    for &m in &messages {
        let msg = &g.messages[&m];
        let author = g.person(msg.creator);
        // IS4
        c.check(
            Is4,
            &[("messageId", int(m))],
            &[],
            &[],
            vec![vec![
                msg.creation.to_string(),
                opt_s(&msg.content.clone().or(msg.image.clone())),
            ]],
        );
        // IS5
        c.check(
            Is5,
            &[("messageId", int(m))],
            &[],
            &[],
            vec![vec![
                msg.creator.to_string(),
                s(&author.first),
                s(&author.last),
            ]],
        );
        // IS6
        let forum = g.forum_of_post[&g.root_post(m)];
        let moderator = g.moderator[&forum];
        c.check(
            Is6,
            &[("messageId", int(m))],
            &[],
            &[],
            vec![vec![
                forum.to_string(),
                s(&g.forum_title[&forum]),
                moderator.to_string(),
                s(&g.person(moderator).first),
                s(&g.person(moderator).last),
            ]],
        );
        // IS7
        let replies = top(
            g.replies.get(&m).cloned().unwrap_or_default(),
            usize::MAX,
            |a, b| {
                let (x, y) = (&g.messages[a], &g.messages[b]);
                y.creation.cmp(&x.creation).then(x.creator.cmp(&y.creator))
            },
        );
        let rows = replies
            .iter()
            .map(|r| {
                let reply = &g.messages[r];
                let who = g.person(reply.creator);
                vec![
                    r.to_string(),
                    opt_s(&reply.content),
                    reply.creation.to_string(),
                    reply.creator.to_string(),
                    s(&who.first),
                    s(&who.last),
                    g.knows(reply.creator, msg.creator).to_string(),
                ]
            })
            .collect();
        c.check(Is7, &[("messageId", int(m))], &[2, 3], &[], rows);
    }

    // IC13 and IC14
    for params in substitution(&dir, 13, SETS)
        .into_iter()
        .chain(substitution(&dir, 14, SETS))
    {
        let (a, b) = (num(&params["person1Id"]), num(&params["person2Id"]));
        let dist = g.distances(a, usize::MAX);
        let len = dist.get(&b).map(|&d| d as i64).unwrap_or(-1);
        let pp = [("person1Id", int(a)), ("person2Id", int(b))];
        // The parameter files name some persons the data set lacks: no row.
        let exists = g.persons.contains_key(&a) && g.persons.contains_key(&b);
        let expected = if exists {
            vec![vec![len.to_string()]]
        } else {
            vec![]
        };
        c.check(Ic13, &pp, &[], &[], expected);
        if len <= 0 {
            continue;
        }
        // All shortest paths: walk back from b along decreasing distance.
        let mut paths = vec![vec![b]];
        for _ in 0..len {
            paths = paths
                .into_iter()
                .flat_map(|path| {
                    let last = *path.last().unwrap();
                    let d = dist[&last];
                    g.friends(last)
                        .filter(|o| dist.get(o) == Some(&(d - 1)))
                        .map(|o| {
                            let mut p = path.clone();
                            p.push(o);
                            p
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
        }
        // Interactions: (replier, replied-to author, replied-to is a post).
        let mut weight_of: HashMap<(Id, Id), f64> = HashMap::new();
        for m in g.messages.values() {
            if let Some(parent) = m.reply_of {
                let target = &g.messages[&parent];
                let w = if target.is_post { 1.0 } else { 0.5 };
                let (x, y) = (m.creator.min(target.creator), m.creator.max(target.creator));
                *weight_of.entry((x, y)).or_default() += w;
            }
        }
        let mut rows: Vec<(f64, Row)> = paths
            .into_iter()
            .map(|mut path| {
                path.reverse();
                let w: f64 = path
                    .windows(2)
                    .map(|p| {
                        weight_of
                            .get(&(p[0].min(p[1]), p[0].max(p[1])))
                            .copied()
                            .unwrap_or(0.0)
                    })
                    .sum();
                (
                    w,
                    vec![
                        list(&path.iter().map(|i| i.to_string()).collect::<Vec<_>>()),
                        format!("{w:?}"),
                    ],
                )
            })
            .collect();
        rows.sort_by(|x, y| y.0.total_cmp(&x.0));
        c.check(
            Ic14,
            &pp,
            &[1],
            &[],
            rows.into_iter().map(|r| r.1).collect(),
        );
    }

    // IC8
    for params in substitution(&dir, 8, SETS) {
        let p = num(&params["personId"]);
        let mut replies = Vec::new();
        for (m, _) in g.messages_of(p) {
            replies.extend(g.replies.get(&m).into_iter().flatten().copied());
        }
        let replies = top(replies, 20, |a, b| {
            g.messages[b]
                .creation
                .cmp(&g.messages[a].creation)
                .then(a.cmp(b))
        });
        let rows = replies
            .iter()
            .map(|r| {
                let reply = &g.messages[r];
                let who = g.person(reply.creator);
                vec![
                    reply.creator.to_string(),
                    s(&who.first),
                    s(&who.last),
                    reply.creation.to_string(),
                    r.to_string(),
                    opt_s(&reply.content),
                ]
            })
            .collect();
        c.check(Ic8, &[("personId", int(p))], &[3, 4], &[], rows);
    }

    // IC2 (friends) and IC9 (friends and friends of friends)
    let recent_messages = |people: Vec<Id>, max_date: i64| -> Vec<Row> {
        let mut all = Vec::new();
        for f in people {
            for (id, m) in g.messages_of(f) {
                if m.creation < max_date {
                    all.push((f, id, m));
                }
            }
        }
        top(all, 20, |a, b| {
            b.2.creation.cmp(&a.2.creation).then(a.1.cmp(&b.1))
        })
        .into_iter()
        .map(|(f, id, m)| {
            vec![
                f.to_string(),
                s(&g.person(f).first),
                s(&g.person(f).last),
                id.to_string(),
                opt_s(&m.content.clone().or(m.image.clone())),
                m.creation.to_string(),
            ]
        })
        .collect()
    };
    for params in substitution(&dir, 2, SETS) {
        let (p, max) = (num(&params["personId"]), num(&params["maxDate"]));
        let rows = recent_messages(g.friends(p).collect(), max);
        c.check(
            Ic2,
            &[("personId", int(p)), ("maxDate", int(max))],
            &[5, 3],
            &[],
            rows,
        );
    }
    for params in substitution(&dir, 9, SETS) {
        let (p, max) = (num(&params["personId"]), num(&params["maxDate"]));
        let rows = recent_messages(g.circle(p).into_iter().collect(), max);
        c.check(
            Ic9,
            &[("personId", int(p)), ("maxDate", int(max))],
            &[5, 3],
            &[],
            rows,
        );
    }

    // IC1
    for params in substitution(&dir, 1, SETS) {
        let (p, name) = (num(&params["personId"]), params["firstName"].clone());
        let found: Vec<(Id, usize)> = g
            .distances(p, 3)
            .into_iter()
            .filter(|&(o, d)| d > 0 && g.person(o).first == name)
            .collect();
        let found = top(found, 20, |a, b| {
            a.1.cmp(&b.1)
                .then(g.person(a.0).last.cmp(&g.person(b.0).last))
                .then(a.0.cmp(&b.0))
        });
        let rows = found
            .iter()
            .map(|&(o, d)| {
                let f = g.person(o);
                let strings = |v: &[String]| list(&v.iter().map(|x| s(x)).collect::<Vec<_>>());
                // [organisation name, year, city] of each study or job.
                let entries = |of: &HashMap<Id, Vec<(Id, i64)>>| -> Vec<String> {
                    of.get(&o)
                        .into_iter()
                        .flatten()
                        .map(|&(u, y)| {
                            list(&[
                                s(&g.org_name[&u]),
                                y.to_string(),
                                s(&g.place_name[&g.org_place[&u]]),
                            ])
                        })
                        .collect()
                };
                let unis = entries(&g.study_at);
                let jobs = entries(&g.work_at);
                vec![
                    o.to_string(),
                    s(&f.last),
                    d.to_string(),
                    f.birthday.to_string(),
                    f.creation.to_string(),
                    s(&f.gender),
                    s(&f.browser),
                    s(&f.ip),
                    strings(&f.emails),
                    strings(&f.speaks),
                    s(&g.place_name[&g.person_place[&o]]),
                    unordered(&unis),
                    unordered(&jobs),
                ]
            })
            .collect();
        c.check(
            Ic1,
            &[("personId", int(p)), ("firstName", string(&name))],
            &[2, 1, 0],
            &[11, 12],
            rows,
        );
    }

    // IC3
    for params in substitution(&dir, 3, SETS) {
        let p = num(&params["personId"]);
        let start = num(&params["startDate"]);
        let end = start + num(&params["durationDays"]) * 86_400_000;
        let (x, y) = (
            params["countryXName"].clone(),
            params["countryYName"].clone(),
        );
        let mut rows = Vec::new();
        for f in g.circle(p) {
            let home = &g.place_name[&g.country_of_city(g.person_place[&f])];
            if *home == x || *home == y {
                continue;
            }
            let (mut xc, mut yc) = (0i64, 0i64);
            for (_, m) in g.messages_of(f) {
                if m.creation >= start && m.creation < end {
                    let place = &g.place_name[&m.place];
                    xc += (*place == x) as i64;
                    yc += (*place == y) as i64;
                }
            }
            if xc > 0 && yc > 0 {
                rows.push((f, xc, yc));
            }
        }
        let rows = top(rows, 20, |a, b| {
            (b.1 + b.2).cmp(&(a.1 + a.2)).then(a.0.cmp(&b.0))
        })
        .into_iter()
        .map(|(f, xc, yc)| {
            vec![
                f.to_string(),
                s(&g.person(f).first),
                s(&g.person(f).last),
                xc.to_string(),
                yc.to_string(),
                (xc + yc).to_string(),
            ]
        })
        .collect();
        c.check(
            Ic3,
            &[
                ("personId", int(p)),
                ("countryXName", string(&x)),
                ("countryYName", string(&y)),
                ("startDate", int(start)),
                ("endDate", int(end)),
            ],
            &[5, 0],
            &[],
            rows,
        );
    }

    // IC4
    for params in substitution(&dir, 4, SETS) {
        let p = num(&params["personId"]);
        let start = num(&params["startDate"]);
        let end = start + num(&params["durationDays"]) * 86_400_000;
        let mut counts: HashMap<Id, (i64, i64)> = HashMap::new();
        for f in g.friends(p) {
            for (id, m) in g.messages_of(f).filter(|(_, m)| m.is_post) {
                for t in g.message_tags.get(&id).into_iter().flatten() {
                    let e = counts.entry(*t).or_default();
                    if m.creation >= start && m.creation < end {
                        e.0 += 1;
                    } else if m.creation < start {
                        e.1 += 1;
                    }
                }
            }
        }
        let rows: Vec<(String, i64)> = counts
            .into_iter()
            .filter(|(_, (n, before))| *n > 0 && *before == 0)
            .map(|(t, (n, _))| (g.tag_name[&t].clone(), n))
            .collect();
        let rows = top(rows, 10, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)))
            .into_iter()
            .map(|(t, n)| vec![s(&t), n.to_string()])
            .collect();
        c.check(
            Ic4,
            &[
                ("personId", int(p)),
                ("startDate", int(start)),
                ("endDate", int(end)),
            ],
            &[1, 0],
            &[],
            rows,
        );
    }

    // IC5
    for params in substitution(&dir, 5, SETS) {
        let (p, min) = (num(&params["personId"]), num(&params["minDate"]));
        let circle = g.circle(p);
        let mut joined: HashMap<Id, HashSet<Id>> = HashMap::new();
        for &(forum, person, date) in &g.members {
            if date > min && circle.contains(&person) {
                joined.entry(forum).or_default().insert(person);
            }
        }
        let mut posts: HashMap<Id, i64> = joined.keys().map(|&f| (f, 0)).collect();
        for (&post, &forum) in &g.forum_of_post {
            if let Some(who) = joined.get(&forum) {
                if who.contains(&g.messages[&post].creator) {
                    *posts.get_mut(&forum).unwrap() += 1;
                }
            }
        }
        let rows = top(posts.into_iter().collect(), 20, |a: &(Id, i64), b| {
            b.1.cmp(&a.1).then(a.0.cmp(&b.0))
        })
        .into_iter()
        .map(|(f, n)| vec![s(&g.forum_title[&f]), n.to_string()])
        .collect();
        c.check(
            Ic5,
            &[("personId", int(p)), ("minDate", int(min))],
            &[1],
            &[],
            rows,
        );
    }

    // IC6
    for params in substitution(&dir, 6, SETS) {
        let (p, tag) = (num(&params["personId"]), params["tagName"].clone());
        let mut counts: HashMap<String, i64> = HashMap::new();
        for f in g.circle(p) {
            for (id, m) in g.messages_of(f) {
                let tags: Vec<&String> = g
                    .message_tags
                    .get(&id)
                    .into_iter()
                    .flatten()
                    .map(|t| &g.tag_name[t])
                    .collect();
                if m.is_post && tags.contains(&&tag) {
                    for t in tags.into_iter().filter(|t| **t != tag) {
                        *counts.entry(t.clone()).or_default() += 1;
                    }
                }
            }
        }
        let rows = top(counts.into_iter().collect(), 10, |a: &(String, i64), b| {
            b.1.cmp(&a.1).then(a.0.cmp(&b.0))
        })
        .into_iter()
        .map(|(t, n)| vec![s(&t), n.to_string()])
        .collect();
        c.check(
            Ic6,
            &[("personId", int(p)), ("tagName", string(&tag))],
            &[1, 0],
            &[],
            rows,
        );
    }

    // IC7
    for params in substitution(&dir, 7, SETS) {
        let p = num(&params["personId"]);
        let mut latest: HashMap<Id, (i64, Id)> = HashMap::new();
        for &(liker, m, date) in &g.likes {
            if g.messages[&m].creator != p {
                continue;
            }
            let e = latest.entry(liker).or_insert((date, m));
            if date > e.0 || (date == e.0 && m < e.1) {
                *e = (date, m);
            }
        }
        let rows = top(
            latest.into_iter().collect(),
            20,
            |a: &(Id, (i64, Id)), b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(&b.0)),
        )
        .into_iter()
        .map(|(liker, (date, m))| {
            let msg = &g.messages[&m];
            vec![
                liker.to_string(),
                s(&g.person(liker).first),
                s(&g.person(liker).last),
                date.to_string(),
                m.to_string(),
                opt_s(&msg.content.clone().or(msg.image.clone())),
                ((date - msg.creation) / 60_000).to_string(),
                (!g.knows(liker, p)).to_string(),
            ]
        })
        .collect();
        c.check(Ic7, &[("personId", int(p))], &[3, 0], &[], rows);
    }

    // IC10
    for params in substitution(&dir, 10, SETS) {
        let (p, month) = (num(&params["personId"]), num(&params["month"]));
        let dist = g.distances(p, 2);
        let interests = g.interests.get(&p).cloned().unwrap_or_default();
        let mut rows = Vec::new();
        for (&f, &d) in &dist {
            if d != 2 {
                continue;
            }
            let (m, day) = month_day(g.person(f).birthday);
            if !((m == month && day >= 21) || (m == month % 12 + 1 && day < 22)) {
                continue;
            }
            let (mut total, mut common) = (0i64, 0i64);
            for (id, _) in g.messages_of(f).filter(|(_, m)| m.is_post) {
                total += 1;
                if g.message_tags
                    .get(&id)
                    .into_iter()
                    .flatten()
                    .any(|t| interests.contains(t))
                {
                    common += 1;
                }
            }
            rows.push((f, 2 * common - total));
        }
        let rows = top(rows, 10, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)))
            .into_iter()
            .map(|(f, score)| {
                let who = g.person(f);
                vec![
                    f.to_string(),
                    s(&who.first),
                    s(&who.last),
                    score.to_string(),
                    s(&who.gender),
                    s(&g.place_name[&g.person_place[&f]]),
                ]
            })
            .collect();
        c.check(
            Ic10,
            &[("personId", int(p)), ("month", int(month))],
            &[3, 0],
            &[],
            rows,
        );
    }

    // IC11
    for params in substitution(&dir, 11, SETS) {
        let p = num(&params["personId"]);
        let country = params["countryName"].clone();
        let year = num(&params["workFromYear"]);
        let mut rows = Vec::new();
        for f in g.circle(p) {
            for &(org, from) in g.work_at.get(&f).into_iter().flatten() {
                if g.org_kind[&org] == "Company"
                    && g.place_name[&g.org_place[&org]] == country
                    && from < year
                {
                    rows.push((f, g.org_name[&org].clone(), from));
                }
            }
        }
        let rows = top(rows, 10, |a, b| {
            a.2.cmp(&b.2).then(a.0.cmp(&b.0)).then(b.1.cmp(&a.1))
        })
        .into_iter()
        .map(|(f, org, from)| {
            vec![
                f.to_string(),
                s(&g.person(f).first),
                s(&g.person(f).last),
                s(&org),
                from.to_string(),
            ]
        })
        .collect();
        c.check(
            Ic11,
            &[
                ("personId", int(p)),
                ("countryName", string(&country)),
                ("workFromYear", int(year)),
            ],
            &[4, 0, 3],
            &[],
            rows,
        );
    }

    // IC12
    for params in substitution(&dir, 12, SETS) {
        let (p, class) = (num(&params["personId"]), params["tagClassName"].clone());
        // A tag qualifies when its type is the class or a subclass of it
        // (or the tag itself has that name).
        let in_class = |mut k: Id| loop {
            if g.class_name[&k] == class {
                return true;
            }
            match g.class_parents.get(&k).and_then(|p| p.first()) {
                Some(&parent) => k = parent,
                None => return false,
            }
        };
        let qualifies = |t: Id| {
            g.tag_name[&t] == class
                || g.tag_type
                    .get(&t)
                    .into_iter()
                    .flatten()
                    .any(|&k| in_class(k))
        };
        let mut rows = Vec::new();
        for f in g.friends(p) {
            let mut tags = BTreeSet::new();
            let mut comments = 0i64;
            for (_, m) in g.messages_of(f) {
                let Some(parent) = m.reply_of else { continue };
                if !g.messages[&parent].is_post {
                    continue;
                }
                let hits: Vec<Id> = g
                    .message_tags
                    .get(&parent)
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|&t| qualifies(t))
                    .collect();
                if !hits.is_empty() {
                    comments += 1;
                    tags.extend(hits.iter().map(|t| s(&g.tag_name[t])));
                }
            }
            if comments > 0 {
                rows.push((f, tags.into_iter().collect::<Vec<_>>(), comments));
            }
        }
        let rows = top(rows, 20, |a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)))
            .into_iter()
            .map(|(f, tags, n)| {
                vec![
                    f.to_string(),
                    s(&g.person(f).first),
                    s(&g.person(f).last),
                    unordered(&tags),
                    n.to_string(),
                ]
            })
            .collect();
        c.check(
            Ic12,
            &[("personId", int(p)), ("tagClassName", string(&class))],
            &[4, 0],
            &[3],
            rows,
        );
    }

    assert!(c.checked > 100, "only {} checks ran", c.checked);
    eprintln!(
        "{} LDBC query runs matched the independent answers",
        c.checked
    );
}
