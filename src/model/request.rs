//! The analysis view of one client request (`infer.request`, schema version 1).
//!
//! Every field holds what the analysis reads, with the reference's reading
//! rules already applied (docs/artifact.md §6): `Option<f64>` fields are set when
//! the value is a JSON number (non-finite numbers included, so the SLO code can
//! report `non_finite_value`), timestamp fields hold `int_value` of a number,
//! string-form fields hold Python's `str()` of the value.
use std::sync::Arc;

use serde_json::Value;

use crate::py::json as pyjson;
use crate::py::{self, Int};

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
    /// `request_index` is a JSON boolean (counts as an integer in one check).
    pub request_index_is_bool: bool,
    pub stream: bool,
    /// `output_tokens` is a JSON integer (not a float, not a boolean).
    pub output_tokens_is_int: bool,
    pub held_for_slot: bool,
    /// Length of the raw `chunk_interarrival_ms` list (0 when not a list).
    pub chunk_list_len: u32,
    /// Numeric entries of `chunk_interarrival_ms` (finite or not).
    pub chunk_gaps: Box<[f64]>,
    /// String form of `output_token_source` (`unknown` when absent).
    pub output_token_source: Sym,
    /// String form of `arrival_mode` (`closed` when absent).
    pub arrival_mode: Sym,
    /// String form of `prompt_mode` (`repeat` when absent).
    pub prompt_mode: Sym,
    pub prompt_digest: Scalar,
    pub prefix_group: Scalar,
    pub task: Option<Sym>,
    /// The optional numbers, read and set through their accessors
    /// (`ttft_ms()`, `set_ttft_ms`, ...).
    numbers: Numbers,
    /// Exact values the compact slots cannot hold; `None` for every
    /// ordinary request.
    wide: Option<Box<Wide>>,
}

/// What Python keeps of a request's integers and the slots do not: an
/// integer past what its slot holds exactly (an i64 timestamp past 2^63, a
/// token count past 2^53 in an f64 slot), and Python's `int(output_tokens or
/// 0)` where a value is no number (a string, a list, NaN).
#[derive(Debug, Clone, Default, PartialEq)]
struct Wide {
    started_at_ns: Option<Int>,
    ended_at_ns: Option<Int>,
    intended_at_ns: Option<Int>,
    output_tokens: Option<Int>,
    total_tokens: Option<Int>,
    in_flight_at_dispatch: Option<Int>,
    output_tokens_call: Option<Result<Int, String>>,
}

/// Which exact value of [`Wide`] a field sets.
#[derive(Clone, Copy)]
enum WideField {
    Started,
    Ended,
    Intended,
    OutputTokens,
    TotalTokens,
    InFlight,
}

/// A request's optional numbers without `Option`'s padding: the values and
/// a bit per value saying it is present (an absent one holds zero). A run's
/// requests are all held at once; this makes each one about a quarter
/// smaller.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Numbers {
    present: u16,
    ints: [i64; INTS],
    reals: [f64; 9],
}

const INTS: usize = 4;

/// The presence bit of a slot of [`Numbers`]: the ints' first, then the
/// reals'.
macro_rules! slot_bit {
    (ints, $i:expr) => {
        1u16 << $i
    };
    (reals, $i:expr) => {
        1u16 << (INTS + $i)
    };
}

