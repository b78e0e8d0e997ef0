//! How records map onto the typed tables: which JSON key goes to which column,
//! and the rule that keeps ingest lossless.
//!
//! A column holds a field's value only when the column gives the same JSON back
//! (a string in a TEXT column, an integer in an INTEGER column, ...). Every other
//! key of the record (no column, a value of another type, `null`) goes to the
//! row's `extra` JSON object, which wins when the record is rebuilt. So a record
//! always comes back equal to the one read (key order and number spelling aside).
use rusqlite::types::Value as Sql;
use serde_json::{Map, Value};

use crate::py::json as pyjson;
use crate::sql::{self, Query};

/// The storage class of a field column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    /// TEXT: a JSON string.
    Text,
    /// INTEGER: a JSON integer within i64.
    Int,
    /// ANY: a JSON integer of any size, as an SQLite integer within i64 and
    /// as its decimal text past it (migrations/0010_wide_integers.sql).
    /// Nothing but such an integer is stored in it, so a text is one.
    AnyInt,
    /// REAL: a finite JSON number.
    Real,
    /// INTEGER 0/1: a JSON boolean.
    Bool,
    /// TEXT: any non-null JSON value, serialised.
    Json,
    /// BLOB of little-endian f64: a list of finite numbers.
    RealList,
}

/// A typed table and the record type stored in it.
#[derive(Debug)]
pub struct TableSpec {
    pub table: &'static str,
    pub event_type: &'static str,
    /// Field columns, in the order of the insert parameters that follow the
    /// fixed leading ones (run_id, seq, [file_id], [derived], schema_version).
    pub fields: &'static [(&'static str, Col)],
    pub insert: Query,
    /// Selects `seq, schema_version, <fields>, extra` for one run.
    pub load: Query,
}

