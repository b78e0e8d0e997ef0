//! The analysis view of one client request (`infer.request`, schema version 1).
//!
//! Every field holds what the analysis reads, with the reference's reading
//! rules already applied (artifact.md §6): `Option<f64>` fields are set when
//! the value is a JSON number (non-finite numbers included, so the SLO code can
//! report `non_finite_value`), timestamp fields hold `int_value` of a number,
//! string-form fields hold Python's `str()` of the value.
use std::sync::Arc;

use serde_json::Value;

use crate::pyjson;

/// A shared, immutable string: the values that repeat across a run's
/// requests (case ids, statuses, modes) are stored once, not per request.
/// One pointer wide (the length lives with the text), so a request's seven
/// symbols and three scalars cost 80 bytes less than fat `Arc<str>`s would.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sym(Arc<Box<str>>);

impl Sym {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Sym {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Sym {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Sym {
    fn from(s: &str) -> Self {
        Sym(Arc::new(Box::from(s)))
    }
}

impl From<String> for Sym {
    fn from(s: String) -> Self {
        Sym(Arc::new(s.into_boxed_str()))
    }
}

impl From<Sym> for String {
    fn from(s: Sym) -> Self {
        s.as_str().to_owned()
    }
}

impl PartialEq<str> for Sym {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Sym {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Sym {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl serde::Serialize for Sym {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// A JSON value compared as Python compares them (`1 == 1.0 == True`), kept
/// small: strings are shared [`Sym`]s, anything else its canonical text.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scalar {
    #[default]
    Null,
    Str(Sym),
    Other(Sym),
}

impl Scalar {
    pub fn of(v: &Value) -> Self {
        match v {
            Value::Null => Scalar::Null,
            Value::String(s) => Scalar::Str(Sym::from(s.as_str())),
            other => Scalar::Other(Sym::from(canonical(other))),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Scalar::Null)
    }
}

/// The canonical text of a non-string JSON value under Python equality:
/// numbers equal as Python compares them (and booleans as 0/1) share one text.
pub fn canonical(v: &Value) -> String {
    match v {
        Value::Bool(b) => format!("n:{}", i64::from(*b)),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => format!("n:{}", f as i64),
            _ => format!("n:{n}"),
        },
        Value::String(s) => format!("s:{s}"),
        other => format!("j:{other}"),
    }
}

/// Hands out one [`Sym`] per distinct string.
#[derive(Debug, Default)]
pub struct Interner(std::collections::HashMap<Box<str>, Sym, foldhash::fast::RandomState>);

impl Interner {
    pub fn get(&mut self, s: &str) -> Sym {
        if let Some(sym) = self.0.get(s) {
            return sym.clone();
        }
        let sym = Sym::from(s);
        self.0.insert(s.into(), sym.clone());
        sym
    }
}

/// One client request as the analysis reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Request {
    /// Position among the file's decoded records.
    pub seq: i64,
    /// String form of `case_id`; `unknown` when the key is absent.
    pub case_key: Sym,
    /// String form of `status` (`None` when missing or null).
    pub status: Sym,
    /// `phase` when it is a string.
    pub phase: Option<Sym>,
    /// Raw identity values (JSON), for duplicate counting and cohort checks.
    pub session_id: Scalar,
    pub request_id: Value,
    pub x_request_id: Value,
    /// `request_index` when it is a JSON integer (booleans excluded).
    pub request_index: Option<i64>,
    /// `request_index` is a JSON boolean (counts as an integer in one check).
    pub request_index_is_bool: bool,
    pub started_at_ns: Option<i64>,
    pub ended_at_ns: Option<i64>,
    pub intended_at_ns: Option<i64>,
    pub e2e_latency_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
    pub first_chunk_latency_ms: Option<f64>,
    pub dispatch_lag_ms: Option<f64>,
    /// Numeric entries of `chunk_interarrival_ms` (finite or not).
    pub chunk_gaps: Vec<f64>,
    /// Length of the raw `chunk_interarrival_ms` list (0 when not a list).
    pub chunk_list_len: usize,
    pub stream: bool,
    pub prompt_tokens: Option<f64>,
    pub output_tokens: Option<f64>,
    /// `output_tokens` is a JSON integer (not a float, not a boolean).
    pub output_tokens_is_int: bool,
    pub total_tokens: Option<f64>,
    /// String form of `output_token_source` (`unknown` when absent).
    pub output_token_source: Sym,
    /// String form of `arrival_mode` (`closed` when absent).
    pub arrival_mode: Sym,
    pub held_for_slot: bool,
    pub in_flight_at_dispatch: Option<f64>,
    /// String form of `prompt_mode` (`repeat` when absent).
    pub prompt_mode: Sym,
    pub prompt_digest: Scalar,
    pub prefix_group: Scalar,
    pub shared_prefix_tokens: Option<f64>,
    pub task: Option<Sym>,
}

impl Request {
    /// A request whose fields are all absent.
    pub fn empty(seq: i64) -> Self {
        Request {
            seq,
            case_key: "unknown".into(),
            status: "None".into(),
            output_token_source: "unknown".into(),
            arrival_mode: "closed".into(),
            prompt_mode: "repeat".into(),
            ..Default::default()
        }
    }

