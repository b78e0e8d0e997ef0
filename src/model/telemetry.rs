//! The one writer of the `infer.telemetry_sample` record, byte for byte as the
//! reference's collect-server writes it (`json.dumps(sample.to_record(),
//! sort_keys=True)`: keys sorted, `", "`/`": "` separators, non-ASCII
//! escaped; docs/telemetry.md §1.1, §2.1). The collector's file and
//! `stormlog export --telemetry` both write through [`write_record`]. No I/O:
//! it appends to a `String`.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::identity::ServerIdentity;
use crate::py::json::{json_string, write_compact, write_json_string};

/// Schema version of every telemetry record (the only one a loader accepts).
pub const SCHEMA_VERSION: i64 = 1;
/// Event type of every telemetry record.
pub const EVENT_TYPE: &str = "infer.telemetry_sample";

/// The record's fifteen keys, in the order they are written (sorted).
const KEYS: [&str; 15] = [
    "clock_domain",
    "counter_owner",
    "detail",
    "event_type",
    "identity",
    "interval_ms",
    "metric",
    "observed_at_ns",
    "provenance",
    "run_id",
    "schema_version",
    "scope",
    "source",
    "state",
    "value_bytes",
];

/// What every record of one run and one server shares, as JSON rendered
/// once: the clock domain, the identity (`asdict`, all ten keys) and the
/// run ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordHead {
    clock_domain: String,
    identity: String,
    run_id: String,
}

impl RecordHead {
    pub fn new(run_id: &str, identity: &ServerIdentity) -> Self {
        Self {
            clock_domain: json_string(&identity.clock_domain()),
            identity: identity_json(identity),
            run_id: json_string(run_id),
        }
    }
}

/// One sample's own fields. `scope` and `counter_owner` are the metric's
/// (the writer does not look them up, so a record is written as given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleFields<'a> {
    pub observed_at_ns: i64,
    pub metric: &'a str,
    pub scope: &'a str,
    pub counter_owner: &'a str,
    /// `None` is written as `null`. Wide enough for the collector's `u64`
    /// and the loader's `i64` alike.
    pub value_bytes: Option<i128>,
    pub state: &'a str,
    pub source: &'a str,
    pub interval_ms: i64,
    pub detail: Option<&'a str>,
    pub provenance: &'a str,
}

/// Appends one record and its `\n`. `extra` holds keys a file carried beside
/// the fifteen (kept by ingest so export gives the file back); they are
/// merged in sorted order, and one named like a record key replaces it (as
/// Python's `{**record, **extra}` would).
pub fn write_record(
    out: &mut String,
    head: &RecordHead,
    sample: &SampleFields,
    extra: Option<&Map<String, Value>>,
) {
    let mut extra = extra.into_iter().flatten().peekable();
    let mut first = true;
    let mut key_into = |out: &mut String, key: &str| {
        out.push_str(if first { "{" } else { ", " });
        first = false;
        write_json_string(out, key);
        out.push_str(": ");
    };
    for (index, key) in KEYS.iter().enumerate() {
        while let Some((k, v)) = extra.next_if(|(k, _)| k.as_str() < *key) {
            key_into(out, k);
            write_compact(out, v);
        }
        key_into(out, key);
        match extra.next_if(|(k, _)| k.as_str() == *key) {
            Some((_, v)) => write_compact(out, v),
            None => write_field(out, index, head, sample),
        }
    }
    for (k, v) in extra {
        key_into(out, k);
        write_compact(out, v);
    }
    out.push_str("}\n");
}

/// The value of `KEYS[index]`.
fn write_field(out: &mut String, index: usize, head: &RecordHead, s: &SampleFields) {
    let string = |out: &mut String, v: Option<&str>| match v {
        Some(v) => write_json_string(out, v),
        None => out.push_str("null"),
    };
    match index {
        0 => out.push_str(&head.clock_domain),
        1 => string(out, Some(s.counter_owner)),
        2 => string(out, s.detail),
        3 => string(out, Some(EVENT_TYPE)),
        4 => out.push_str(&head.identity),
        5 => integer(out, s.interval_ms.into()),
        6 => string(out, Some(s.metric)),
        7 => integer(out, s.observed_at_ns.into()),
        8 => string(out, Some(s.provenance)),
        9 => out.push_str(&head.run_id),
        10 => integer(out, SCHEMA_VERSION.into()),
        11 => string(out, Some(s.scope)),
        12 => string(out, Some(s.source)),
        13 => string(out, Some(s.state)),
        _ => match s.value_bytes {
            Some(v) => integer(out, v),
            None => out.push_str("null"),
        },
    }
}