/// Accessors of the optional numbers: `name() -> Option<T>` and
/// `set_name(Option<T>)`, each with its slot (and the slot's presence bit).
macro_rules! optional_numbers {
    ($($(#[$doc:meta])* $name:ident, $set:ident: $ty:ty = $array:ident[$i:expr];)*) => {
        impl Request {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Option<$ty> {
                    (self.numbers.present & slot_bit!($array, $i) != 0).then(|| self.numbers.$array[$i])
                }

                pub fn $set(&mut self, value: Option<$ty>) {
                    match value {
                        Some(x) => {
                            self.numbers.$array[$i] = x;
                            self.numbers.present |= slot_bit!($array, $i);
                        }
                        None => {
                            self.numbers.$array[$i] = <$ty>::default();
                            self.numbers.present &= !slot_bit!($array, $i);
                        }
                    }
                }
            )*
        }
    };
}

optional_numbers! {
    /// `request_index` when it is a JSON integer (booleans excluded).
    request_index, set_request_index: i64 = ints[0];
    started_at_ns, set_started_at_ns: i64 = ints[1];
    ended_at_ns, set_ended_at_ns: i64 = ints[2];
    intended_at_ns, set_intended_at_ns: i64 = ints[3];
    e2e_latency_ms, set_e2e_latency_ms: f64 = reals[0];
    ttft_ms, set_ttft_ms: f64 = reals[1];
    first_chunk_latency_ms, set_first_chunk_latency_ms: f64 = reals[2];
    dispatch_lag_ms, set_dispatch_lag_ms: f64 = reals[3];
    prompt_tokens, set_prompt_tokens: f64 = reals[4];
    output_tokens, set_output_tokens: f64 = reals[5];
    total_tokens, set_total_tokens: f64 = reals[6];
    in_flight_at_dispatch, set_in_flight_at_dispatch: f64 = reals[7];
    shared_prefix_tokens, set_shared_prefix_tokens: f64 = reals[8];
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

    /// [`Request::empty`] with its string-form fields given (those with a
    /// default other than absent), every other field absent: what a reader
    /// filling many requests starts each from, its symbols shared, without
    /// making defaults only to replace them.
    pub fn empty_with(
        seq: i64,
        case_key: Sym,
        status: Sym,
        output_token_source: Sym,
        arrival_mode: Sym,
        prompt_mode: Sym,
    ) -> Self {
        Request {
            seq,
            case_key,
            status,
            phase: None,
            session_id: Scalar::Null,
            request_id: Value::Null,
            x_request_id: Value::Null,
            request_index_is_bool: false,
            stream: false,
            output_tokens_is_int: false,
            held_for_slot: false,
            chunk_list_len: 0,
            chunk_gaps: Box::default(),
            output_token_source,
            arrival_mode,
            prompt_mode,
            prompt_digest: Scalar::Null,
            prefix_group: Scalar::Null,
            task: None,
            numbers: Numbers::default(),
            wide: None,
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
                // Past i64 it saturates: such an index is out of range either way.
                self.set_request_index(if pyjson::is_int(v) {
                    Some(pyjson::int_value(v))
                } else {
                    None
                });
                self.request_index_is_bool = v.is_boolean();
            }
            "started_at_ns" => {
                self.set_started_at_ns(ns());
                self.keep_exact(WideField::Started, v, i64_exact);
            }
            "ended_at_ns" => {
                self.set_ended_at_ns(ns());
                self.keep_exact(WideField::Ended, v, i64_exact);
            }
            "intended_at_ns" => {
                self.set_intended_at_ns(ns());
                self.keep_exact(WideField::Intended, v, i64_exact);
            }
            "e2e_latency_ms" => self.set_e2e_latency_ms(num()),
            "ttft_ms" => self.set_ttft_ms(num()),
            "first_chunk_latency_ms" => self.set_first_chunk_latency_ms(num()),
            "dispatch_lag_ms" => self.set_dispatch_lag_ms(num()),
            "chunk_interarrival_ms" => {
                let items = v.as_array().map_or(&[][..], Vec::as_slice);
                self.chunk_list_len = u32::try_from(items.len()).unwrap_or(u32::MAX);
                self.chunk_gaps = items.iter().filter_map(pyjson::number).collect();
            }
            "stream" => self.stream = pyjson::truthy(v),
            "prompt_tokens" => self.set_prompt_tokens(num()),
            "output_tokens" => {
                self.set_output_tokens(num());
                self.output_tokens_is_int = pyjson::is_int(v);
                self.keep_exact(WideField::OutputTokens, v, f64_exact);
                self.keep_output_tokens_call(v);
            }
            "total_tokens" => {
                self.set_total_tokens(num());
                self.keep_exact(WideField::TotalTokens, v, f64_exact);
            }
            "output_token_source" => self.output_token_source = pyjson::str_form(v).into(),
            "arrival_mode" => self.arrival_mode = pyjson::str_form(v).into(),
            "held_for_slot" => self.held_for_slot = pyjson::truthy(v),
            "in_flight_at_dispatch" => {
                self.set_in_flight_at_dispatch(num());
                self.keep_exact(WideField::InFlight, v, f64_exact);
            }
            "prompt_mode" => self.prompt_mode = pyjson::str_form(v).into(),
            "prompt_digest" => self.prompt_digest = Scalar::of(v),
            "prefix_group" => self.prefix_group = Scalar::of(v),
            "shared_prefix_tokens" => self.set_shared_prefix_tokens(num()),
            "task" => self.task = v.as_str().map(Sym::from),
            _ => {}
        }
    }

    fn wide_mut(&mut self) -> &mut Wide {
        self.wide.get_or_insert_with(Box::default)
    }

    fn wide_slot(&mut self, field: WideField) -> &mut Option<Int> {
        let w = self.wide_mut();
        match field {
            WideField::Started => &mut w.started_at_ns,
            WideField::Ended => &mut w.ended_at_ns,
            WideField::Intended => &mut w.intended_at_ns,
            WideField::OutputTokens => &mut w.output_tokens,
            WideField::TotalTokens => &mut w.total_tokens,
            WideField::InFlight => &mut w.in_flight_at_dispatch,
        }
    }

    /// Keeps `int_value(v)` exactly when the field's slot does not hold it
    /// (`fits` says whether it does); clears an earlier exact value.
    fn keep_exact(&mut self, field: WideField, v: &Value, fits: fn(&Value) -> bool) {
        if pyjson::is_number(v) && !fits(v) {
            *self.wide_slot(field) = Some(py::int::int_value(v));
            return;
        }
        if self.wide.is_some() {
            *self.wide_slot(field) = None;
        }
    }

    /// Keeps Python's `int(output_tokens or 0)` where it is not the
    /// slot's `int_value` (a value that is no JSON number).
    fn keep_output_tokens_call(&mut self, v: &Value) {
        let call = match v {
            Value::Number(_) | Value::Null => None,
            _ if pyjson::big_int(v).is_some() => None,
            _ => Some(py::int_call(v)),
        };
        if call.is_some() || self.wide.is_some() {
            self.wide_mut().output_tokens_call = call;
        }
    }

    fn exact(&self, pick: fn(&Wide) -> &Option<Int>) -> Option<&Int> {
        self.wide.as_deref().and_then(|w| pick(w).as_ref())
    }

    /// `started_at_ns` exactly, when it is a number.
    pub fn started_at(&self) -> Option<Int> {
        exact_or(self.exact(|w| &w.started_at_ns), self.started_at_ns())
    }

    /// `ended_at_ns` exactly, when it is a number.
    pub fn ended_at(&self) -> Option<Int> {
        exact_or(self.exact(|w| &w.ended_at_ns), self.ended_at_ns())
    }

    /// `intended_at_ns` exactly, when it is a number.
    pub fn intended_at(&self) -> Option<Int> {
        exact_or(self.exact(|w| &w.intended_at_ns), self.intended_at_ns())
    }

    /// Whether any timestamp lies past an i64 (the spans then need the exact
    /// values).
    pub fn has_wide_times(&self) -> bool {
        self.wide.as_deref().is_some_and(|w| {
            w.started_at_ns.is_some() || w.ended_at_ns.is_some() || w.intended_at_ns.is_some()
        })
    }

    /// `int_value(output_tokens)`, exactly.
    pub fn output_tokens_int(&self) -> Int {
        real_int(self.exact(|w| &w.output_tokens), self.output_tokens())
    }

    /// `int_value(total_tokens)`, exactly.
    pub fn total_tokens_int(&self) -> Int {
        real_int(self.exact(|w| &w.total_tokens), self.total_tokens())
    }

    /// [`Request::output_tokens_int`] as a term of an [`IntSum`](crate::py::int::IntSum):
    /// an i64 where it is one (without making an `Int`).
    #[inline]
    pub fn output_tokens_term(&self) -> Result<i64, Int> {
        real_term(self.exact(|w| &w.output_tokens), self.output_tokens())
    }

    /// [`Request::total_tokens_int`] as a term of an [`IntSum`](crate::py::int::IntSum).
    #[inline]
    pub fn total_tokens_term(&self) -> Result<i64, Int> {
        real_term(self.exact(|w| &w.total_tokens), self.total_tokens())
    }

    /// `int_value(in_flight_at_dispatch)` when it is a finite number.
    pub fn in_flight_int(&self) -> Option<Int> {
        finite(self.in_flight_at_dispatch())?;
        Some(real_int(
            self.exact(|w| &w.in_flight_at_dispatch),
            self.in_flight_at_dispatch(),
        ))
    }

    /// Python's `int(output_tokens or 0)`: the reference's tokens per
    /// chunk; an error where Python raises one.
    pub fn output_tokens_call(&self) -> Result<Int, String> {
        match self
            .wide
            .as_deref()
            .and_then(|w| w.output_tokens_call.clone())
        {
            Some(call) => call,
            None => Ok(self.output_tokens_int()),
        }
    }

    /// The error Python's `int(output_tokens or 0)` raises, if it raises
    /// one: what [`Request::output_tokens_call`] checks, without making the
    /// integer.
    pub fn output_tokens_call_error(&self) -> Option<&str> {
        match self
            .wide
            .as_deref()
            .and_then(|w| w.output_tokens_call.as_ref())
        {
            Some(Err(e)) => Some(e),
            _ => None,
        }
    }

    pub fn is_measured(&self) -> bool {
        self.phase.as_deref() == Some("measured")
    }

    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

/// Milliseconds from `start` to `end` (nanoseconds): subtracted exactly,
/// then divided, as Python's integers do (the timestamps exceed 2^53). The
/// difference converts in hardware when it fits in an i64 (always, for
/// real timestamps); an i128 converts in software, about ten times slower.
pub fn span_ms(start: i64, end: i64) -> f64 {
    let span = match end.checked_sub(start) {
        Some(d) => d as f64,
        None => (i128::from(end) - i128::from(start)) as f64,
    };
    span / 1_000_000.0
}

/// An i64 slot holds `int_value` exactly: an integer within i64, a float
/// whose truncation is.
fn i64_exact(v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            n.is_i64() || (n.is_f64() && n.as_f64().is_some_and(|f| f.abs() < 9.2e18))
        }
        _ => false,
    }
}