// @generated from the column lists of migrations/0001_initial.sql (and 0012's); keep in step with queries/.
pub static TABLES: &[TableSpec] = &[
    TableSpec {
        table: "sessions",
        event_type: "infer.session",
        fields: &[
            ("session_id", Col::Text),
            ("status", Col::Text),
            ("timestamp_ns", Col::Int),
            ("config", Col::Json),
            ("summary", Col::Json),
        ],
        insert: sql::INSERT_SESSIONS,
        load: sql::LOAD_SESSIONS,
    },
    TableSpec {
        table: "workloads",
        event_type: "infer.workload",
        fields: &[
            ("session_id", Col::Text),
            ("workload_digest", Col::Text),
            ("spec_digest", Col::Text),
            ("seed", Col::Int),
            ("task", Col::Text),
            ("engine", Col::Text),
            ("generator", Col::Json),
            ("prompts", Col::Json),
            ("warmup", Col::Json),
            ("decoding", Col::Json),
            ("tokenizer", Col::Json),
            ("chat_template", Col::Json),
            ("cache", Col::Json),
            ("cases", Col::Json),
            ("measurement", Col::Json),
        ],
        insert: sql::INSERT_WORKLOADS,
        load: sql::LOAD_WORKLOADS,
    },
    TableSpec {
        table: "phase_windows",
        event_type: "infer.phase_window",
        fields: &[
            ("session_id", Col::Text),
            ("case_id", Col::Text),
            ("phase", Col::Text),
            ("arrival_mode", Col::Text),
            ("started_at_ns", Col::AnyInt),
            ("window_ended_at_ns", Col::AnyInt),
            ("drained_at_ns", Col::AnyInt),
            ("drain_timeout_seconds", Col::Real),
            ("scheduled_arrivals", Col::AnyInt),
            ("scheduled_endpoint_offset_ns", Col::AnyInt),
            ("stopped_early", Col::Bool),
            ("prompts_digest", Col::Text),
            ("abandoned_requests", Col::Json),
        ],
        insert: sql::INSERT_PHASE_WINDOWS,
        load: sql::LOAD_PHASE_WINDOWS,
    },
    TableSpec {
        table: "cache_states",
        event_type: "infer.cache_state",
        fields: &[
            ("session_id", Col::Text),
            ("case_id", Col::Text),
            ("requested", Col::Text),
            ("attempted", Col::Bool),
            ("acknowledged", Col::Bool),
            ("verified", Col::Text),
            ("run_kind", Col::Text),
            ("reason", Col::Text),
            ("reset", Col::Json),
        ],
        insert: sql::INSERT_CACHE_STATES,
        load: sql::LOAD_CACHE_STATES,
    },
    TableSpec {
        table: "requests",
        event_type: "infer.request",
        fields: &[
            ("session_id", Col::Text),
            ("request_id", Col::Text),
            ("x_request_id", Col::Text),
            ("case_id", Col::Text),
            ("phase", Col::Text),
            ("status", Col::Text),
            ("request_index", Col::AnyInt),
            ("started_at_ns", Col::AnyInt),
            ("ended_at_ns", Col::AnyInt),
            ("intended_at_ns", Col::AnyInt),
            ("timestamp_ns", Col::AnyInt),
            ("e2e_latency_ms", Col::Real),
            ("ttft_ms", Col::Real),
            ("first_chunk_latency_ms", Col::Real),
            ("dispatch_lag_ms", Col::Real),
            ("chunk_interarrival_ms", Col::RealList),
            ("stream", Col::Bool),
            ("prompt_tokens", Col::AnyInt),
            ("output_tokens", Col::AnyInt),
            ("total_tokens", Col::AnyInt),
            ("output_token_source", Col::Text),
            ("prompt_token_source", Col::Text),
            ("prompt_token_exact", Col::Bool),
            ("output_token_exact", Col::Bool),
            ("target_input_tokens", Col::AnyInt),
            ("target_output_tokens", Col::AnyInt),
            ("arrival_mode", Col::Text),
            ("held_for_slot", Col::Bool),
            ("in_flight_at_dispatch", Col::AnyInt),
            ("max_in_flight", Col::AnyInt),
            ("concurrency", Col::AnyInt),
            ("prompt_mode", Col::Text),
            ("prompt_id", Col::Text),
            ("prompt_digest", Col::Text),
            ("prefix_group", Col::AnyInt),
            ("shared_prefix_tokens", Col::AnyInt),
            ("task", Col::Text),
            ("engine", Col::Text),
            ("endpoint", Col::Text),
            ("model", Col::Text),
            ("http_status", Col::AnyInt),
            ("finish_reason", Col::Text),
            ("error_type", Col::Text),
            ("error_message", Col::Text),
            ("response_id", Col::Text),
            ("system_fingerprint", Col::Text),
            ("trace_id", Col::Text),
            ("span_id", Col::Text),
        ],
        insert: sql::INSERT_REQUESTS,
        load: sql::LOAD_REQUESTS,
    },
    TableSpec {
        table: "system_samples",
        event_type: "infer.system_sample",
        fields: &[
            ("session_id", Col::Text),
            ("timestamp_ns", Col::Int),
            ("sampler", Col::Text),
            ("observation_scope", Col::Text),
            ("device_id", Col::Int),
            ("device_name", Col::Text),
            ("device_used_bytes", Col::Int),
            ("device_free_bytes", Col::Int),
            ("device_total_bytes", Col::Int),
            ("process_rss_bytes", Col::Int),
            ("gpu_utilization_percent", Col::Real),
            ("metadata", Col::Json),
        ],
        insert: sql::INSERT_SYSTEM_SAMPLES,
        load: sql::LOAD_SYSTEM_SAMPLES,
    },
    TableSpec {
        table: "slo_records",
        event_type: "infer.slo",
        fields: &[
            ("session_id", Col::Text),
            ("source", Col::Text),
            ("digest", Col::Text),
            ("slo", Col::Json),
        ],
        insert: sql::INSERT_SLO_RECORDS,
        load: sql::LOAD_SLO_RECORDS,
    },
    TableSpec {
        table: "clock_alignments",
        event_type: "infer.clock_alignment",
        fields: &[
            ("context_id", Col::Text),
            ("event_id", Col::Text),
            ("from_clock_domain", Col::Text),
            ("to_clock_domain", Col::Text),
            ("offset_ns", Col::Int),
            ("uncertainty_ns", Col::Int),
            ("valid_from_ns", Col::Int),
            ("valid_to_ns", Col::Int),
            ("metadata", Col::Json),
        ],
        insert: sql::INSERT_CLOCK_ALIGNMENTS,
        load: sql::LOAD_CLOCK_ALIGNMENTS,
    },
    TableSpec {
        table: "vllm_scrapes",
        event_type: "infer.vllm_scrape",
        fields: &[
            ("session_id", Col::Text),
            ("case_id", Col::Text),
            ("phase", Col::Text),
            ("marker", Col::Text),
            ("status", Col::Text),
            ("observed_at_ns", Col::Int),
            ("completed_at_ns", Col::Int),
            ("timestamp_ns", Col::Int),
            ("interval_ms", Col::Int),
            ("source_url", Col::Text),
            ("observation_scope", Col::Text),
            ("clock_domain", Col::Text),
            ("http_status", Col::Int),
            ("content_bytes", Col::Int),
            ("duration_ms", Col::Real),
            ("error", Col::Text),
            ("content_digest", Col::Text),
            ("scrape", Col::Json),
            ("discovery", Col::Json),
        ],
        insert: sql::INSERT_VLLM_SCRAPES,
        load: sql::LOAD_VLLM_SCRAPES,
    },
    TableSpec {
        table: "vllm_spans",
        event_type: "infer.vllm_span",
        fields: &[
            ("session_id", Col::Text),
            ("source", Col::Text),
            ("name", Col::Text),
            ("request_id", Col::Text),
            ("trace_id", Col::Text),
            ("span_id", Col::Text),
            ("parent_span_id", Col::Text),
            ("kind", Col::Text),
            ("clock_domain", Col::Text),
            ("received_at_ns", Col::Int),
            ("start_unix_ns", Col::Int),
            ("end_unix_ns", Col::Int),
            ("timestamp_ns", Col::Int),
            ("attributes", Col::Json),
            ("resource", Col::Json),
            ("scope", Col::Json),
            ("status", Col::Json),
            ("dropped", Col::Json),
        ],
        insert: sql::INSERT_VLLM_SPANS,
        load: sql::LOAD_VLLM_SPANS,
    },
    TableSpec {
        table: "dispatches",
        event_type: "infer.dispatch",
        fields: &[
            ("session_id", Col::Text),
            ("request_id", Col::Text),
            ("x_request_id", Col::Text),
            ("case_id", Col::Text),
            ("phase", Col::Text),
            ("intended_at_ns", Col::Int),
            ("started_at_ns", Col::Int),
            ("timestamp_ns", Col::Int),
        ],
        insert: sql::INSERT_DISPATCHES,
        load: sql::LOAD_DISPATCHES,
    },
    TableSpec {
        table: "first_contents",
        event_type: "infer.first_content",
        fields: &[
            ("session_id", Col::Text),
            ("request_id", Col::Text),
            ("x_request_id", Col::Text),
            ("case_id", Col::Text),
            ("phase", Col::Text),
            ("first_content_at_ns", Col::Int),
            ("timestamp_ns", Col::Int),
        ],
        insert: sql::INSERT_FIRST_CONTENTS,
        load: sql::LOAD_FIRST_CONTENTS,
    },
];

