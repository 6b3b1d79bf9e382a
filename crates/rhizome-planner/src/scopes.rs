//! Scopes in the plan (docs/scheduling.md, "Scopes"): the planner's
//! choice of each loop scope's policy and MAX_SI, and the statement hint
//! `CYPHER scheduling=dfs|bfs|fifo|off [max_si=N]` that overrides it.
//!
//! Loop scopes are the variable-length expansions: each input row is an
//! instance. The planner turns a scope on only where something rewards
//! finishing early: under a `LIMIT` (without a sort or an aggregation
//! between, which would read every row first) a fixed-length expansion
//! runs depth first and a range (`*1..5`) breadth first, so near results
//! come first; inside an `EXISTS` (an expression subquery or the probe of a
//! semi-apply) it runs depth first. Elsewhere the scope is off: the plain
//! pipelined operator. MAX_SI is 1 unless the hint says otherwise.
//!
//! Branch scopes are the applies (`EXISTS { }` / pattern predicates as
//! semi-applies, `OPTIONAL MATCH`, `CALL { }`): each input row's inner run
//! is an instance with its own queue of pending work
//! (`rhizome_exec::pipeline::instances`). A semi-apply's scope is on (`dfs`,
//! MAX_SI 1: an existence probe rewards finishing one instance first, and
//! each ends at its first row); an `OPTIONAL MATCH` or `CALL { }` reads
//! every row of every instance, so its scope is off (plain inline runs)
//! unless the hint names a policy. The hint `scheduling=off` turns
//! everything off: an `EXISTS` becomes `COUNT { } > 0` (a semi-apply a
//! filter on it), so every inner run goes to its end — the "scopes off"
//! side of the service benchmark's measurement 1.
//!
//! A loop scope whose rows only feed a `DISTINCT` of its end node, or an
//! aggregation that ignores duplicates (through pure projections, filters
//! and semi-applies that read nothing but that node, or also the input
//! row: then per row), prunes ends: it produces each end once and cancels
//! the prefixes whose every reachable end it already produced
//! ([`LoopScope::prune_ends`]). That
//! rewards finishing one prefix first, so such a scope runs depth first
//! even without a `LIMIT`. The hint `prune=off` keeps the scope and its
//! policy but turns the pruning off (the service benchmark's scope
//! instantiation overhead, "cancellation off").

use rhizome_common::{Error, ErrorKind, Result, Value};
use rhizome_plan::usage::{expr_is_pure, expr_reads, subquery_memo_key};
use rhizome_plan::{
    BinaryOp, Expr, LoopScope, OpKind, PlanNode, PruneEnds, ScopePolicy, Slot, SubqueryKind,
};
use std::collections::BTreeSet;

/// The most instances a hint may make a scope run at once.
pub const MAX_SI_LIMIT: u32 = 1024;

/// A statement's scheduling hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedulingHint {
    /// `scheduling=…`: every scope's policy.
    pub policy: Option<ScopePolicy>,
    /// `max_si=N`: every loop scope's MAX_SI.
    pub max_si: Option<u32>,
    /// `prune=on|off`: whether loop scopes under a `DISTINCT` of their end
    /// node prune ends (on unless the hint says off).
    pub prune: Option<bool>,
}

fn option_error(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::SyntaxError, format!("query option {what}"))
        .with_code("InvalidQueryOption")
}