/// An f64 slot holds `int_value` exactly: a float (truncated when read), or
/// an integer within 2^53.
fn f64_exact(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64() || n.as_i64().is_some_and(|i| i.unsigned_abs() <= 1 << 53),
        _ => false,
    }
}

fn exact_or(exact: Option<&Int>, slot: Option<i64>) -> Option<Int> {
    match exact {
        Some(i) => Some(i.clone()),
        None => slot.map(Int::from),
    }
}

/// `int_value` of a real slot (0 when absent or not finite), or the exact
/// value kept beside it.
fn real_int(exact: Option<&Int>, slot: Option<f64>) -> Int {
    match exact {
        Some(i) => i.clone(),
        None => slot.and_then(Int::from_f64).unwrap_or_default(),
    }
}

/// [`real_int`] as an i64 where it is one (an absent slot 0, one within
/// i64 truncated as `Int::from_f64` truncates it), and whole otherwise (an
/// exact value kept beside the slot, a NaN, a slot past i64).
#[inline]
fn real_term(exact: Option<&Int>, slot: Option<f64>) -> Result<i64, Int> {
    match (exact, slot) {
        (None, None) => Ok(0),
        (None, Some(f)) => Int::i64_of_f64(f).ok_or_else(|| real_int(None, slot)),
        (Some(_), _) => Err(real_int(exact, slot)),
    }
}

