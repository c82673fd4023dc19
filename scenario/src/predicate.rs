//! A query's `predicate:` text, parsed against a recorded table into a [`planner::Predicate`].
//!
//! The grammar is the SQL a TPC-H query writes in its `WHERE` clause, restricted to what
//! row-group statistics can judge: a conjunction (`AND`) of
//! - `column op literal` with `op` one of `<`, `<=`, `=`, `>=`, `>`;
//! - `column BETWEEN literal AND literal`;
//! - `column IN (literal, ...)`.
//!
//! Literals: numbers (`24`, `0.05`, `-3`) and quoted strings (`'MAIL'`), optionally preceded by
//! `DATE` or `TIMESTAMP` as SQL writes them. Each literal is converted to the kind of the
//! column's recorded statistics (a date, a decimal of the column's scale...), so
//! `l_shipdate >= '1994-01-01'` compares days and `l_discount between 0.05 and 0.07` compares
//! unscaled decimals. Keywords are case-insensitive; columns are named as the layout names them.
//! Hand-written (a few dozen lines of recursive descent): no well-kept SQL parser library is this
//! small, and the subset has to stay what statistics can judge.

use chrono::{NaiveDate, NaiveDateTime};
use layout::{StatValue, Table, TimeUnit};
use planner::{CmpOp, Predicate, Term};

/// What is wrong with a predicate, and at which byte of its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("byte {at}: {what}")]
pub struct PredicateError {
    pub at: usize,
    pub what: String,
}

/// Parses `text` against `table` (its columns and their recorded statistics).
pub fn parse(text: &str, table: &Table) -> Result<Predicate, PredicateError> {
    if text.len() > limits::MAX_PREDICATE_BYTES {
        return Err(PredicateError {
            at: 0,
            what: format!(
                "the predicate has {} bytes, past the bound of {} (limits::MAX_PREDICATE_BYTES)",
                text.len(),
                limits::MAX_PREDICATE_BYTES
            ),
        });
    }
    let columns = table
        .columns()
        .map_err(|e| PredicateError { at: 0, what: e })?;
    let mut p = Parser {
        tokens: tokenize(text)?,
        pos: 0,
        end: text.len(),
        names: &columns.columns,
        table,
    };
    let mut terms = Vec::new();
    p.term(&mut terms)?;
    while p.keyword("and") {
        p.term(&mut terms)?;
    }
    if let Some(t) = p.tokens.get(p.pos) {
        return Err(p.err(t.at, format!("expected AND or the end, found `{}`", t.text)));
    }
    Ok(Predicate {
        terms,
        text: text.to_string(),
    })
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Word,
    Number,
    Str,
    Symbol,
}

#[derive(Clone, Debug)]
struct Token {
    kind: Kind,
    text: String,
    at: usize,
}

fn tokenize(text: &str) -> Result<Vec<Token>, PredicateError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let (kind, value) = if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if c == b'\'' {
            let (value, next) = quoted(text, i)?;
            i = next;
            (Kind::Str, value)
        } else if c.is_ascii_digit()
            || c == b'.'
            || (c == b'-'
                && b.get(i + 1)
                    .is_some_and(|d| d.is_ascii_digit() || *d == b'.'))
        {
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            (Kind::Number, text[start..i].to_string())
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'"' {
            if c == b'"' {
                let close = text[i + 1..].find('"').ok_or(PredicateError {
                    at: i,
                    what: "a quoted column name is not closed with `\"`".into(),
                })?;
                i += close + 2;
                (Kind::Word, text[start + 1..i - 1].to_string())
            } else {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.')
                {
                    i += 1;
                }
                (Kind::Word, text[start..i].to_string())
            }
        } else if matches!(c, b'<' | b'>' | b'=' | b'(' | b')' | b',') {
            i += 1;
            if matches!(c, b'<' | b'>' | b'=') && b.get(i) == Some(&b'=') {
                i += 1;
            }
            (Kind::Symbol, text[start..i].to_string())
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            return Err(PredicateError {
                at: i,
                what: format!("unexpected `{ch}`; a predicate is made of column names, comparisons (< <= = >= >), BETWEEN, IN, AND and literals"),
            });
        };
        out.push(Token {
            kind,
            text: value,
            at: start,
        });
    }
    Ok(out)
}

