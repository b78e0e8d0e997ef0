//! Record types as the analysis reads them. No I/O, no SQLite, no clap.
pub mod identity;
pub mod request;
pub mod row;
pub mod telemetry;
pub mod transport;

pub use request::{Interner, Request, Scalar, Sym, SystemSample};

use serde_json::Value;

/// Everything the analysis needs of one stored run, in file order.
#[derive(Debug, Default, Clone)]
pub struct RunData {
    pub run_id: String,
    /// Every client `infer.request` record (any phase), in file order.
    pub requests: Vec<Request>,
    /// Every `infer.system_sample`, in file order.
    pub samples: Vec<SystemSample>,
    /// Every other record, decoded (contexts expanded), with its position.
    pub records: Vec<(i64, Value)>,
    /// The `infer.dispatch` records, decoded, in file order: loaded only when
    /// the run has execution-hook evidence (they feed that block alone).
    pub dispatches: Vec<(i64, Value)>,
    /// The execution import's bulk records the database holds as fact lines
    /// (`execution_facts`, src/analysis/execution/fact.rs), in segments of
    /// newline-ended lines, and the contexts the lines name (empty without
    /// lines). The records without a line are among `records`.
    pub execution_facts: Vec<String>,
    pub execution_contexts: std::collections::BTreeMap<String, Value>,
    /// What the ingest aggregated of those lines (migrations/0013), read
    /// instead of them when it applies (src/db/execution.rs): the block's
    /// figures and the hook IDs and step starts as newline-ended text.
    pub execution_aggregate: Option<Value>,
}

impl RunData {
    /// Decoded records of one event type, in file order.
    pub fn of_type<'a>(&'a self, event_type: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.records
            .iter()
            .filter(move |(_, r)| r.get("event_type").and_then(Value::as_str) == Some(event_type))
            .map(|(_, r)| r)
    }

    /// The measured requests (phase == "measured"), in file order.
    pub fn measured(&self) -> impl Iterator<Item = &Request> {
        self.requests.iter().filter(|r| r.is_measured())
    }
}
