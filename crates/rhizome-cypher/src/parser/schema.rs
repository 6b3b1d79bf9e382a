//! Schema, transaction and administration commands.

use super::Parser;
use crate::ast::*;
use crate::lexer::Token;
use rhizome_common::Result;

impl<'a> Parser<'a> {
    /// A schema/admin command if the input starts with one, else `None`
    /// (and nothing is consumed).
    pub(crate) fn schema_or_admin(&mut self) -> Result<Option<StatementKind>> {
        let single = |p: &Parser| p.peek_at(1) == Token::Eof || p.peek_at(1) == Token::Semicolon;
        if (self.at_kw("BEGIN") || self.at_kw("COMMIT") || self.at_kw("ROLLBACK")) && single(self) {
            let kind = if self.at_kw("BEGIN") {
                StatementKind::Begin
            } else if self.at_kw("COMMIT") {
                StatementKind::Commit
            } else {
                StatementKind::Rollback
            };
            self.bump();
            return Ok(Some(kind));
        }
        if self.at_kw("SHOW") {
            self.bump();
            let _ = self.eat_kw("ALL");
            let kind = if self.eat_kw("INDEXES") || self.eat_kw("INDEX") {
                StatementKind::ShowIndexes
            } else if self.eat_kw("CONSTRAINTS") || self.eat_kw("CONSTRAINT") {
                StatementKind::ShowConstraints
            } else if self.eat_kw("TRANSACTIONS") || self.eat_kw("TRANSACTION") {
                StatementKind::ShowTransactions
            } else {
                return Err(self.unexpected("`INDEXES`, `CONSTRAINTS` or `TRANSACTIONS`"));
            };
            return Ok(Some(kind));
        }
        if self.at_kw("TERMINATE") {
            self.bump();
            if !(self.eat_kw("TRANSACTIONS") || self.eat_kw("TRANSACTION")) {
                return Err(self.unexpected("`TRANSACTIONS`"));
            }
            let mut ids = vec![self.expr()?];
            while self.eat(Token::Comma) {
                ids.push(self.expr()?);
            }
            return Ok(Some(StatementKind::TerminateTransactions(ids)));
        }
        if self.at_kw("CREATE") && (self.is_kw_at(1, "INDEX") || self.is_kw_at(1, "CONSTRAINT")) {
            self.bump();
            if self.eat_kw("INDEX") {
                return Ok(Some(StatementKind::CreateIndex(self.create_index()?)));
            }
            self.bump();
            return Ok(Some(StatementKind::CreateConstraint(
                self.create_constraint()?,
            )));
        }
        if self.at_kw("DROP") {
            self.bump();
            let index = if self.eat_kw("INDEX") {
                true
            } else if self.eat_kw("CONSTRAINT") {
                false
            } else {
                return Err(self.unexpected("`INDEX` or `CONSTRAINT`"));
            };
            let target = if index && self.at_kw("ON") && self.peek_at(1) == Token::Colon {
                self.bump();
                let (label, properties) = self.legacy_label_props()?;
                DropTarget::On { label, properties }
            } else {
                let name = self.name("an index or constraint name")?;
                let if_exists = if self.at_kw("IF") {
                    self.bump();
                    self.expect_kw("EXISTS")?;
                    true
                } else {
                    false
                };
                DropTarget::Named { name, if_exists }
            };
            return Ok(Some(if index {
                StatementKind::DropIndex(target)
            } else {
                StatementKind::DropConstraint(target)
            }));
        }
        Ok(None)
    }