/// A `'...'` string starting at byte `i` (`''` stands for one quote); the value and the byte
/// after the closing quote.
fn quoted(text: &str, i: usize) -> Result<(String, usize), PredicateError> {
    let mut value = String::new();
    let mut chars = text[i + 1..].char_indices();
    while let Some((j, ch)) = chars.next() {
        if ch == '\'' {
            if text[i + 1 + j + 1..].starts_with('\'') {
                value.push('\'');
                chars.next();
                continue;
            }
            return Ok((value, i + 1 + j + 1));
        }
        value.push(ch);
    }
    Err(PredicateError {
        at: i,
        what: "a string is not closed with `'`".into(),
    })
}

struct Parser<'a> {
    tokens: Vec<Token>,
    pos: usize,
    end: usize,
    names: &'a [String],
    table: &'a Table,
}

impl Parser<'_> {
    fn err(&self, at: usize, what: String) -> PredicateError {
        PredicateError { at, what }
    }
    fn here(&self) -> usize {
        self.tokens.get(self.pos).map_or(self.end, |t| t.at)
    }
    fn next(&mut self, expected: &str) -> Result<Token, PredicateError> {
        let t = self.tokens.get(self.pos).cloned().ok_or_else(|| {
            self.err(
                self.end,
                format!("the predicate ends where {expected} was expected"),
            )
        })?;
        self.pos += 1;
        Ok(t)
    }
    fn keyword(&mut self, word: &str) -> bool {
        let hit = self
            .tokens
            .get(self.pos)
            .is_some_and(|t| t.kind == Kind::Word && t.text.eq_ignore_ascii_case(word));
        self.pos += hit as usize;
        hit
    }
    fn symbol(&mut self, s: &str) -> Result<(), PredicateError> {
        let t = self.next(&format!("`{s}`"))?;
        if t.kind == Kind::Symbol && t.text == s {
            Ok(())
        } else {
            Err(self.err(t.at, format!("expected `{s}`, found `{}`", t.text)))
        }
    }

    /// One term, pushed to `out` (BETWEEN as its two comparisons).
    fn term(&mut self, out: &mut Vec<Term>) -> Result<(), PredicateError> {
        let name = self.next("a column name")?;
        if name.kind != Kind::Word {
            return Err(self.err(
                name.at,
                format!("expected a column name, found `{}`", name.text),
            ));
        }
        let column = self.column(&name)?;
        let sample = self.sample(column, &name)?;
        if self.keyword("between") {
            let low = self.literal(&sample, &name)?;
            if !self.keyword("and") {
                return Err(self.err(self.here(), "BETWEEN needs `low AND high`".into()));
            }
            let high = self.literal(&sample, &name)?;
            out.push(Term::Compare {
                column,
                op: CmpOp::Ge,
                value: low,
            });
            out.push(Term::Compare {
                column,
                op: CmpOp::Le,
                value: high,
            });
            return Ok(());
        }
        if self.keyword("in") {
            self.symbol("(")?;
            let mut values = vec![self.literal(&sample, &name)?];
            loop {
                let t = self.next("`,` or `)`")?;
                match t.text.as_str() {
                    "," if t.kind == Kind::Symbol => values.push(self.literal(&sample, &name)?),
                    ")" if t.kind == Kind::Symbol => break,
                    other => {
                        return Err(self.err(t.at, format!("expected `,` or `)`, found `{other}`")))
                    }
                }
            }
            out.push(Term::In { column, values });
            return Ok(());
        }
        let op_token = self.next("a comparison (< <= = >= >)")?;
        let op = match (op_token.kind.clone(), op_token.text.as_str()) {
            (Kind::Symbol, "<") => CmpOp::Lt,
            (Kind::Symbol, "<=") => CmpOp::Le,
            (Kind::Symbol, "=" | "==") => CmpOp::Eq,
            (Kind::Symbol, ">=") => CmpOp::Ge,
            (Kind::Symbol, ">") => CmpOp::Gt,
            (_, other) => {
                return Err(self.err(
                    op_token.at,
                    format!(
                        "expected <, <=, =, >=, >, BETWEEN or IN after `{}`, found `{other}`",
                        name.text
                    ),
                ))
            }
        };
        let value = self.literal(&sample, &name)?;
        out.push(Term::Compare { column, op, value });
        Ok(())
    }

    fn column(&self, name: &Token) -> Result<u32, PredicateError> {
        if let Some(i) = self.names.iter().position(|n| n == &name.text) {
            return Ok(i as u32);
        }
        let close = self
            .names
            .iter()
            .min_by_key(|n| strsim::levenshtein(n, &name.text))
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
        Err(self.err(
            name.at,
            format!("the table has no column `{}`{close}", name.text),
        ))
    }

    /// A recorded min of the column, to type literals by; an error when no row group of the
    /// table has statistics for it (the predicate would then prune nothing, silently).
    fn sample(&self, column: u32, name: &Token) -> Result<StatValue, PredicateError> {
        self.table
            .files
            .iter()
            .flat_map(|f| &f.row_groups)
            .find_map(|rg| rg.stats(column).map(|mm| mm.min.clone()))
            .ok_or_else(|| {
                self.err(
                    name.at,
                    format!(
                        "column `{}` has no recorded min/max in any row group, so the predicate \
                         could prune nothing; record the files with this version of `sim record` \
                         (a generated table has no statistics: use `row_groups:` there)",
                        name.text
                    ),
                )
            })
    }

    /// A literal converted to the kind of `sample`.
    fn literal(&mut self, sample: &StatValue, column: &Token) -> Result<StatValue, PredicateError> {
        let mut t = self.next("a literal")?;
        if t.kind == Kind::Word
            && (t.text.eq_ignore_ascii_case("date") || t.text.eq_ignore_ascii_case("timestamp"))
        {
            t = self.next("a quoted literal")?;
        }
        if !matches!(t.kind, Kind::Number | Kind::Str) {
            return Err(self.err(
                t.at,
                format!(
                    "expected a literal (a number or a 'quoted' string), found `{}`",
                    t.text
                ),
            ));
        }
        convert(&t.text, sample).map_err(|why| {
            self.err(
                t.at,
                format!(
                    "`{}` is not a value of `{}` ({}): {why}",
                    t.text,
                    column.text,
                    sample.kind()
                ),
            )
        })
    }
}