pub fn spec(table: &str) -> Option<&'static TableSpec> {
    TABLES.iter().find(|t| t.table == table)
}

/// Encodes one field value for its column; `None` when the column cannot give
/// the same value back (then the value belongs in `extra`).
pub fn encode(col: Col, v: &Value) -> Option<Sql> {
    match (col, v) {
        (_, Value::Null) => None,
        (Col::Text, Value::String(s))
            if pyjson::sentinel_f64(s).is_none() && pyjson::big_int(v).is_none() =>
        {
            Some(Sql::Text(s.clone()))
        }
        (Col::Int, Value::Number(n)) => n.as_i64().map(Sql::Integer),
        (Col::AnyInt, Value::Number(n)) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Some(Sql::Integer(i)),
            (None, Some(u)) => Some(Sql::Text(u.to_string())),
            _ => None,
        },
        (Col::AnyInt, v) => pyjson::big_int(v).map(|i| Sql::Text(i.to_string())),
        (Col::Real, Value::Number(n)) => n.as_f64().filter(|f| f.is_finite()).map(Sql::Real),
        (Col::Bool, Value::Bool(b)) => Some(Sql::Integer(i64::from(*b))),
        (Col::Json, v) => serde_json::to_string(v).ok().map(Sql::Text),
        (Col::RealList, Value::Array(items)) => {
            let mut bytes = Vec::with_capacity(items.len() * 8);
            for item in items {
                let f = item.as_f64().filter(|f| f.is_finite())?;
                bytes.extend_from_slice(&f.to_le_bytes());
            }
            Some(Sql::Blob(bytes))
        }
        _ => None,
    }
}