/// Splits a leading `CYPHER key=value …` prefix off `query` (before or
/// after `EXPLAIN` / `PROFILE`; [`rhizome_cypher::query_options`]): the
/// hint, and the query with the prefix replaced by spaces (so error
/// positions still point into the text the user wrote). `None` and the
/// query unchanged when there is no prefix. Options: `scheduling` (`dfs`,
/// `bfs`, `fifo`, `off`), `max_si` (1 to [`MAX_SI_LIMIT`]) and `prune`
/// (`on`, `off`); anything
/// else is a `SyntaxError` with code `InvalidQueryOption`. (A graph source
/// takes its own `prefetch` option off first.)
pub fn split_hint(query: &str) -> Result<(Option<SchedulingHint>, String)> {
    let found = rhizome_cypher::query_options::query_options(query);
    if found.keywords.is_empty() {
        return Ok((None, query.to_string()));
    }
    let mut hint = SchedulingHint::default();
    for option in &found.options {
        let (name, value) = (option.name, option.value);
        if name.eq_ignore_ascii_case("scheduling") {
            hint.policy = Some(ScopePolicy::from_name(value).ok_or_else(|| {
                option_error(format_args!(
                    "`{name}={value}`: expected dfs, bfs, fifo or off"
                ))
            })?);
        } else if name.eq_ignore_ascii_case("max_si") {
            let n: u32 = value
                .parse()
                .ok()
                .filter(|n| (1..=MAX_SI_LIMIT).contains(n))
                .ok_or_else(|| {
                    option_error(format_args!(
                        "`{name}={value}`: expected a whole number from 1 to {MAX_SI_LIMIT}"
                    ))
                })?;
            hint.max_si = Some(n);
        } else if name.eq_ignore_ascii_case("prune") {
            hint.prune = Some(match value.to_ascii_lowercase().as_str() {
                "on" => true,
                "off" => false,
                _ => {
                    return Err(option_error(format_args!(
                        "`{name}={value}`: expected on or off"
                    )))
                }
            });
        } else {
            return Err(option_error(format_args!(
                "`{name}={value}`: unknown option (expected scheduling, max_si or prune; \
                 prefetch is an option of graph sources)"
            )));
        }
    }
    let spans = found
        .keywords
        .iter()
        .cloned()
        .chain(found.options.iter().map(|o| o.span.clone()));
    Ok((
        Some(hint),
        rhizome_cypher::query_options::blank(query, spans),
    ))
}

/// Chooses every scope's settings in `root` (see the module documentation)
/// and applies `hint` over the choice.
pub fn choose_scopes(root: PlanNode, hint: Option<&SchedulingHint>) -> PlanNode {
    let mut root = root;
    choose(&mut root, Early::No, hint);
    if hint.and_then(|h| h.prune) != Some(false) {
        prune_distinct_ends(&mut root, hint);
    }
    if hint.and_then(|h| h.policy) == Some(ScopePolicy::Off) {
        root = branch_scopes_off(root);
    }
    root
}

/// Why a consumer may stop before its input ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Early {
    /// Nothing stops it early.
    No,
    /// A `LIMIT` above.
    Limit,
    /// An existence probe: its first row ends it.
    Exists,
}

fn default_scope(early: Early, min: u64, max: Option<u64>) -> LoopScope {
    let policy = match (early, max) {
        (Early::No, _) => ScopePolicy::Off,
        (Early::Exists, _) => ScopePolicy::Dfs,
        (Early::Limit, Some(max)) if max == min => ScopePolicy::Dfs,
        (Early::Limit, _) => ScopePolicy::Bfs,
    };
    LoopScope {
        policy,
        max_si: 1,
        prune_ends: PruneEnds::Off,
    }
}

/// The planner's `chosen` settings with the hint applied over them: its
/// policy replaces the chosen one, its MAX_SI the chosen one (a MAX_SI
/// alone changes only scopes that are on).
fn hinted(chosen: LoopScope, hint: Option<&SchedulingHint>) -> LoopScope {
    match hint {
        Some(h) => LoopScope {
            policy: h.policy.unwrap_or(chosen.policy),
            max_si: h.max_si.unwrap_or(chosen.max_si),
            prune_ends: chosen.prune_ends,
        },
        None => chosen,
    }
}

