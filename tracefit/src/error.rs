//! Errors of the crate: whole-trace failures ([`TraceError`]) and the reason one line was
//! refused ([`LineError`]), which the parser counts or, in strict mode, turns into a failure.

use std::fmt;

/// Why one line of a trace could not be read. Carried with its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The line is not valid UTF-8.
    #[error("the line is not valid UTF-8 (byte {valid_up_to} is the first bad one)")]
    NotUtf8 {
        /// Bytes before the first invalid one.
        valid_up_to: usize,
    },
    /// A `[...]` or `"..."` field has no closing bracket or quote: the line was probably cut.
    #[error("field {field} ({name}) opens with `{open}` but the line ends before the closing `{close}` (truncated line?)")]
    Unterminated {
        /// 1-based field number.
        field: usize,
        /// The field's documented name.
        name: &'static str,
        /// The opening delimiter.
        open: char,
        /// The closing delimiter that is missing.
        close: char,
    },
    /// Fewer fields than the format needs.
    #[error(
        "only {found} fields; at least {needed} are needed (up to `{missing}`); truncated line?"
    )]
    TooFewFields {
        /// Fields on the line.
        found: usize,
        /// Fields needed.
        needed: usize,
        /// The last needed field's name.
        missing: &'static str,
    },
    /// A field has a value of the wrong form.
    #[error("field {field} ({name}) is `{value}`; expected {expected}")]
    BadField {
        /// 1-based field (or column) number; 0 for the whole line.
        field: usize,
        /// The field's name.
        name: &'static str,
        /// The value found (cut to 60 characters).
        value: String,
        /// What would be right.
        expected: &'static str,
    },
    /// Times in the wrong order (e.g. `end_ns` before `start_ns`).
    #[error("{what}")]
    Inconsistent {
        /// What is inconsistent, with the values.
        what: String,
    },
}

/// One refused line: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// 1-based line number in the input.
    pub line: u64,
    /// What is wrong with it.
    pub error: LineError,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.error)
    }
}

/// A failure of a whole operation of this crate.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Reading the input failed.
    #[error("reading the trace failed: {0}")]
    Io(#[from] std::io::Error),
    /// Strict mode: the first malformed line fails the parse.
    #[error("malformed trace (strict mode): {0}")]
    Strict(Malformed),
    /// A CSV trace's header (its first line that is not a comment) lacks a column the parser
    /// needs.
    #[error("the header line lacks column `{column}`; a {format}'s header is `{expected}`")]
    MissingColumn {
        /// The missing column.
        column: &'static str,
        /// Which format: "sim trace" or "request log".
        format: &'static str,
        /// The header that format's writer writes.
        expected: &'static str,
    },
    /// A CSV trace's header names a column twice: which one the values are in is not said.
    #[error("the header line names column `{column}` twice; name each column once")]
    DuplicateColumn {
        /// The repeated column.
        column: String,
    },
    /// The trace holds more records than `limits::MAX_TRACE_RECORDS`.
    #[error(
        "line {line}: the trace holds more than {bound} records and run lines \
         (limits::MAX_TRACE_RECORDS); fit or replay it in parts"
    )]
    TooManyRecords {
        /// The line past the bound.
        line: u64,
        /// The bound.
        bound: usize,
    },
    /// The requests span more virtual time than a run may (`limits::MAX_VIRTUAL_TIME_NS`).
    #[error(
        "line {line} {what} {span} after line {first_line} starts: a trace may span at most \
         {bound} (limits::MAX_VIRTUAL_TIME_NS, first start to last start or end); is a \
         time wrong on one of them?"
    )]
    SpanTooLong {
        /// The line that reaches past the bound.
        line: u64,
        /// `starts` or `ends`.
        what: &'static str,
        /// How far after the first start, formatted.
        span: String,
        /// The line with the earliest start.
        first_line: u64,
        /// The bound, formatted.
        bound: String,
    },
    /// The input holds no usable line at all.
    #[error("the trace is empty: {0}")]
    Empty(String),
    /// The trace does not hold enough usable requests for a fit.
    #[error("cannot fit {what}: {why}")]
    Fit {
        /// What could not be fitted.
        what: &'static str,
        /// Why, with counts.
        why: String,
    },
    /// The fitted model does not load as a store model; nothing is written.
    #[error("the fitted model does not load as a store model ({why}); nothing was written")]
    Unloadable {
        /// The loader's error.
        why: String,
    },
    /// Drawing a plot failed.
    #[error("drawing the plot `{path}` failed: {why}")]
    Plot {
        /// The file being drawn.
        path: String,
        /// What went wrong.
        why: String,
    },
    /// Replaying against a store model failed.
    #[error("replay failed: {0}")]
    Replay(String),
}