fn integer(out: &mut String, v: i128) {
    // Infallible: writing into a String cannot fail.
    let _ = write!(out, "{v}");
}

/// The identity as the reference's `asdict` gives it, keys sorted.
fn identity_json(identity: &ServerIdentity) -> String {
    let string = |v: &Option<String>| v.as_deref().map_or_else(|| "null".to_string(), json_string);
    let int = |v: Option<i64>| v.map_or_else(|| "null".to_string(), |n| n.to_string());
    format!(
        "{{\"boot_id\": {}, \"device_uuid\": {}, \"gpu_instance_id\": {}, \"group_id\": {}, \
         \"host\": {}, \"pid\": {}, \"process_start_ns\": {}, \"rank\": {}, \
         \"replica_id\": {}, \"world_size\": {}}}",
        string(&identity.boot_id),
        string(&identity.device_uuid),
        string(&identity.gpu_instance_id),
        string(&identity.group_id),
        json_string(&identity.host),
        identity.pid,
        identity.process_start_ns,
        int(identity.rank),
        string(&identity.replica_id),
        int(identity.world_size),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::identity::tests::identity;

    fn fields() -> SampleFields<'static> {
        SampleFields {
            observed_at_ns: 5,
            metric: "process_rss_bytes",
            scope: "server_process",
            counter_owner: "operating_system_process",
            value_bytes: Some(7),
            state: "valid",
            source: "psutil",
            interval_ms: 100,
            detail: None,
            provenance: "observed",
        }
    }

    #[test]
    fn keys_are_written_sorted() {
        assert!(KEYS.windows(2).all(|w| w[0] < w[1]));
    }

    /// Extra keys land where `sort_keys` puts them, with Python's spelling of
    /// their values (NaN, big integers, escaped non-ASCII keys); one named
    /// like a record key replaces it. The expected line is CPython 3.11's
    /// `json.dumps({**record, **extra}, sort_keys=True)`.
    #[test]
    fn extra_keys_merge_in_sorted_order() {
        let head = RecordHead::new("r", &identity());
        let extra = crate::py::json::parse(
            r#"{"a": NaN, "d": [1.5, -Infinity], "provenance": "x", "zz": 123456789012345678901234567890, "é": {"k": 1e400}}"#,
        )
        .unwrap();
        let mut line = String::new();
        write_record(&mut line, &head, &fields(), extra.as_object());
        let want = concat!(
            r#"{"a": NaN, "clock_domain": "vm/80956652-4182-4e20-8984-7a99c0a0659e/unix_epoch_ns", "#,
            r#""counter_owner": "operating_system_process", "d": [1.5, -Infinity], "detail": null, "#,
            r#""event_type": "infer.telemetry_sample", "identity": {"boot_id": "#,
            r#""80956652-4182-4e20-8984-7a99c0a0659e", "device_uuid": null, "gpu_instance_id": null, "#,
            r#""group_id": null, "host": "vm", "pid": 8934, "process_start_ns": 1795960369849999872, "#,
            r#""rank": null, "replica_id": null, "world_size": null}, "interval_ms": 100, "#,
            r#""metric": "process_rss_bytes", "observed_at_ns": 5, "provenance": "x", "run_id": "r", "#,
            r#""schema_version": 1, "scope": "server_process", "source": "psutil", "state": "valid", "#,
            r#""value_bytes": 7, "zz": 123456789012345678901234567890, "\u00e9": {"k": Infinity}}"#,
            "\n"
        );
        assert_eq!(line, want);
        let mut plain = String::new();
        write_record(&mut plain, &head, &fields(), Some(&Map::new()));
        let mut none = String::new();
        write_record(&mut none, &head, &fields(), None);
        assert_eq!(plain, none);
        assert!(none.starts_with(r#"{"clock_domain": "#));
    }
}