/// Sets the scopes under `node`; `early` says whether (and why) its
/// consumer may stop before the input ends.
fn choose(node: &mut PlanNode, early: Early, hint: Option<&SchedulingHint>) {
    let below = match node.kind {
        OpKind::Limit { .. } => Early::Limit,
        OpKind::Sort { .. } | OpKind::Top { .. } | OpKind::Aggregate { .. } | OpKind::Eager => {
            Early::No
        }
        _ => early,
    };
    if let OpKind::VarExpand {
        min, max, scope, ..
    } = &mut node.kind
    {
        *scope = hinted(default_scope(early, *min, *max), hint);
    }
    match &mut node.kind {
        // An existence probe per row rewards finishing one instance first.
        OpKind::SemiApply { scope, .. } => {
            *scope = hinted(
                LoopScope {
                    policy: ScopePolicy::Dfs,
                    max_si: 1,
                    prune_ends: PruneEnds::Off,
                },
                hint,
            );
        }
        // OPTIONAL MATCH and CALL { } read every row of every instance:
        // plain inline runs unless the hint asks for a scope.
        OpKind::Optional { scope, .. } | OpKind::Apply { scope } => {
            *scope = hinted(LoopScope::default(), hint);
        }
        _ => {}
    }
    let semi = matches!(node.kind, OpKind::SemiApply { .. });
    for e in node.kind.exprs_mut() {
        e.visit_mut(&mut |x| {
            if let Expr::Subquery(plan, kind) = x {
                let early = match kind {
                    SubqueryKind::Exists => Early::Exists,
                    _ => Early::No,
                };
                choose(plan, early, hint);
            }
        });
    }
    for (i, input) in node.inputs.iter_mut().enumerate() {
        choose(
            input,
            if semi && i == 1 { Early::Exists } else { below },
            hint,
        );
    }
}

/// The slots by which `kind` judges its input rows, if duplicate rows
/// change nothing in its output: a `Distinct`'s slots; an aggregation's
/// keys and arguments when every aggregate ignores duplicates
/// (`count(DISTINCT x)`, `min`, `max`, …) and all are pure
/// ([`expr_is_pure`]: no random function, no updating subquery).
fn judged_slots(kind: &OpKind) -> Option<BTreeSet<Slot>> {
    match kind {
        OpKind::Distinct { slots } => Some(slots.iter().copied().collect()),
        OpKind::Aggregate { keys, aggregates }
            if !aggregates.is_empty() && aggregates.iter().all(|a| a.ignores_duplicates()) =>
        {
            let exprs = || {
                keys.iter()
                    .map(|(_, k)| k)
                    .chain(aggregates.iter().flat_map(|a| &a.args))
            };
            exprs()
                .all(expr_is_pure)
                .then(|| exprs().flat_map(expr_reads).collect())
        }
        _ => None,
    }
}

/// Marks the loop scopes whose rows only feed a `DISTINCT` of their end
/// node ([`LoopScope::prune_ends`]): from each `Distinct` (or aggregation
/// that ignores duplicates, [`judged_slots`]), down through
/// projections, filters and semi-applies (pure ones), the slots its rows are judged by
/// must come down to the expansion's end node ([`PruneEnds::Shared`]) or
/// to it and slots of the expansion's input row ([`PruneEnds::PerRow`]),
/// never its relationships. A scope the planner left off
/// runs depth first (a policy in `hint` still wins; `off` keeps it off).
fn prune_distinct_ends(node: &mut PlanNode, hint: Option<&SchedulingHint>) {
    if let (Some(mut judged), [_]) = (judged_slots(&node.kind), node.inputs.as_slice()) {
        let mut below = &mut node.inputs[0];
        loop {
            match &below.kind {
                OpKind::Project { items } => {
                    let mut ok = true;
                    for (slot, e) in items.iter().rev() {
                        if judged.remove(slot) {
                            ok &= expr_is_pure(e);
                            judged.extend(expr_reads(e));
                        }
                    }
                    if !ok || below.inputs.len() != 1 {
                        break;
                    }
                }
                // An `EXISTS` planned as a semi-apply filters by the slots
                // its inner plan reads, when that plan is pure.
                OpKind::SemiApply { .. } => {
                    let key = match below.inputs.as_slice() {
                        [_, inner] => subquery_memo_key(inner, &SubqueryKind::Exists),
                        _ => None,
                    };
                    let Some(key) = key else {
                        break;
                    };
                    judged.extend(key);
                }
                OpKind::Filter { predicate } => {
                    if !expr_is_pure(predicate) || below.inputs.len() != 1 {
                        break;
                    }
                    judged.extend(expr_reads(predicate));
                }
                OpKind::VarExpand {
                    to,
                    rels,
                    into: false,
                    optional: false,
                    ..
                } => {
                    // Judged by the end alone, or also by slots of the
                    // input row (the same for every path of one row); not
                    // by the path.
                    let prune = if judged.iter().all(|s| s == to) {
                        PruneEnds::Shared
                    } else if !judged.contains(rels) {
                        PruneEnds::PerRow
                    } else {
                        break;
                    };
                    if let OpKind::VarExpand { scope, .. } = &mut below.kind {
                        if scope.policy == ScopePolicy::Off && hint.and_then(|h| h.policy).is_none()
                        {
                            scope.policy = ScopePolicy::Dfs;
                        }
                        if scope.policy != ScopePolicy::Off {
                            scope.prune_ends = prune;
                        }
                    }
                    break;
                }
                _ => break,
            }
            below = &mut below.inputs[0];
        }
    }
    for input in &mut node.inputs {
        prune_distinct_ends(input, hint);
    }
    for e in node.kind.exprs_mut() {
        e.visit_mut(&mut |x| {
            if let Expr::Subquery(plan, _) = x {
                prune_distinct_ends(plan, hint);
            }
        });
    }
}