    fn if_not_exists(&mut self) -> Result<bool> {
        if self.at_kw("IF") {
            self.bump();
            self.expect_kw("NOT")?;
            self.expect_kw("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    fn legacy_label_props(&mut self) -> Result<(Ident, Vec<Ident>)> {
        self.expect(Token::Colon)?;
        let label = self.name("a label")?;
        self.expect(Token::LParen)?;
        let mut props = vec![self.name("a property key")?];
        while self.eat(Token::Comma) {
            props.push(self.name("a property key")?);
        }
        self.expect(Token::RParen)?;
        Ok((label, props))
    }

    /// The optional name and `IF NOT EXISTS` before `FOR` / `ON`.
    fn schema_name(&mut self) -> Result<(Option<Ident>, bool)> {
        let name = if self.at_name() && !self.at_kw("FOR") && !self.at_kw("ON") && !self.at_kw("IF")
        {
            Some(self.name("a name")?)
        } else {
            None
        };
        Ok((name, self.if_not_exists()?))
    }

    fn create_index(&mut self) -> Result<IndexSpec> {
        if self.at_kw("ON") && self.peek_at(1) == Token::Colon {
            self.bump();
            let (label, properties) = self.legacy_label_props()?;
            return Ok(IndexSpec {
                name: None,
                if_not_exists: false,
                variable: None,
                label,
                relationship: false,
                properties,
            });
        }
        let (name, if_not_exists) = self.schema_name()?;
        self.expect_kw("FOR")?;
        let (variable, label, relationship) = self.schema_pattern()?;
        self.expect_kw("ON")?;
        self.expect(Token::LParen)?;
        let mut properties = vec![self.property_of(&variable)?];
        while self.eat(Token::Comma) {
            properties.push(self.property_of(&variable)?);
        }
        self.expect(Token::RParen)?;
        Ok(IndexSpec {
            name,
            if_not_exists,
            variable: Some(variable),
            label,
            relationship,
            properties,
        })
    }

    fn create_constraint(&mut self) -> Result<ConstraintSpec> {
        let (name, if_not_exists) = self.schema_name()?;
        let on = if self.eat_kw("FOR") {
            true
        } else {
            self.expect_kw("ON")?;
            false
        };
        let (variable, label, relationship) = self.schema_pattern()?;
        if relationship {
            return Err(self.error_here(
                "UnexpectedSyntax",
                "constraints on relationship types are not supported",
            ));
        }
        if !(self.eat_kw("REQUIRE") || (!on && self.eat_kw("ASSERT"))) {
            return Err(self.unexpected("`REQUIRE`"));
        }
        let mut properties = Vec::new();
        if self.eat(Token::LParen) {
            properties.push(self.property_of(&variable)?);
            while self.eat(Token::Comma) {
                properties.push(self.property_of(&variable)?);
            }
            self.expect(Token::RParen)?;
        } else {
            properties.push(self.property_of(&variable)?);
        }
        self.expect_kw("IS")?;
        let kind = if self.eat_kw("UNIQUE") {
            ConstraintKind::Unique
        } else if self.eat_kw("NOT") {
            self.expect_kw("NULL")?;
            ConstraintKind::NotNull
        } else if self.eat_kw("NODE") {
            self.expect_kw("KEY")?;
            ConstraintKind::NodeKey
        } else {
            return Err(self.unexpected("`UNIQUE`, `NOT NULL` or `NODE KEY`"));
        };
        Ok(ConstraintSpec {
            name,
            if_not_exists,
            variable,
            label,
            properties,
            kind,
        })
    }

    /// `(v:Label)` or `()-[v:TYPE]-()`; returns (variable, label, is_relationship).
    fn schema_pattern(&mut self) -> Result<(Ident, Ident, bool)> {
        self.expect(Token::LParen)?;
        if self.eat(Token::RParen) {
            self.eat(Token::Lt);
            self.expect(Token::Minus)?;
            self.expect(Token::LBracket)?;
            let v = self.variable()?;
            self.expect(Token::Colon)?;
            let t = self.name("a relationship type")?;
            self.expect(Token::RBracket)?;
            self.expect(Token::Minus)?;
            self.eat(Token::Gt);
            self.expect(Token::LParen)?;
            self.expect(Token::RParen)?;
            return Ok((v, t, true));
        }
        let v = self.variable()?;
        self.expect(Token::Colon)?;
        let l = self.name("a label")?;
        self.expect(Token::RParen)?;
        Ok((v, l, false))
    }

    fn property_of(&mut self, variable: &Ident) -> Result<Ident> {
        let v = self.variable()?;
        if v.name != variable.name {
            return Err(self.error_at(
                v.span,
                "UndefinedVariable",
                format!("variable `{}` not defined", v.name),
            ));
        }
        self.expect(Token::Dot)?;
        self.name("a property key")
    }
}