/// Milliseconds from `start` to `end`, Python's `(end - start) / 1_000_000.0`
/// on integers of any size: the exact difference, rounded to a float, then
/// divided. `None` where Python's float() of the difference overflows.
pub fn span_ms_exact(start: &Int, end: &Int) -> Option<f64> {
    end.sub(start).to_f64().map(|d| d / 1_000_000.0)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A token count read as a sum's term is the exact integer `real_int`
    /// makes of it, on every kind of slot: absent, NaN, infinite, past
    /// i64 either way, at its edges, fractional, and an exact value kept
    /// beside the slot.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_term_is_the_integer_real_int_makes() {
        let edge = 9_223_372_036_854_775_808.0; // 2^63
        let slots = [
            None,
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            Some(edge),
            Some(-edge),
            Some(edge * 4.0),
            Some(-edge * 4.0),
            Some(9_223_372_036_854_774_784.0), // the largest f64 below 2^63
            Some(-9_223_372_036_854_774_784.0),
            Some(0.0),
            Some(-0.0),
            Some(-3.7),
            Some(3.7),
            Some(4096.0),
            Some(1e300),
        ];
        let exacts = [
            None,
            Some(Int::from(7i64)),
            Some(Int::from(i64::MAX).add(&Int::from(1i64))),
        ];
        for exact in &exacts {
            for slot in slots {
                let term = match real_term(exact.as_ref(), slot) {
                    Ok(v) => Int::from(v),
                    Err(big) => big,
                };
                assert_eq!(term, real_int(exact.as_ref(), slot), "{exact:?} {slot:?}");
            }
        }
        // Read off requests, the way the sums read them.
        let r = Request::from_record(
            0,
            json!({"output_tokens": 1e20, "total_tokens": 12.9})
                .as_object()
                .unwrap(),
        );
        assert_eq!(
            r.output_tokens_term(),
            Err(Int::parse_literal("100000000000000000000").unwrap())
        );
        assert_eq!(r.total_tokens_term(), Ok(12));
    }

    #[test]
    fn optional_numbers_read_back_as_set_and_absent_ones_compare_equal() {
        let mut r = Request::empty(1);
        assert_eq!((r.ttft_ms(), r.started_at_ns()), (None, None));
        r.set_ttft_ms(Some(-0.0));
        r.set_started_at_ns(Some(i64::MIN));
        r.set_shared_prefix_tokens(Some(f64::INFINITY));
        assert_eq!(r.ttft_ms().map(f64::to_bits), Some((-0.0f64).to_bits()));
        assert_eq!(r.started_at_ns(), Some(i64::MIN));
        assert_eq!(r.shared_prefix_tokens(), Some(f64::INFINITY));
        // Neighbouring slots are untouched.
        assert_eq!((r.e2e_latency_ms(), r.ended_at_ns()), (None, None));
        r.set_ttft_ms(None);
        r.set_started_at_ns(None);
        r.set_shared_prefix_tokens(None);
        assert_eq!(r, Request::empty(1), "a cleared value is absent again");
        // A present zero is not an absent value.
        r.set_request_index(Some(0));
        assert_ne!(r, Request::empty(1));
    }

    #[test]
    fn a_record_sets_every_number_and_the_chunk_list() {
        let rec = json!({
            "request_index": 3, "started_at_ns": 10, "ended_at_ns": 20, "intended_at_ns": 5,
            "e2e_latency_ms": 1.5, "ttft_ms": 0.5, "first_chunk_latency_ms": 0.25,
            "dispatch_lag_ms": 0.125, "prompt_tokens": 32, "output_tokens": 4,
            "total_tokens": 36, "in_flight_at_dispatch": 2, "shared_prefix_tokens": 8,
            "chunk_interarrival_ms": [0.5, "x", 1.5],
        });
        let r = Request::from_record(7, rec.as_object().expect("object"));
        let ints = [
            r.request_index(),
            r.started_at_ns(),
            r.ended_at_ns(),
            r.intended_at_ns(),
        ];
        assert_eq!(ints, [Some(3), Some(10), Some(20), Some(5)]);
        let reals = [
            r.e2e_latency_ms(),
            r.ttft_ms(),
            r.first_chunk_latency_ms(),
            r.dispatch_lag_ms(),
            r.prompt_tokens(),
            r.output_tokens(),
            r.total_tokens(),
            r.in_flight_at_dispatch(),
            r.shared_prefix_tokens(),
        ];
        let want = [1.5, 0.5, 0.25, 0.125, 32.0, 4.0, 36.0, 2.0, 8.0].map(Some);
        assert_eq!(reals, want);
        assert!(r.output_tokens_is_int);
        assert_eq!((&*r.chunk_gaps, r.chunk_list_len), (&[0.5, 1.5][..], 3));
        // Booleans are no numbers; a later non-list clears the chunks.
        let mut r = r;
        r.apply("ttft_ms", &json!(true));
        r.apply("chunk_interarrival_ms", &json!(null));
        assert_eq!(
            (r.ttft_ms(), r.chunk_gaps.len(), r.chunk_list_len),
            (None, 0, 0)
        );
    }

    /// The fast conversion gives the exact difference's rounding, overflow
    /// of an i64 included.
    #[test]
    fn spans_are_the_exact_difference_rounded() {
        let exact = |a: i64, b: i64| (i128::from(b) - i128::from(a)) as f64 / 1_000_000.0;
        let t = 1_795_961_627_234_988_253i64;
        let points = [
            0,
            1,
            -1,
            t,
            t + 7_614_937,
            -t,
            i64::MAX,
            i64::MIN,
            i64::MAX - 3,
            i64::MIN + 5,
            (1 << 53) + 1,
        ];
        for a in points {
            for b in points {
                assert_eq!(span_ms(a, b).to_bits(), exact(a, b).to_bits(), "{a} -> {b}");
            }
        }
    }

    #[test]
    fn a_request_stays_compact() {
        // Every request of a run is held at once (300,000 in the benchmark).
        assert!(
            std::mem::size_of::<Request>() <= 320,
            "{}",
            std::mem::size_of::<Request>()
        );
    }
}
