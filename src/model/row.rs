//! A line of an artifact encoded for its database table: the column values
//! ([`Field`]), the row ([`Row`]) and what a line became ([`Prepared`]).
//! Plain data shared by the encoder (`db::encode`), the ingest that feeds it
//! and the writer that stores it; binding to SQLite is the database's part.
use serde_json::Value;

/// Run-level facts a line contributes (from its `infer.session` or
/// `infer.artifact` record).
#[derive(Debug, Default, Clone)]
pub struct LineFacts {
    pub is_session: bool,
    pub is_request: bool,
    pub session_id: Option<String>,
    pub timestamp_ns: Option<i64>,
    pub model: Option<String>,
    pub endpoint: Option<String>,
    /// `context.run_id` of an embedded (non-transport) `infer.artifact`.
    pub artifact_run_id: Option<String>,
}

/// A column value ready to bind. Text is a span of the line when the line
/// spells it without escapes, so a typical row allocates nothing per field.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    Null,
    Int(i64),
    Real(f64),
    /// Bytes `start..end` of the row's line.
    Span(u32, u32),
    Text(String),
    Blob(Vec<u8>),
}

/// A line encoded for its table.
#[derive(Debug)]
pub struct Row {
    /// The line the spans point into (empty for rows built from a value).
    pub line: String,
    /// Index into the database's table layouts (`db::tables::TABLES`), or None for the generic `records` table.
    pub table: Option<usize>,
    /// `records` table: the event type and the body (the record as JSON).
    pub event_type: Option<String>,
    pub body: Field,
    /// `requests`: the derived case and status keys.
    pub derived: Option<(Field, Field)>,
    pub schema_version: Field,
    pub fields: Vec<Field>,
    pub nulls: i64,
    pub extra: Option<String>,
    pub facts: LineFacts,
}

/// What one line became.
#[derive(Debug)]
pub enum Prepared {
    Blank,
    Row(Box<Row>),
    /// The general path: a transport row, or anything the fast path declines.
    Value(Value),
    /// Invalid input; the message the reference gives (without the line prefix).
    Error(String),
}