/// Decodes a column value back to JSON (the inverse of [`encode`]).
pub fn decode(col: Col, v: &Sql) -> Option<Value> {
    match (col, v) {
        (_, Sql::Null) => None,
        (Col::Text, Sql::Text(s)) => Some(Value::String(s.clone())),
        (Col::Int | Col::AnyInt, Sql::Integer(i)) => Some(Value::from(*i)),
        (Col::AnyInt, Sql::Text(s)) => wide_int(s.as_bytes()),
        (Col::Real, Sql::Real(f)) => serde_json::Number::from_f64(*f).map(Value::Number),
        (Col::Real, Sql::Integer(i)) => serde_json::Number::from_f64(*i as f64).map(Value::Number),
        (Col::Bool, Sql::Integer(i)) => Some(Value::Bool(*i != 0)),
        (Col::Json, Sql::Text(s)) => pyjson::parse(s).ok(),
        (Col::RealList, Sql::Blob(b)) => Some(Value::Array(
            f64s(b)
                .filter_map(|f| serde_json::Number::from_f64(f).map(Value::Number))
                .collect(),
        )),
        _ => None,
    }
}

/// The JSON value of an [`Col::AnyInt`] column's text (an integer past
/// i64): the value the integer's literal reads as. None for a text that is
/// no integer (only SQL written by hand can store one).
pub fn wide_int(text: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(text).ok()?;
    crate::py::Int::parse_literal(text)?;
    pyjson::parse(text).ok()
}

/// The f64 values of a `RealList` blob.
pub fn f64s(bytes: &[u8]) -> impl Iterator<Item = f64> + '_ {
    bytes.chunks_exact(8).map(|c| {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        f64::from_le_bytes(a)
    })
}

/// A record split into column values, the null mask and the `extra` object.
pub struct Encoded {
    pub schema_version: Sql,
    pub fields: Vec<Sql>,
    /// Bit i set: field i was present with the value null.
    pub nulls: i64,
    pub extra: Option<String>,
}

/// The field index of `key` in table `TABLES[table]`. Every key of every
/// ingested line comes through here, so it is an open-addressing table keyed
/// by a cheap hash of the key, built once: one hash and, for a column, one
/// comparison.
pub fn field_index(table: usize, key: &str) -> Option<usize> {
    use std::sync::OnceLock;
    const SLOTS: usize = 256; // a power of two, over four times the widest table
    static INDEX: OnceLock<Vec<[u8; SLOTS]>> = OnceLock::new();
    // The length and the first and last eight bytes tell the columns apart
    // cheaply; probing and the comparison settle the rest. The words are
    // fixed-size loads (a key shorter than eight bytes is folded byte by
    // byte): a variable-length copy into a buffer was a call to memcpy.
    fn slot_hash(key: &str) -> usize {
        let b = key.as_bytes();
        let (head, tail) = match (b.first_chunk::<8>(), b.last_chunk::<8>()) {
            (Some(head), Some(tail)) => (u64::from_le_bytes(*head), u64::from_le_bytes(*tail)),
            _ => {
                let w = b
                    .iter()
                    .rev()
                    .fold(0u64, |w, &byte| (w << 8) | u64::from(byte));
                (w, w)
            }
        };
        let h =
            (head ^ tail.rotate_left(29) ^ (b.len() as u64)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 40) as usize
    }
    let all = INDEX.get_or_init(|| {
        TABLES
            .iter()
            .map(|t| {
                // Slot value: field index + 1 (0 = empty).
                let mut slots = [0u8; SLOTS];
                for (i, (k, _)) in t.fields.iter().enumerate() {
                    let mut at = slot_hash(k) & (SLOTS - 1);
                    while slots[at] != 0 {
                        at = (at + 1) & (SLOTS - 1);
                    }
                    slots[at] = (i + 1) as u8;
                }
                slots
            })
            .collect()
    });
    let (slots, fields) = (all.get(table)?, TABLES[table].fields);
    let mut at = slot_hash(key) & (SLOTS - 1);
    loop {
        let i = usize::from(slots[at]).checked_sub(1)?;
        if same_key(fields[i].0, key) {
            return Some(i);
        }
        at = (at + 1) & (SLOTS - 1);
    }
}