/// `text` as a value of `sample`'s kind.
fn convert(text: &str, sample: &StatValue) -> Result<StatValue, String> {
    let int = || {
        text.parse::<i64>()
            .map_err(|_| "write an integer".to_string())
    };
    Ok(match sample {
        StatValue::Int(_) => StatValue::Int(int()?),
        StatValue::UInt(_) => StatValue::UInt(
            text.parse()
                .map_err(|_| "write a non-negative integer".to_string())?,
        ),
        StatValue::Float { .. } => {
            StatValue::float(text.parse().map_err(|_| "write a number".to_string())?)
        }
        StatValue::Date(_) => {
            let d = NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .map_err(|_| "write a date as 'YYYY-MM-DD'".to_string())?;
            let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).ok_or("the epoch")?;
            StatValue::Date(i32::try_from((d - epoch).num_days()).map_err(|_| "out of range")?)
        }
        StatValue::Decimal { scale, .. } => StatValue::Decimal {
            unscaled: decimal(text, *scale)?,
            scale: *scale,
        },
        StatValue::Timestamp { unit, .. } => StatValue::Timestamp {
            ticks: timestamp(text, *unit)?,
            unit: *unit,
        },
        StatValue::Bytes(_) => StatValue::Bytes(text.as_bytes().into()),
    })
}

/// `text` (`-12.05`) as an unscaled decimal of `scale` digits after the point.
fn decimal(text: &str, scale: u8) -> Result<i128, String> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && frac.is_empty() {
        return Err("write a decimal number".into());
    }
    if frac.len() > scale as usize {
        return Err(format!("the column holds {scale} digits after the point"));
    }
    let padded = format!("{whole}{frac:0<width$}", width = scale as usize);
    let v: i128 = padded
        .parse()
        .map_err(|_| "write a decimal number".to_string())?;
    Ok(if neg { -v } else { v })
}

