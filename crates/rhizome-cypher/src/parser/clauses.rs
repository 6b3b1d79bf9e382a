//! Clauses: reading, projecting, updating and procedure calls.

use super::Parser;
use crate::ast::*;
use crate::lexer::Token;
use rhizome_common::Result;

impl<'a> Parser<'a> {
    /// Clauses up to `UNION`, `}`, `)`, `;` or the end.
    pub(crate) fn single_query(&mut self) -> Result<SingleQuery> {
        let start = self.span().start;
        let mut clauses = Vec::new();
        loop {
            if matches!(
                self.peek(),
                Token::Eof | Token::RBrace | Token::RParen | Token::Semicolon
            ) || self.at_kw("UNION")
            {
                break;
            }
            clauses.push(self.clause()?);
        }
        if clauses.is_empty() {
            return Err(self.unexpected("a clause"));
        }
        Ok(SingleQuery {
            clauses,
            span: self.since(start),
        })
    }

    fn clause(&mut self) -> Result<Clause> {
        let start = self.span().start;
        if self.at_kw("MATCH") || (self.at_kw("OPTIONAL") && self.is_kw_at(1, "MATCH")) {
            let optional = self.eat_kw("OPTIONAL");
            self.bump();
            let pattern = self.pattern()?;
            let where_ = self.opt_where()?;
            return Ok(Clause::Match(Match {
                optional,
                pattern,
                where_,
                span: self.since(start),
            }));
        }
        if self.eat_kw("UNWIND") {
            let expr = self.expr()?;
            self.expect_kw("AS")?;
            let variable = self.variable()?;
            return Ok(Clause::Unwind(Unwind {
                expr,
                variable,
                span: self.since(start),
            }));
        }
        if self.eat_kw("WITH") {
            let mut p = self.projection(start)?;
            p.where_ = self.opt_where()?;
            p.span = self.since(start);
            return Ok(Clause::With(p));
        }
        if self.eat_kw("RETURN") {
            return Ok(Clause::Return(self.projection(start)?));
        }
        if self.eat_kw("CREATE") {
            let pattern = self.pattern()?;
            return Ok(Clause::Create(Create {
                pattern,
                span: self.since(start),
            }));
        }
        if self.eat_kw("MERGE") {
            let pattern = self.pattern_part()?;
            let mut actions = Vec::new();
            while self.at_kw("ON") {
                let astart = self.span().start;
                self.bump();
                let on_create = if self.eat_kw("CREATE") {
                    true
                } else if self.eat_kw("MATCH") {
                    false
                } else {
                    return Err(self.unexpected("`CREATE` or `MATCH`"));
                };
                self.expect_kw("SET")?;
                let items = self.set_items()?;
                actions.push(MergeAction {
                    on_create,
                    items,
                    span: self.since(astart),
                });
            }
            return Ok(Clause::Merge(Merge {
                pattern,
                actions,
                span: self.since(start),
            }));
        }
        if self.eat_kw("SET") {
            let items = self.set_items()?;
            return Ok(Clause::Set(SetClause {
                items,
                span: self.since(start),
            }));
        }
        if self.eat_kw("REMOVE") {
            let mut items = Vec::new();
            loop {
                items.push(self.remove_item()?);
                if !self.eat(Token::Comma) {
                    break;
                }
            }
            return Ok(Clause::Remove(Remove {
                items,
                span: self.since(start),
            }));
        }
        if self.at_kw("DELETE") || (self.at_kw("DETACH") && self.is_kw_at(1, "DELETE")) {
            let detach = self.eat_kw("DETACH");
            self.bump();
            let mut exprs = Vec::new();
            loop {
                exprs.push(self.expr()?);
                if !self.eat(Token::Comma) {
                    break;
                }
            }
            return Ok(Clause::Delete(Delete {
                detach,
                exprs,
                span: self.since(start),
            }));
        }
        if self.eat_kw("FOREACH") {
            self.enter()?;
            self.expect(Token::LParen)?;
            let variable = self.variable()?;
            self.expect_kw("IN")?;
            let list = self.expr()?;
            self.expect(Token::Pipe)?;
            let mut clauses = Vec::new();
            while self.peek() != Token::RParen && self.peek() != Token::Eof {
                clauses.push(self.clause()?);
            }
            if clauses.is_empty() {
                return Err(self.unexpected("an updating clause"));
            }
            self.expect(Token::RParen)?;
            self.leave();
            return Ok(Clause::Foreach(Foreach {
                variable,
                list,
                clauses,
                span: self.since(start),
            }));
        }
        if self.eat_kw("CALL") {
            if self.peek() == Token::LBrace {
                self.enter()?;
                self.bump();
                let query = self.query()?;
                self.expect(Token::RBrace)?;
                self.leave();
                return Ok(Clause::CallSubquery(CallSubquery {
                    query,
                    span: self.since(start),
                }));
            }
            return Ok(Clause::Call(self.call_procedure(start)?));
        }
        Err(self.unexpected("a clause (MATCH, RETURN, CREATE, ...)"))
    }

    fn opt_where(&mut self) -> Result<Option<Expr>> {
        if self.eat_kw("WHERE") {
            Ok(Some(self.expr()?))
        } else {
            Ok(None)
        }
    }