/// Whether two keys are equal, comparing eight bytes at a time (the last
/// word overlapping): a call to memcmp per key of every ingested line was a
/// good part of telling the keys apart.
#[inline]
pub fn same_key(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// [`same_key`] for bytes.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let word = |s: &[u8], at: usize| s.get(at..).and_then(<[u8]>::first_chunk::<8>).copied();
    if a.len() != b.len() {
        return false;
    }
    if a.len() < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let mut at = 0;
    while at + 8 < a.len() {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    a.last_chunk::<8>() == b.last_chunk::<8>()
}

/// The field index of each key of `spec`'s table.
pub fn index_of(spec: &TableSpec, key: &str) -> Option<usize> {
    let table = TABLES
        .iter()
        .position(|t| std::ptr::eq(t, spec) || t.table == spec.table)?;
    field_index(table, key)
}

/// Splits `record` for `spec`'s columns. `event_type` must be the table's own
/// (the table implies it); `schema_version` has its own column.
pub fn split(spec: &TableSpec, record: &Map<String, Value>) -> Encoded {
    let mut fields = vec![Sql::Null; spec.fields.len()];
    let mut nulls = 0i64;
    let mut schema_version = Sql::Null;
    let mut extra: Option<Map<String, Value>> = None;
    for (k, v) in record {
        let stored = match k.as_str() {
            "event_type" => v.as_str() == Some(spec.event_type),
            "schema_version" => match encode(Col::Int, v) {
                Some(sv) => {
                    schema_version = sv;
                    true
                }
                None => false,
            },
            _ => match index_of(spec, k) {
                Some(i) if v.is_null() => {
                    nulls |= 1 << i;
                    true
                }
                Some(i) => match encode(spec.fields[i].1, v) {
                    Some(sql) => {
                        fields[i] = sql;
                        true
                    }
                    None => false,
                },
                None => false,
            },
        };
        if !stored {
            extra
                .get_or_insert_with(Map::new)
                .insert(k.clone(), v.clone());
        }
    }
    Encoded {
        schema_version,
        fields,
        nulls,
        extra: extra.map(|m| Value::Object(m).to_string()),
    }
}

/// Rebuilds a record from its row: `schema_version`, field columns, null mask, `extra`.
pub fn rebuild(
    spec: &TableSpec,
    schema_version: &Sql,
    fields: &[Sql],
    nulls: i64,
    extra: Option<&str>,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("event_type".into(), Value::String(spec.event_type.into()));
    if let Some(v) = decode(Col::Int, schema_version) {
        m.insert("schema_version".into(), v);
    }
    for (i, ((key, col), sql)) in spec.fields.iter().zip(fields).enumerate() {
        if let Some(v) = decode(*col, sql) {
            m.insert((*key).into(), v);
        } else if nulls & (1 << i) != 0 {
            m.insert((*key).into(), Value::Null);
        }
    }
    if let Some(extra) = extra {
        if let Ok(Value::Object(extra)) = pyjson::parse(extra) {
            // `extra` holds the originals of values the columns could not keep.
            for (k, v) in extra {
                m.insert(k, v);
            }
        }
    }
    m
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn field_index_finds_every_column_and_nothing_else() {
        for (t, spec) in TABLES.iter().enumerate() {
            assert!(spec.fields.len() < 64, "{}", spec.table);
            for (i, (key, _)) in spec.fields.iter().enumerate() {
                assert_eq!(field_index(t, key), Some(i), "{}.{key}", spec.table);
                assert_eq!(index_of(spec, key), Some(i));
            }
            for stranger in ["", "event_type", "schema_version", "ttft", "ttft_ms_"] {
                assert_eq!(field_index(t, stranger), None, "{}", spec.table);
            }
        }
        assert_eq!(field_index(TABLES.len(), "ttft_ms"), None);
    }

    #[test]
    fn same_key_is_string_equality() {
        let keys = [
            "",
            "a",
            "ab",
            "status",
            "stream",
            "case_id",
            "span_id",
            "endpoint",
            "trace_id",
            "event_type",
            "error_type",
            "request_id",
            "schema_version",
            "e2e_latency_ms",
            "chunk_interarrival_ms",
            "in_flight_at_dispatch",
            "0123456789abcdef",
            "0123456789abcdeF",
            "1123456789abcdef",
            "0123456789abcdefg",
            "0123456789abcdefh",
            "0123456789abcdef0123456789",
            "0123456789abcdef0123456788",
            "0123456789abcdef012345678",
            "x123456789abcdef0123456789",
            "0123456789abcdefx123456789",
            "é",
            "e\u{301}",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(same_key(a, b), a == b, "{a} {b}");
            }
        }
    }

    #[test]
    fn every_spec_matches_its_queries() {
        let conn = crate::db::open_memory().unwrap();
        for t in TABLES {
            let load = conn.prepare(t.load.sql).unwrap();
            let names: Vec<&str> = load.column_names();
            assert_eq!(names[0], "seq", "{}", t.table);
            assert_eq!(names[1], "schema_version", "{}", t.table);
            for (i, (key, _)) in t.fields.iter().enumerate() {
                assert_eq!(names[2 + i], *key, "{}", t.table);
            }
            assert_eq!(names[names.len() - 2], "nulls");
            assert_eq!(names[names.len() - 1], "extra");
            let insert = conn.prepare(t.insert.sql).unwrap();
            let fixed = 3
                + usize::from(t.table == "vllm_spans")
                + if t.table == "requests" { 2 } else { 0 };
            assert_eq!(
                insert.parameter_count(),
                fixed + t.fields.len() + 2,
                "{}",
                t.table
            );
        }
    }

    #[test]
    fn split_and_rebuild_round_trip() {
        let spec = spec("requests").unwrap();
        let rec: Value = serde_json::json!({
            "event_type": "infer.request", "schema_version": 1, "case_id": 7,
            "ttft_ms": 12.5, "e2e_latency_ms": null, "stream": true,
            "chunk_interarrival_ms": [1.0, 2.5], "prompt_tokens": 3.5,
            "request_index": true, "unknown_key": {"a": [1, 2]}, "status": "ok"
        });
        let m = rec.as_object().unwrap();
        let e = split(spec, m);
        let extra: Value = serde_json::from_str(e.extra.as_deref().unwrap()).unwrap();
        assert_eq!(
            extra,
            serde_json::json!({"case_id": 7, "prompt_tokens": 3.5,
                               "request_index": true, "unknown_key": {"a": [1, 2]}})
        );
        let back = rebuild(
            spec,
            &e.schema_version,
            &e.fields,
            e.nulls,
            e.extra.as_deref(),
        );
        assert_eq!(Value::Object(back), rec);
    }

    #[test]
    fn wrong_event_type_spelling_is_kept() {
        let spec = spec("sessions").unwrap();
        let rec = serde_json::json!({"schema_version": "1", "session_id": "s"});
        let e = split(spec, rec.as_object().unwrap());
        let back = rebuild(
            spec,
            &e.schema_version,
            &e.fields,
            e.nulls,
            e.extra.as_deref(),
        );
        // a record routed here always has the table's event type
        let mut expect = rec.as_object().unwrap().clone();
        expect.insert("event_type".into(), "infer.session".into());
        assert_eq!(back, expect);
    }
}
