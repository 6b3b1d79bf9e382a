//! Printing statements, clauses and patterns.

use super::*;

impl Printer {
    pub(super) fn statement(&mut self, s: &Statement) {
        match s.prefix {
            Some(QueryPrefix::Explain) => self.w("EXPLAIN "),
            Some(QueryPrefix::Profile) => self.w("PROFILE "),
            None => {}
        }
        match &s.kind {
            StatementKind::Query(q) => self.query(q),
            StatementKind::CreateIndex(ix) => {
                self.w("CREATE INDEX ");
                match &ix.variable {
                    None => {
                        self.w("ON :");
                        self.name(&ix.label);
                        self.w("(");
                        self.names(&ix.properties, ", ");
                        self.w(")");
                    }
                    Some(v) => {
                        self.schema_head(&ix.name, ix.if_not_exists);
                        self.w("FOR ");
                        if ix.relationship {
                            self.w("()-[");
                            self.name(v);
                            self.w(":");
                            self.name(&ix.label);
                            self.w("]-()");
                        } else {
                            self.w("(");
                            self.name(v);
                            self.w(":");
                            self.name(&ix.label);
                            self.w(")");
                        }
                        self.w(" ON (");
                        self.props_of(v, &ix.properties);
                        self.w(")");
                    }
                }
            }
            StatementKind::CreateConstraint(c) => {
                self.w("CREATE CONSTRAINT ");
                self.schema_head(&c.name, c.if_not_exists);
                self.w("FOR (");
                self.name(&c.variable);
                self.w(":");
                self.name(&c.label);
                self.w(") REQUIRE (");
                self.props_of(&c.variable, &c.properties);
                self.w(match c.kind {
                    ConstraintKind::Unique => ") IS UNIQUE",
                    ConstraintKind::NotNull => ") IS NOT NULL",
                    ConstraintKind::NodeKey => ") IS NODE KEY",
                });
            }
            StatementKind::DropIndex(t) => {
                self.w("DROP INDEX ");
                self.drop_target(t);
            }
            StatementKind::DropConstraint(t) => {
                self.w("DROP CONSTRAINT ");
                self.drop_target(t);
            }
            StatementKind::ShowIndexes => self.w("SHOW INDEXES"),
            StatementKind::ShowConstraints => self.w("SHOW CONSTRAINTS"),
            StatementKind::ShowTransactions => self.w("SHOW TRANSACTIONS"),
            StatementKind::TerminateTransactions(ids) => {
                self.w("TERMINATE TRANSACTIONS ");
                self.exprs(ids);
            }
            StatementKind::Begin => self.w("BEGIN"),
            StatementKind::Commit => self.w("COMMIT"),
            StatementKind::Rollback => self.w("ROLLBACK"),
        }
    }

    pub(super) fn schema_head(&mut self, name: &Option<Ident>, if_not_exists: bool) {
        if let Some(n) = name {
            self.name(n);
            self.w(" ");
        }
        if if_not_exists {
            self.w("IF NOT EXISTS ");
        }
    }