    /// Builds the view from a decoded record.
    pub fn from_record(seq: i64, record: &serde_json::Map<String, Value>) -> Self {
        let mut r = Request::empty(seq);
        for (k, v) in record {
            r.apply(k, v);
        }
        r
    }

    /// Applies one field of the record (absent fields keep their defaults).
    pub fn apply(&mut self, key: &str, v: &Value) {
        let num = || pyjson::real(v).filter(|_| !v.is_boolean());
        let ns = || {
            if pyjson::is_number(v) {
                Some(pyjson::int_value(v))
            } else {
                None
            }
        };
        match key {
            "case_id" => self.case_key = pyjson::str_form(v).into(),
            "status" => self.status = pyjson::str_form(v).into(),
            "phase" => self.phase = v.as_str().map(Sym::from),
            "session_id" => self.session_id = Scalar::of(v),
            "request_id" => self.request_id = v.clone(),
            "x_request_id" => self.x_request_id = v.clone(),
            "request_index" => {
                self.request_index = if pyjson::is_int(v) { v.as_i64() } else { None };
                self.request_index_is_bool = v.is_boolean();
            }
            "started_at_ns" => self.started_at_ns = ns(),
            "ended_at_ns" => self.ended_at_ns = ns(),
            "intended_at_ns" => self.intended_at_ns = ns(),
            "e2e_latency_ms" => self.e2e_latency_ms = num(),
            "ttft_ms" => self.ttft_ms = num(),
            "first_chunk_latency_ms" => self.first_chunk_latency_ms = num(),
            "dispatch_lag_ms" => self.dispatch_lag_ms = num(),
            "chunk_interarrival_ms" => {
                self.chunk_gaps.clear();
                self.chunk_list_len = 0;
                if let Value::Array(items) = v {
                    self.chunk_list_len = items.len();
                    self.chunk_gaps
                        .extend(items.iter().filter_map(pyjson::number));
                }
            }
            "stream" => self.stream = pyjson::truthy(v),
            "prompt_tokens" => self.prompt_tokens = num(),
            "output_tokens" => {
                self.output_tokens = num();
                self.output_tokens_is_int = pyjson::is_int(v);
            }
            "total_tokens" => self.total_tokens = num(),
            "output_token_source" => self.output_token_source = pyjson::str_form(v).into(),
            "arrival_mode" => self.arrival_mode = pyjson::str_form(v).into(),
            "held_for_slot" => self.held_for_slot = pyjson::truthy(v),
            "in_flight_at_dispatch" => self.in_flight_at_dispatch = num(),
            "prompt_mode" => self.prompt_mode = pyjson::str_form(v).into(),
            "prompt_digest" => self.prompt_digest = Scalar::of(v),
            "prefix_group" => self.prefix_group = Scalar::of(v),
            "shared_prefix_tokens" => self.shared_prefix_tokens = num(),
            "task" => self.task = v.as_str().map(Sym::from),
            _ => {}
        }
    }

    pub fn is_measured(&self) -> bool {
        self.phase.as_deref() == Some("measured")
    }

    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

/// `is_number` over an optional real: present and finite.
pub fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

/// `int_value` of an optional real: truncated toward zero, 0 when not a finite number.
pub fn int_of(v: Option<f64>) -> i64 {
    match v {
        Some(x) if x.is_finite() => x.trunc() as i64,
        _ => 0,
    }
}

/// One client-local system sample (`infer.system_sample`), as analysis reads it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SystemSample {
    pub seq: i64,
    pub timestamp_ns: Option<i64>,
    pub device_used_bytes: Option<i64>,
    pub process_rss_bytes: Option<i64>,
}

impl SystemSample {
    pub fn apply(&mut self, key: &str, v: &Value) {
        let ns = if pyjson::is_number(v) {
            Some(pyjson::int_value(v))
        } else {
            None
        };
        match key {
            "timestamp_ns" => self.timestamp_ns = ns,
            "device_used_bytes" => self.device_used_bytes = ns,
            "process_rss_bytes" => self.process_rss_bytes = ns,
            _ => {}
        }
    }
}