    fn projection(&mut self, start: usize) -> Result<Projection> {
        let distinct = self.eat_kw("DISTINCT");
        let mut star = false;
        let mut items = Vec::new();
        if self.eat(Token::Star) {
            star = true;
            if self.eat(Token::Comma) {
                items = self.projection_items()?;
            }
        } else {
            items = self.projection_items()?;
        }
        let mut order_by = Vec::new();
        if self.at_kw("ORDER") {
            self.bump();
            self.expect_kw("BY")?;
            loop {
                let istart = self.span().start;
                let expr = self.expr()?;
                let descending = if self.eat_kw("DESC") || self.eat_kw("DESCENDING") {
                    true
                } else {
                    let _ = self.eat_kw("ASC") || self.eat_kw("ASCENDING");
                    false
                };
                order_by.push(SortItem {
                    expr,
                    descending,
                    span: self.since(istart),
                });
                if !self.eat(Token::Comma) {
                    break;
                }
            }
        }
        let skip = if self.eat_kw("SKIP") {
            Some(self.expr()?)
        } else {
            None
        };
        let limit = if self.eat_kw("LIMIT") {
            Some(self.expr()?)
        } else {
            None
        };
        Ok(Projection {
            distinct,
            star,
            items,
            order_by,
            skip,
            limit,
            where_: None,
            span: self.since(start),
        })
    }

    fn projection_items(&mut self) -> Result<Vec<ProjectionItem>> {
        let mut items = Vec::new();
        loop {
            let start = self.span().start;
            let expr = self.expr()?;
            let alias = if self.eat_kw("AS") {
                Some(self.variable()?)
            } else {
                None
            };
            let text = if alias.is_some() {
                String::new()
            } else {
                self.text_of(Span::new(start, self.prev_end().max(start)))
                    .to_string()
            };
            items.push(ProjectionItem {
                expr,
                alias,
                text,
                span: self.since(start),
            });
            if !self.eat(Token::Comma) {
                break;
            }
        }
        Ok(items)
    }

    fn set_items(&mut self) -> Result<Vec<SetItem>> {
        let mut items = Vec::new();
        loop {
            items.push(self.set_item()?);
            if !self.eat(Token::Comma) {
                break;
            }
        }
        Ok(items)
    }

    fn set_item(&mut self) -> Result<SetItem> {
        let start = self.span().start;
        if self.at_variable() {
            match self.peek_at(1) {
                Token::Eq => {
                    let variable = self.variable()?;
                    self.bump();
                    let value = self.expr()?;
                    return Ok(SetItem::Replace {
                        variable,
                        value,
                        span: self.since(start),
                    });
                }
                Token::PlusEq => {
                    let variable = self.variable()?;
                    self.bump();
                    let value = self.expr()?;
                    return Ok(SetItem::Merge {
                        variable,
                        value,
                        span: self.since(start),
                    });
                }
                Token::Colon => {
                    let variable = self.variable()?;
                    let labels = self.labels()?;
                    return Ok(SetItem::Labels {
                        variable,
                        labels,
                        span: self.since(start),
                    });
                }
                _ => {}
            }
        }
        let target = self.expr_above_comparison()?;
        if !matches!(target.kind, ExprKind::Property(..)) {
            return Err(self.error_at(
                target.span,
                "UnexpectedSyntax",
                "expected a property such as `n.key` to set",
            ));
        }
        self.expect(Token::Eq)?;
        let value = self.expr()?;
        Ok(SetItem::Property {
            target,
            value,
            span: self.since(start),
        })
    }

    fn remove_item(&mut self) -> Result<RemoveItem> {
        let start = self.span().start;
        if self.at_variable() && self.peek_at(1) == Token::Colon {
            let variable = self.variable()?;
            let labels = self.labels()?;
            return Ok(RemoveItem::Labels {
                variable,
                labels,
                span: self.since(start),
            });
        }
        let target = self.expr_above_comparison()?;
        if !matches!(target.kind, ExprKind::Property(..)) {
            return Err(self.error_at(
                target.span,
                "UnexpectedSyntax",
                "expected a property such as `n.key` or labels to remove",
            ));
        }
        Ok(RemoveItem::Property(target))
    }

    fn call_procedure(&mut self, start: usize) -> Result<CallProcedure> {
        let mut name = vec![self.name("a procedure name")?];
        while self.eat(Token::Dot) {
            name.push(self.name("a procedure name")?);
        }
        let args = if self.eat(Token::LParen) {
            let mut args = Vec::new();
            if self.peek() != Token::RParen {
                loop {
                    args.push(self.expr()?);
                    if !self.eat(Token::Comma) {
                        break;
                    }
                }
            }
            self.expect(Token::RParen)?;
            Some(args)
        } else {
            None
        };
        let yield_ = if self.at_kw("YIELD") {
            let ystart = self.span().start;
            self.bump();
            let mut star = false;
            let mut items = Vec::new();
            if self.eat(Token::Star) {
                star = true;
            } else {
                loop {
                    let field = self.name("a procedure output field")?;
                    let alias = if self.eat_kw("AS") {
                        Some(self.variable()?)
                    } else {
                        None
                    };
                    items.push(YieldItem { field, alias });
                    if !self.eat(Token::Comma) {
                        break;
                    }
                }
            }
            let where_ = self.opt_where()?;
            Some(YieldSpec {
                star,
                items,
                where_,
                span: self.since(ystart),
            })
        } else {
            None
        };
        Ok(CallProcedure {
            name,
            args,
            yield_,
            span: self.since(start),
        })
    }
}
