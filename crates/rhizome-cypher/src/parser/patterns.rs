//! Patterns: `p = (a:L {k: v})-[r:T|U *1..3]->(b)`, `shortestPath(...)`.

use super::Parser;
use crate::ast::*;
use crate::lexer::Token;
use rhizome_common::Result;

impl<'a> Parser<'a> {
    /// Comma-separated pattern parts.
    pub(crate) fn pattern(&mut self) -> Result<Vec<PatternPart>> {
        let mut parts = vec![self.pattern_part()?];
        while self.eat(Token::Comma) {
            parts.push(self.pattern_part()?);
        }
        Ok(parts)
    }

    /// `[v =] element` or `[v =] shortestPath(element)`.
    pub(crate) fn pattern_part(&mut self) -> Result<PatternPart> {
        let start = self.span().start;
        let variable = if matches!(self.peek(), Token::Ident | Token::QuotedIdent)
            && self.peek_at(1) == Token::Eq
        {
            let v = self.variable()?;
            self.bump();
            Some(v)
        } else {
            None
        };
        let shortest = if self.peek_at(1) == Token::LParen && self.at_kw("shortestPath") {
            Some(ShortestPathKind::Single)
        } else if self.peek_at(1) == Token::LParen && self.at_kw("allShortestPaths") {
            Some(ShortestPathKind::All)
        } else {
            None
        };
        let element = if shortest.is_some() {
            self.bump();
            self.bump();
            let e = self.pattern_element()?;
            self.expect(Token::RParen)?;
            e
        } else {
            self.pattern_element()?
        };
        Ok(PatternPart {
            variable,
            shortest,
            element,
            span: self.since(start),
        })
    }

    /// `(a)-[r]->(b)...`.
    pub(crate) fn pattern_element(&mut self) -> Result<PatternElement> {
        self.enter()?;
        let start = self.span().start;
        let first = self.node_pattern()?;
        let mut chain = Vec::new();
        while matches!(self.peek(), Token::Minus | Token::Lt) {
            let rel = self.relationship_pattern()?;
            let node = self.node_pattern()?;
            chain.push((rel, node));
        }
        self.leave();
        Ok(PatternElement {
            start: first,
            chain,
            span: self.since(start),
        })
    }

    fn properties(&mut self) -> Result<Option<Box<Expr>>> {
        let start = self.span().start;
        match self.peek() {
            Token::LBrace => {
                let entries = self.map_literal()?;
                Ok(Some(Box::new(Expr::new(
                    ExprKind::Map(entries),
                    self.since(start),
                ))))
            }
            Token::Dollar => {
                self.bump();
                let name = match self.peek() {
                    Token::Number => {
                        let t = self.bump();
                        self.text_of(t.span).to_string()
                    }
                    _ => self.name("a parameter name")?.name,
                };
                Ok(Some(Box::new(Expr::new(
                    ExprKind::Parameter(name),
                    self.since(start),
                ))))
            }
            _ => Ok(None),
        }
    }

    fn node_pattern(&mut self) -> Result<NodePattern> {
        let start = self.span().start;
        self.expect(Token::LParen)?;
        let variable = if self.at_name() {
            Some(self.variable()?)
        } else {
            None
        };
        let labels = self.labels()?;
        let properties = self.properties()?;
        self.expect(Token::RParen)?;
        Ok(NodePattern {
            variable,
            labels,
            properties,
            span: self.since(start),
        })
    }

    fn relationship_pattern(&mut self) -> Result<RelationshipPattern> {
        let start = self.span().start;
        let left = self.eat(Token::Lt);
        self.expect(Token::Minus)?;
        let mut variable = None;
        let mut types = Vec::new();
        let mut length = None;
        let mut properties = None;
        if self.eat(Token::LBracket) {
            if self.at_name() {
                variable = Some(self.variable()?);
            }
            if self.eat(Token::Colon) {
                types.push(self.name("a relationship type")?);
                while self.eat(Token::Pipe) {
                    self.eat(Token::Colon);
                    types.push(self.name("a relationship type")?);
                }
            }
            if self.eat(Token::Star) {
                length = Some(self.length_range()?);
            }
            properties = self.properties()?;
            if self.peek() != Token::RBracket {
                return Err(self.error_here(
                    "InvalidRelationshipPattern",
                    format!(
                        "expected `]` to close the relationship pattern but found {}",
                        self.found()
                    ),
                ));
            }
            self.bump();
        }
        self.expect(Token::Minus)?;
        let right = self.eat(Token::Gt);
        let direction = match (left, right) {
            (true, false) => Direction::Incoming,
            (false, true) => Direction::Outgoing,
            _ => Direction::Both,
        };
        let span = self.since(start);
        if left && right {
            // `<-->` is accepted as undirected for matching; CREATE/MERGE reject it.
            return Ok(RelationshipPattern {
                variable,
                types,
                length,
                properties,
                direction: Direction::Both,
                span,
            });
        }
        Ok(RelationshipPattern {
            variable,
            types,
            length,
            properties,
            direction,
            span,
        })
    }

    fn range_bound(&mut self) -> Result<Option<u64>> {
        if self.peek() != Token::Number {
            return Ok(None);
        }
        let t = self.bump();
        let text = self.text_of(t.span);
        text.parse::<u64>().map(Some).map_err(|_| {
            self.error_at(
                t.span,
                "InvalidRelationshipPattern",
                format!("invalid variable length bound `{text}`"),
            )
        })
    }

    fn length_range(&mut self) -> Result<LengthRange> {
        let min = self.range_bound()?;
        if self.eat(Token::DotDot) {
            let max = self.range_bound()?;
            return Ok(LengthRange {
                min,
                max,
                exact: false,
            });
        }
        if !matches!(self.peek(), Token::RBracket | Token::LBrace | Token::Dollar) {
            return Err(self.error_here(
                "InvalidRelationshipPattern",
                format!(
                    "expected a variable length range such as `*1..3` but found {}",
                    self.found()
                ),
            ));
        }
        Ok(LengthRange {
            min,
            max: min,
            exact: min.is_some(),
        })
    }

    /// Whether the `(` at token `index` starts a relationship pattern
    /// (`(...)-`, `(...)<-`), judged from the tokens after its matching `)`.
    pub(crate) fn pattern_starts_at(&self, index: usize) -> bool {
        if self.kind_at_index(index) != Token::LParen {
            return false;
        }
        // The node's contents must look like a node pattern.
        let inner = self.kind_at_index(index + 1);
        let node_like = match inner {
            Token::RParen | Token::Colon | Token::LBrace => true,
            // `($props)` but not `($a = 1)`.
            Token::Dollar => self.kind_at_index(index + 3) == Token::RParen,
            Token::Ident | Token::QuotedIdent => match self.kind_at_index(index + 2) {
                Token::RParen | Token::Colon | Token::LBrace => true,
                Token::Dollar => self.kind_at_index(index + 4) == Token::RParen,
                _ => false,
            },
            _ => false,
        };
        if !node_like {
            return false;
        }
        let close = self.matching_close(index);
        let a = self.kind_at_index(close + 1);
        let b = self.kind_at_index(close + 2);
        matches!(
            (a, b),
            (Token::Minus, Token::LBracket)
                | (Token::Minus, Token::Minus)
                | (Token::Minus, Token::Gt)
                | (Token::Lt, Token::Minus)
        )
    }
}
