//! The parser of validation expressions: text to tokens to an [`Expr`] tree, following the
//! grammar in the parent module's docs. It is kept apart from evaluation because it is the
//! longer half and concerns only error positions and messages, never figures.

use std::fmt;

use super::{Expr, ExpressionError, Operator, Validation};
use crate::metrics::MetricValue;

impl Validation {
    /// Parses an expression such as `max_complexity < 10` or `openapi_valid OR not_applicable`.
    pub fn parse(source: &str) -> Result<Validation, ExpressionError> {
        let tokens = tokenize(source)?;
        let mut parser = Parser {
            source,
            tokens,
            next: 0,
        };
        let expression = parser.expression()?;
        if let Some(token) = parser.peek() {
            return Err(parser.error(
                token.position,
                format!("expected AND, OR or the end, found `{}`", token.kind),
            ));
        }
        Ok(Validation {
            source: source.trim().to_owned(),
            expression,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
enum TokenKind {
    Word(String),
    Number { value: f64, percent: bool },
    Operator(Operator),
    And,
    Or,
    Not,
    Missing,
}

impl fmt::Display for TokenKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenKind::Word(word) => formatter.write_str(word),
            TokenKind::Number { value, percent } => write!(
                formatter,
                "{}{}",
                MetricValue::Number(*value),
                if *percent { "%" } else { "" }
            ),
            TokenKind::Operator(operator) => formatter.write_str(operator.symbol()),
            TokenKind::And => formatter.write_str("AND"),
            TokenKind::Or => formatter.write_str("OR"),
            TokenKind::Not => formatter.write_str("NOT"),
            TokenKind::Missing => formatter.write_str("MISSING"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    kind: TokenKind,
    /// 1-based character position.
    position: usize,
}

/// Splits an expression into words, numbers (with an optional `%`), operators and keywords.
fn tokenize(source: &str) -> Result<Vec<Token>, ExpressionError> {
    let characters: Vec<char> = source.chars().collect();
    let error = |position: usize, message: String| ExpressionError {
        message,
        position: position + 1,
        source_text: source.trim().to_owned(),
    };
    let mut tokens = Vec::new();
    let mut index = 0;
    while index < characters.len() {
        let character = characters[index];
        let start = index;
        if character.is_whitespace() {
            index += 1;
            continue;
        }
        let kind = if character.is_ascii_alphabetic() || character == '_' {
            while index < characters.len()
                && (characters[index].is_ascii_alphanumeric() || characters[index] == '_')
            {
                index += 1;
            }
            let word: String = characters[start..index].iter().collect();
            match word.to_ascii_uppercase().as_str() {
                "AND" => TokenKind::And,
                "OR" => TokenKind::Or,
                "NOT" => TokenKind::Not,
                "MISSING" => TokenKind::Missing,
                _ => TokenKind::Word(word),
            }
        } else if character.is_ascii_digit() || character == '-' || character == '.' {
            index += 1;
            while index < characters.len()
                && (characters[index].is_ascii_digit() || characters[index] == '.')
            {
                index += 1;
            }
            let text: String = characters[start..index].iter().collect();
            let value = text
                .parse::<f64>()
                .map_err(|_| error(start, format!("`{text}` is not a number")))?;
            let percent = characters.get(index) == Some(&'%');
            if percent {
                index += 1;
            }
            TokenKind::Number { value, percent }
        } else {
            let next = characters.get(index + 1).copied();
            let (operator, width) = match (character, next) {
                ('=', Some('=')) => (Operator::Equal, 2),
                ('!', Some('=')) => (Operator::NotEqual, 2),
                ('<', Some('=')) => (Operator::LessOrEqual, 2),
                ('>', Some('=')) => (Operator::GreaterOrEqual, 2),
                ('<', _) => (Operator::Less, 1),
                ('>', _) => (Operator::Greater, 1),
                _ => {
                    return Err(error(
                        start,
                        format!(
                            "unexpected `{character}`; expected a metric name, a number, \
                             one of == != < <= > >=, or AND, OR, NOT"
                        ),
                    ));
                }
            };
            index += width;
            TokenKind::Operator(operator)
        };
        tokens.push(Token {
            kind,
            position: start + 1,
        });
    }
    Ok(tokens)
}

struct Parser<'a> {
    source: &'a str,
    tokens: Vec<Token>,
    next: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next)
    }

    fn peek_kind(&self, offset: usize) -> Option<&TokenKind> {
        self.tokens.get(self.next + offset).map(|token| &token.kind)
    }

    fn end_position(&self) -> usize {
        self.source.chars().count() + 1
    }

    fn error(&self, position: usize, message: String) -> ExpressionError {
        ExpressionError {
            message,
            position,
            source_text: self.source.trim().to_owned(),
        }
    }

    fn expression(&mut self) -> Result<Expr, ExpressionError> {
        let mut parts = vec![self.term()?];
        while self.peek_kind(0) == Some(&TokenKind::Or) {
            self.next += 1;
            parts.push(self.term()?);
        }
        Ok(single_or(parts, Expr::Or))
    }

    fn term(&mut self) -> Result<Expr, ExpressionError> {
        let mut parts = vec![self.factor()?];
        while self.peek_kind(0) == Some(&TokenKind::And) {
            self.next += 1;
            parts.push(self.factor()?);
        }
        Ok(single_or(parts, Expr::And))
    }

    /// `NOT factor | MISSING metric | [label] metric OP number | metric`.
    fn factor(&mut self) -> Result<Expr, ExpressionError> {
        let Some(token) = self.peek().cloned() else {
            return Err(self.error(
                self.end_position(),
                "expected a metric name, NOT or MISSING, found the end".to_owned(),
            ));
        };
        match token.kind {
            TokenKind::Not => {
                self.next += 1;
                Ok(Expr::Not(Box::new(self.factor()?)))
            }
            TokenKind::Missing => {
                self.next += 1;
                match self.peek().cloned() {
                    Some(Token {
                        kind: TokenKind::Word(metric),
                        ..
                    }) => {
                        self.next += 1;
                        Ok(Expr::Missing(metric))
                    }
                    Some(other) => Err(self.error(
                        other.position,
                        format!(
                            "expected a metric name after MISSING, found `{}`",
                            other.kind
                        ),
                    )),
                    None => Err(self.error(
                        self.end_position(),
                        "expected a metric name after MISSING, found the end".to_owned(),
                    )),
                }
            }
            TokenKind::Word(first) => {
                self.next += 1;
                let metric = match self.peek_kind(0) {
                    Some(TokenKind::Word(second))
                        if matches!(self.peek_kind(1), Some(TokenKind::Operator(_))) =>
                    {
                        let second = second.clone();
                        self.next += 1;
                        second
                    }
                    Some(TokenKind::Word(second)) => {
                        let position = self.tokens[self.next].position;
                        return Err(self.error(
                            position,
                            format!(
                                "expected AND, OR, a comparison operator or the end after \
                                 `{first}`, found `{second}`"
                            ),
                        ));
                    }
                    Some(_) | None => first,
                };
                let Some(TokenKind::Operator(operator)) = self.peek_kind(0).cloned() else {
                    return Ok(Expr::Flag(metric));
                };
                self.next += 1;
                match self.peek().cloned() {
                    Some(Token {
                        kind: TokenKind::Number { value, percent },
                        ..
                    }) => {
                        self.next += 1;
                        Ok(Expr::Compare {
                            metric,
                            operator,
                            value,
                            percent,
                        })
                    }
                    Some(other) => Err(self.error(
                        other.position,
                        format!(
                            "expected a number after `{metric} {}`, found `{}`",
                            operator.symbol(),
                            other.kind
                        ),
                    )),
                    None => Err(self.error(
                        self.end_position(),
                        format!(
                            "expected a number after `{metric} {}`, found the end",
                            operator.symbol()
                        ),
                    )),
                }
            }
            TokenKind::Number { .. } | TokenKind::Operator(_) | TokenKind::And | TokenKind::Or => {
                Err(self.error(
                    token.position,
                    format!(
                        "expected a metric name, NOT or MISSING, found `{}`",
                        token.kind
                    ),
                ))
            }
        }
    }
}

fn single_or(mut parts: Vec<Expr>, combine: fn(Vec<Expr>) -> Expr) -> Expr {
    if parts.len() == 1 {
        parts.remove(0)
    } else {
        combine(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_expressions_say_where() {
        let table = [
            (
                "",
                "expected a metric name, NOT or MISSING, found the end (at character 1 of ``)",
            ),
            (
                "max_complexity <",
                "expected a number after `max_complexity <`, found the end (at character 17 of `max_complexity <`)",
            ),
            (
                "max_complexity < ten",
                "expected a number after `max_complexity <`, found `ten` (at character 18 of `max_complexity < ten`)",
            ),
            (
                "exit_code = 0",
                "unexpected `=`; expected a metric name, a number, one of == != < <= > >=, or AND, OR, NOT (at character 11 of `exit_code = 0`)",
            ),
            (
                "a b c",
                "expected AND, OR, a comparison operator or the end after `a`, found `b` (at character 3 of `a b c`)",
            ),
            (
                "a AND",
                "expected a metric name, NOT or MISSING, found the end (at character 6 of `a AND`)",
            ),
            (
                "a == 1 2",
                "expected AND, OR or the end, found `2` (at character 8 of `a == 1 2`)",
            ),
            (
                "== 1",
                "expected a metric name, NOT or MISSING, found `==` (at character 1 of `== 1`)",
            ),
            (
                "MISSING 3",
                "expected a metric name after MISSING, found `3` (at character 9 of `MISSING 3`)",
            ),
        ];
        for (source, message) in table {
            let error = Validation::parse(source).expect_err(source);
            assert_eq!(error.to_string(), message, "{source}");
        }
    }
}