/// `text` (`'1994-01-01'` or `'1994-01-01 12:00:00[.fff]'`, UTC) as ticks of `unit`.
fn timestamp(text: &str, unit: TimeUnit) -> Result<i64, String> {
    let t = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
        .or_else(|_| {
            NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .map(|d| d.and_hms_opt(0, 0, 0).unwrap_or_default())
        })
        .map_err(|_| "write a timestamp as 'YYYY-MM-DD[ HH:MM:SS[.fff]]'".to_string())?
        .and_utc();
    let ticks = match unit {
        TimeUnit::Millis => Some(t.timestamp_millis()),
        TimeUnit::Micros => Some(t.timestamp_micros()),
        TimeUnit::Nanos => t.timestamp_nanos_opt(),
    };
    ticks.ok_or_else(|| "out of the column's range".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout::{ColumnChunk, FileLayout, MinMax, RowGroup, Schema};

    fn table() -> Table {
        let mm = |a, b| MinMax::new(a, b);
        let rg = RowGroup {
            num_rows: 10,
            outlined_uncompressed_bytes: 0,
            columns: vec![ColumnChunk::default(); 4],
            statistics: vec![
                mm(StatValue::Date(8766), StatValue::Date(8796)),
                mm(
                    StatValue::Decimal {
                        unscaled: 0,
                        scale: 2,
                    },
                    StatValue::Decimal {
                        unscaled: 10,
                        scale: 2,
                    },
                ),
                mm(
                    StatValue::Bytes((*b"AIR").into()),
                    StatValue::Bytes((*b"TRUCK").into()),
                ),
                None,
            ],
        };
        Table {
            schemas: vec![Schema {
                columns: ["l_shipdate", "l_discount", "l_shipmode", "l_comment"]
                    .map(String::from)
                    .to_vec(),
            }],
            files: vec![FileLayout {
                row_groups: vec![rg],
                ..FileLayout::default()
            }],
            ..Table::default()
        }
    }

    #[test]
    fn tpch_q6_parses_to_typed_terms() {
        let p = parse(
            "l_shipdate >= date '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
             and l_discount between 0.05 and 0.07",
            &table(),
        )
        .unwrap();
        assert_eq!(p.terms.len(), 4, "{:?}", p.terms);
        assert_eq!(
            p.terms[0],
            Term::Compare {
                column: 0,
                op: CmpOp::Ge,
                value: StatValue::Date(8766)
            }
        );
        assert_eq!(
            p.terms[3],
            Term::Compare {
                column: 1,
                op: CmpOp::Le,
                value: StatValue::Decimal {
                    unscaled: 7,
                    scale: 2
                }
            }
        );
    }

    #[test]
    fn in_lists_and_quoted_strings() {
        let p = parse("l_shipmode in ('MAIL', 'SHIP', 'it''s')", &table()).unwrap();
        let Term::In { values, .. } = &p.terms[0] else {
            panic!("{:?}", p.terms)
        };
        assert_eq!(values[2], StatValue::Bytes((*b"it's").into()));
    }

    #[test]
    fn errors_say_where_and_what_would_be_right() {
        let t = table();
        let e = |s: &str| parse(s, &t).unwrap_err();
        let x = e("l_shipdat < '1994-01-01'");
        assert!(x.what.contains("did you mean `l_shipdate`"), "{x}");
        let x = e("l_shipdate < '01/01/1994'");
        assert!(x.at == 13 && x.what.contains("'YYYY-MM-DD'"), "{x}");
        let x = e("l_discount < 0.055");
        assert!(x.what.contains("2 digits after the point"), "{x}");
        let x = e("l_comment = 'x'");
        assert!(x.what.contains("no recorded min/max"), "{x}");
        let x = e("l_shipdate < '1994-01-01' or l_discount < 0.01");
        assert!(
            x.what.contains("expected AND or the end, found `or`"),
            "{x}"
        );
        let x = e("l_shipdate <");
        assert!(x.what.contains("ends where a literal"), "{x}");
        let x = e("l_shipdate != '1994-01-01'");
        assert!(x.at == 11, "{x}");
        let x = e("l_discount < .");
        assert!(x.what.contains("write a decimal number"), "{x}");
    }
}