/// `EXISTS { }` as `COUNT { } > 0`, a semi-apply as a filter on it: every
/// inner run goes to its end.
fn branch_scopes_off(root: PlanNode) -> PlanNode {
    let count = |plan: Box<PlanNode>, anti: bool| {
        Expr::Binary(
            if anti { BinaryOp::Eq } else { BinaryOp::Gt },
            Box::new(Expr::Subquery(plan, SubqueryKind::Count)),
            Box::new(Expr::Literal(Value::Int(0))),
        )
    };
    root.transform_up(&mut |mut n| {
        for e in n.kind.exprs_mut() {
            e.visit_mut(&mut |x| {
                if let Expr::Subquery(plan, SubqueryKind::Exists) = x {
                    let plan = std::mem::replace(
                        plan,
                        Box::new(PlanNode::new(OpKind::Argument, Vec::new(), 1.0)),
                    );
                    *x = count(plan, false);
                }
            });
        }
        if let (OpKind::SemiApply { anti, .. }, 2) = (&n.kind, n.inputs.len()) {
            let anti = *anti;
            let inner = n.inputs.pop().expect("two inputs");
            let outer = n.inputs.pop().expect("two inputs");
            let estimate = n.estimated_rows;
            let mut f = PlanNode::new(
                OpKind::Filter {
                    predicate: count(Box::new(inner), anti),
                },
                vec![outer],
                estimate,
            );
            f.rule = n.rule;
            return f;
        }
        n
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_is_read_and_blanked() {
        let (hint, text) = split_hint("CYPHER scheduling=bfs max_si=4 MATCH (n) RETURN n").unwrap();
        assert_eq!(
            hint,
            Some(SchedulingHint {
                policy: Some(ScopePolicy::Bfs),
                max_si: Some(4),
                prune: None,
            })
        );
        assert_eq!(text, format!("{}MATCH (n) RETURN n", " ".repeat(31)));
        let (hint, text) = split_hint("PROFILE cypher SCHEDULING=OFF RETURN 1").unwrap();
        assert_eq!(hint.unwrap().policy, Some(ScopePolicy::Off));
        let (hint, _) = split_hint("CYPHER prune=OFF RETURN 1").unwrap();
        assert_eq!(hint.unwrap().prune, Some(false));
        assert!(text.starts_with("PROFILE ") && text.trim_end().ends_with("RETURN 1"));
        assert_eq!(split_hint("RETURN 1").unwrap(), (None, "RETURN 1".into()));
    }

    #[test]
    fn bad_options_are_clear_errors() {
        for (q, why) in [
            (
                "CYPHER scheduling=lifo RETURN 1",
                "expected dfs, bfs, fifo or off",
            ),
            ("CYPHER max_si=0 RETURN 1", "from 1 to 1024"),
            ("CYPHER max_si=x RETURN 1", "from 1 to 1024"),
            ("CYPHER runtime=slotted RETURN 1", "unknown option"),
            ("CYPHER prune=yes RETURN 1", "expected on or off"),
        ] {
            let e = split_hint(q).unwrap_err();
            assert_eq!(e.kind, ErrorKind::SyntaxError, "{q}");
            assert!(e.message.contains(why), "{q}: {}", e.message);
        }
    }
}