    pub(super) fn props_of(&mut self, v: &Ident, props: &[Ident]) {
        for (i, p) in props.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.name(v);
            self.w(".");
            self.name(p);
        }
    }

    pub(super) fn drop_target(&mut self, t: &DropTarget) {
        match t {
            DropTarget::Named { name, if_exists } => {
                self.name(name);
                if *if_exists {
                    self.w(" IF EXISTS");
                }
            }
            DropTarget::On { label, properties } => {
                self.w("ON :");
                self.name(label);
                self.w("(");
                self.names(properties, ", ");
                self.w(")");
            }
        }
    }

    pub(super) fn query(&mut self, q: &Query) {
        self.single(&q.first);
        for u in &q.unions {
            self.w(if u.all { " UNION ALL " } else { " UNION " });
            self.single(&u.query);
        }
    }

    pub(super) fn single(&mut self, q: &SingleQuery) {
        for (i, c) in q.clauses.iter().enumerate() {
            if i > 0 {
                self.w(" ");
            }
            self.clause(c);
        }
    }

    pub(super) fn clause(&mut self, c: &Clause) {
        match c {
            Clause::Match(m) => {
                self.w(if m.optional {
                    "OPTIONAL MATCH "
                } else {
                    "MATCH "
                });
                self.pattern(&m.pattern);
                self.where_(&m.where_);
            }
            Clause::Unwind(u) => {
                self.w("UNWIND ");
                self.expr(&u.expr, 0);
                self.w(" AS ");
                self.name(&u.variable);
            }
            Clause::With(p) => {
                self.w("WITH ");
                self.projection(p);
                self.where_(&p.where_);
            }
            Clause::Return(p) => {
                self.w("RETURN ");
                self.projection(p);
            }
            Clause::Create(c) => {
                self.w("CREATE ");
                self.pattern(&c.pattern);
            }
            Clause::Merge(m) => {
                self.w("MERGE ");
                self.pattern_part(&m.pattern);
                for a in &m.actions {
                    self.w(if a.on_create {
                        " ON CREATE SET "
                    } else {
                        " ON MATCH SET "
                    });
                    self.set_items(&a.items);
                }
            }
            Clause::Set(s) => {
                self.w("SET ");
                self.set_items(&s.items);
            }
            Clause::Remove(r) => {
                self.w("REMOVE ");
                for (i, item) in r.items.iter().enumerate() {
                    if i > 0 {
                        self.w(", ");
                    }
                    match item {
                        RemoveItem::Property(e) => self.expr(e, bp::PRED),
                        RemoveItem::Labels {
                            variable, labels, ..
                        } => {
                            self.name(variable);
                            self.labels(labels);
                        }
                    }
                }
            }
            Clause::Delete(d) => {
                self.w(if d.detach {
                    "DETACH DELETE "
                } else {
                    "DELETE "
                });
                self.exprs(&d.exprs);
            }
            Clause::Foreach(f) => {
                self.w("FOREACH (");
                self.name(&f.variable);
                self.w(" IN ");
                self.expr(&f.list, 0);
                self.w(" | ");
                for (i, c) in f.clauses.iter().enumerate() {
                    if i > 0 {
                        self.w(" ");
                    }
                    self.clause(c);
                }
                self.w(")");
            }
            Clause::Call(c) => {
                self.w("CALL ");
                self.syms(&c.name, ".");
                if let Some(args) = &c.args {
                    self.w("(");
                    self.exprs(args);
                    self.w(")");
                }
                if let Some(y) = &c.yield_ {
                    self.w(" YIELD ");
                    if y.star {
                        self.w("*");
                    }
                    for (i, item) in y.items.iter().enumerate() {
                        if i > 0 {
                            self.w(", ");
                        }
                        self.sym(&item.field);
                        if let Some(a) = &item.alias {
                            self.w(" AS ");
                            self.name(a);
                        }
                    }
                    self.where_(&y.where_);
                }
            }
            Clause::CallSubquery(c) => {
                self.w("CALL { ");
                self.query(&c.query);
                self.w(" }");
            }
        }
    }

    pub(super) fn where_(&mut self, w: &Option<Expr>) {
        if let Some(e) = w {
            self.w(" WHERE ");
            self.expr(e, 0);
        }
    }

    pub(super) fn projection(&mut self, p: &Projection) {
        if p.distinct {
            self.w("DISTINCT ");
        }
        if p.star {
            self.w("*");
            if !p.items.is_empty() {
                self.w(", ");
            }
        }
        for (i, item) in p.items.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            match &item.alias {
                Some(a) => {
                    self.expr(&item.expr, 0);
                    self.w(" AS ");
                    self.name(a);
                }
                None => self.w(&item.text),
            }
        }
        if !p.order_by.is_empty() {
            self.w(" ORDER BY ");
            for (i, s) in p.order_by.iter().enumerate() {
                if i > 0 {
                    self.w(", ");
                }
                self.expr(&s.expr, 0);
                if s.descending {
                    self.w(" DESC");
                }
            }
        }
        if let Some(e) = &p.skip {
            self.w(" SKIP ");
            self.expr(e, 0);
        }
        if let Some(e) = &p.limit {
            self.w(" LIMIT ");
            self.expr(e, 0);
        }
    }

    pub(super) fn set_items(&mut self, items: &[SetItem]) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            match item {
                SetItem::Property { target, value, .. } => {
                    self.expr(target, bp::PRED);
                    self.w(" = ");
                    self.expr(value, 0);
                }
                SetItem::Replace {
                    variable, value, ..
                } => {
                    self.name(variable);
                    self.w(" = ");
                    self.expr(value, 0);
                }
                SetItem::Merge {
                    variable, value, ..
                } => {
                    self.name(variable);
                    self.w(" += ");
                    self.expr(value, 0);
                }
                SetItem::Labels {
                    variable, labels, ..
                } => {
                    self.name(variable);
                    self.labels(labels);
                }
            }
        }
    }

    pub(super) fn pattern(&mut self, parts: &[PatternPart]) {
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.pattern_part(p);
        }
    }

    pub(super) fn pattern_part(&mut self, p: &PatternPart) {
        if let Some(v) = &p.variable {
            self.name(v);
            self.w(" = ");
        }
        match p.shortest {
            Some(ShortestPathKind::Single) => {
                self.w("shortestPath(");
                self.element(&p.element);
                self.w(")");
            }
            Some(ShortestPathKind::All) => {
                self.w("allShortestPaths(");
                self.element(&p.element);
                self.w(")");
            }
            None => self.element(&p.element),
        }
    }

    pub(super) fn element(&mut self, e: &PatternElement) {
        self.node(&e.start);
        for (r, n) in &e.chain {
            self.rel(r);
            self.node(n);
        }
    }

    pub(super) fn props(&mut self, p: &Option<Box<Expr>>) {
        if let Some(e) = p {
            self.w(" ");
            self.expr(e, BP_ATOM);
        }
    }

    pub(super) fn node(&mut self, n: &NodePattern) {
        self.w("(");
        if let Some(v) = &n.variable {
            self.name(v);
        }
        self.labels(&n.labels);
        self.props(&n.properties);
        self.w(")");
    }

    pub(super) fn rel(&mut self, r: &RelationshipPattern) {
        self.w(if r.direction == Direction::Incoming {
            "<-"
        } else {
            "-"
        });
        let detail = r.variable.is_some()
            || !r.types.is_empty()
            || r.length.is_some()
            || r.properties.is_some();
        if detail {
            self.w("[");
            if let Some(v) = &r.variable {
                self.name(v);
            }
            for (i, t) in r.types.iter().enumerate() {
                self.w(if i == 0 { ":" } else { "|" });
                self.sym(t);
            }
            if let Some(l) = &r.length {
                self.w("*");
                match (l.min, l.max) {
                    (Some(a), Some(b)) if l.exact && a == b => {
                        let _ = write!(self.out, "{a}");
                    }
                    (min, max) => {
                        if let Some(a) = min {
                            let _ = write!(self.out, "{a}");
                        }
                        if min.is_some() || max.is_some() {
                            self.w("..");
                        }
                        if let Some(b) = max {
                            let _ = write!(self.out, "{b}");
                        }
                    }
                }
            }
            self.props(&r.properties);
            self.w("]");
        }
        self.w(if r.direction == Direction::Outgoing {
            "->"
        } else {
            "-"
        });
    }
}
