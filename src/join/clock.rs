//! Clocks: the client's clock domain, the artifact's `infer.clock_alignment`
//! records (validated and resolved as the reference does), the operator's
//! `--clock-offset-ns`/`--clock-uncertainty-ns`, and how one server domain
//! maps onto the client's (docs/server-join.md §5, §6.1-§6.3).

use serde_json::{Map, Value};

use super::telemetry::{is_boot_qualified, strict_int, wall_clock_domain, IntVal};
use super::JoinError;
use crate::model::transport::{is_context_key, CONTEXT_OPTIONAL, CONTEXT_REQUIRED};
use crate::py::builtins::missing_arguments;
use crate::py::value::type_name;

/// Event ID of the in-memory alignment built from the clock flags.
pub const CLI_ALIGNMENT_ID: &str = "cli:clock-offset";
/// Marks the server side of an equal, boot-less pair of domain names.
const UNVERIFIED_SERVER_SUFFIX: &str = "#server";
/// `context.source` of alignments written by old `infer import-execution`.
const LEGACY_EXECUTION_IMPORT: &str = "stormlog.infer.import_execution";
const ANALYZE_SOURCE: &str = "stormlog.infer.analyze";

/// One validated v2 `infer.clock_alignment` record (or the operator's).
#[derive(Debug, Clone)]
pub struct Alignment {
    pub run_id: String,
    pub session_id: String,
    pub producer_id: String,
    pub source: String,
    pub event_id: String,
    pub metadata: Map<String, Value>,
    pub from_clock_domain: String,
    pub to_clock_domain: String,
    pub offset_ns: i64,
    pub uncertainty_ns: i64,
    pub valid_from_ns: Option<i64>,
    pub valid_to_ns: Option<i64>,
    /// The record as the reference's `to_record()` would give it (context
    /// with every key, defaults filled); compared for de-duplication.
    canonical: Value,
}

impl Alignment {
    /// Whether the half-open validity window `[valid_from, valid_to)` (server
    /// clock) covers `t` (docs/server-join.md §6.1).
    pub fn covers(&self, t: i64) -> bool {
        self.valid_from_ns.is_none_or(|from| t >= from) && self.valid_to_ns.is_none_or(|to| t < to)
    }

    /// The interval the true offset lies in (docs/server-join.md §6.2), including the legacy
    /// execution-import bracket.
    pub fn offset_bounds(&self) -> (i128, i128) {
        let offset = i128::from(self.offset_ns);
        if self.source == LEGACY_EXECUTION_IMPORT && !self.metadata.contains_key("alignment_basis")
        {
            if let Some(IntVal::Small(gap)) = self.metadata.get("gap_ns").and_then(strict_int) {
                if gap >= 0 {
                    return (offset, offset + i128::from(gap));
                }
            }
        }
        let u = i128::from(self.uncertainty_ns);
        (offset - u, offset + u)
    }

    /// Event equality as Python's dataclass `==` sees it.
    fn same_event(&self, other: &Alignment) -> bool {
        py_eq(&self.canonical, &other.canonical)
    }

    /// `_same_entity`: equal apart from `event_id`.
    fn same_entity(&self, other: &Alignment) -> bool {
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Value::Object(m) = &mut v {
                m.remove("event_id");
            }
            v
        };
        py_eq(&strip(&self.canonical), &strip(&other.canonical))
    }
}

/// Python `==` on decoded JSON: numbers compare by value across int/float,
/// and `true == 1`, `false == 0`.
fn py_eq(a: &Value, b: &Value) -> bool {
    crate::py::value::py_eq(a, b)
}

const RECORD_FIELDS: [&str; 9] = [
    "context",
    "event_id",
    "metadata",
    "from_clock_domain",
    "to_clock_domain",
    "offset_ns",
    "uncertainty_ns",
    "valid_from_ns",
    "valid_to_ns",
];
const EVENT_TYPE: &str = "infer.clock_alignment";

fn wrapped(message: String) -> String {
    format!("invalid {EVENT_TYPE} record: {message}")
}

fn nonempty(value: &Value, name: &str) -> Result<String, String> {
    match value {
        Value::String(s) if !s.is_empty() && !crate::py::json::is_sentinel(s) => Ok(s.clone()),
        _ => Err(format!("{name} must be a non-empty string")),
    }
}

fn optional_nonnegative(value: &Value, name: &str) -> Result<Option<i64>, String> {
    match value {
        Value::Null => Ok(None),
        other => match strict_int(other) {
            Some(IntVal::Small(v)) if v >= 0 => Ok(Some(v)),
            _ => Err(format!("{name} must be a non-negative integer or null")),
        },
    }
}

/// `value not in {choices}` with Python's `TypeError` for unhashables
/// (wrapped, since the reference catches `TypeError` around the context).
fn choice(value: &Value, choices: &[&str], message: &str) -> Result<(), String> {
    match value {
        Value::Array(_) | Value::Object(_) => {
            Err(wrapped(format!("unhashable type: '{}'", type_name(value))))
        }
        Value::String(s) if choices.contains(&s.as_str()) && !crate::py::json::is_sentinel(s) => {
            Ok(())
        }
        _ => Err(message.to_owned()),
    }
}

/// `CorrelationContext(**context)` and its checks; returns the context with
/// every key present (the `asdict` form).
fn parse_context(context: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    if let Some(key) = context.keys().find(|k| !is_context_key(k)) {
        return Err(wrapped(format!(
            "CorrelationContext.__init__() got an unexpected keyword argument '{key}'"
        )));
    }
    let missing: Vec<&str> = CONTEXT_REQUIRED
        .iter()
        .copied()
        .filter(|k| !context.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return Err(wrapped(format!(
            "CorrelationContext.__init__() {}",
            missing_arguments(&missing, "positional")
        )));
    }
    let get = |k: &str| context.get(k).unwrap_or(&Value::Null);
    for name in [
        "run_id",
        "session_id",
        "producer_id",
        "source",
        "clock_domain",
    ] {
        nonempty(get(name), name)?;
    }
    for name in [
        "source_version",
        "engine",
        "engine_version",
        "backend",
        "backend_version",
        "host",
        "device_uuid",
    ] {
        if !get(name).is_null() {
            nonempty(get(name), name)?;
        }
    }
    for name in ["pid", "rank", "local_rank"] {
        optional_nonnegative(get(name), name)?;
    }
    if optional_nonnegative(get("world_size"), "world_size")? == Some(0) {
        return Err("world_size must be >= 1".into());
    }
    choice(
        get("clock_kind"),
        &["monotonic", "wall", "device"],
        "clock_kind must be monotonic, wall, or device",
    )?;
    choice(
        get("collection_mode"),
        &["active", "passive", "imported"],
        "collection_mode must be active, passive, or imported",
    )?;
    choice(
        get("provenance"),
        &["observed", "reported", "estimated"],
        "provenance must be observed, reported, or estimated",
    )?;
    let mut full = Map::new();
    for key in CONTEXT_REQUIRED.iter().chain(CONTEXT_OPTIONAL.iter()) {
        full.insert((*key).to_owned(), get(key).clone());
    }
    Ok(full)
}

/// `EntityRef(**value)` checks, for a reference field an alignment record
/// should not carry (it then fails as an unexpected keyword).
fn check_ref(name: &str, value: &Value) -> Result<(), String> {
    let Value::Object(m) = value else {
        return Err(format!("{name} must be an object"));
    };
    if let Some(key) = m.keys().find(|k| *k != "producer_id" && *k != "id") {
        return Err(wrapped(format!(
            "EntityRef.__init__() got an unexpected keyword argument '{key}'"
        )));
    }
    let missing: Vec<&str> = ["producer_id", "id"]
        .into_iter()
        .filter(|k| !m.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return Err(wrapped(format!(
            "EntityRef.__init__() {}",
            missing_arguments(&missing, "positional")
        )));
    }
    nonempty(&m["producer_id"], "producer_id")?;
    nonempty(&m["id"], "id")?;
    Ok(())
}

/// Parse one `infer.clock_alignment` record (docs/server-join.md §5.2). `Ok(None)` for a legacy
/// (schema version 1) record, which the join ignores.
pub fn parse_alignment(record: &Map<String, Value>) -> Result<Option<Alignment>, String> {
    let version = match record.get("schema_version") {
        None => 1,
        Some(v) => match strict_int(v) {
            Some(IntVal::Small(v)) => v,
            Some(IntVal::Big) => i64::MAX,
            None => return Err("schema_version must be an integer".into()),
        },
    };
    if version == 4 {
        return Err("v4 requires load_inference_artifact or a sequence decoder".into());
    }
    if version == 1 {
        return Ok(None);
    }
    if version != 2 {
        let shown = record
            .get("schema_version")
            .map_or_else(|| version.to_string(), Value::to_string);
        return Err(format!("unsupported inference schema_version: {shown}"));
    }
    let Some(Value::Object(raw_context)) = record.get("context") else {
        return Err("context must be an object".into());
    };
    let context = parse_context(raw_context)?;
    for name in crate::model::transport::CORRELATION_REFS {
        match record.get(name) {
            None | Some(Value::Null) => {}
            Some(value) => check_ref(name, value)?,
        }
    }
    let fields = record
        .iter()
        .filter(|(k, _)| *k != "schema_version" && *k != "event_type");
    for (key, _) in fields {
        if !RECORD_FIELDS.contains(&key.as_str()) {
            return Err(wrapped(format!(
                "ClockAlignmentEvent.__init__() got an unexpected keyword argument '{key}'"
            )));
        }
    }
    let missing: Vec<&str> = [
        "event_id",
        "from_clock_domain",
        "to_clock_domain",
        "offset_ns",
        "uncertainty_ns",
    ]
    .into_iter()
    .filter(|k| !record.contains_key(*k))
    .collect();
    if !missing.is_empty() {
        return Err(wrapped(format!(
            "ClockAlignmentEvent.__init__() {}",
            missing_arguments(&missing, "keyword-only")
        )));
    }
    let get = |k: &str| record.get(k).unwrap_or(&Value::Null);
    let event_id = nonempty(get("event_id"), "event_id")?;
    let metadata = match record.get("metadata") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err("metadata must be an object".into()),
    };
    let from_clock_domain = nonempty(get("from_clock_domain"), "from_clock_domain")?;
    let to_clock_domain = nonempty(get("to_clock_domain"), "to_clock_domain")?;
    // Python ints are unbounded; beyond i64 this port refuses the record.
    let Some(IntVal::Small(offset_ns)) = strict_int(get("offset_ns")) else {
        return Err("offset_ns must be an integer".into());
    };
    let uncertainty_ns = match strict_int(get("uncertainty_ns")) {
        Some(IntVal::Small(u)) if u >= 0 => u,
        _ => return Err("uncertainty_ns must be a non-negative integer".into()),
    };
    // The reference validates the window with its generic span check, whose
    // messages name start_ns/end_ns.
    let valid_from_ns = optional_nonnegative(get("valid_from_ns"), "start_ns")?;
    let valid_to_ns = optional_nonnegative(get("valid_to_ns"), "end_ns")?;
    if let (Some(from), Some(to)) = (valid_from_ns, valid_to_ns) {
        if to < from {
            return Err("end_ns must be >= start_ns".into());
        }
    }
    let mut canonical = Map::new();
    canonical.insert("context".into(), Value::Object(context.clone()));
    canonical.insert("event_id".into(), Value::from(event_id.clone()));
    canonical.insert("metadata".into(), Value::Object(metadata.clone()));
    canonical.insert(
        "from_clock_domain".into(),
        Value::from(from_clock_domain.clone()),
    );
    canonical.insert(
        "to_clock_domain".into(),
        Value::from(to_clock_domain.clone()),
    );
    canonical.insert("offset_ns".into(), Value::from(offset_ns));
    canonical.insert("uncertainty_ns".into(), Value::from(uncertainty_ns));
    canonical.insert(
        "valid_from_ns".into(),
        valid_from_ns.map_or(Value::Null, Value::from),
    );
    canonical.insert(
        "valid_to_ns".into(),
        valid_to_ns.map_or(Value::Null, Value::from),
    );
    let text = |k: &str| {
        context
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    Ok(Some(Alignment {
        run_id: text("run_id"),
        session_id: text("session_id"),
        producer_id: text("producer_id"),
        source: text("source"),
        event_id,
        metadata,
        from_clock_domain,
        to_clock_domain,
        offset_ns,
        uncertainty_ns,
        valid_from_ns,
        valid_to_ns,
        canonical: Value::Object(canonical),
    }))
}

/// The operator's flags as an in-memory alignment (docs/server-join.md §5.4), validated like a
/// record: a negative uncertainty is an error.
fn operator_alignment(
    run_id: &str,
    server: &str,
    client: &str,
    offset_ns: i64,
    uncertainty_ns: i64,
) -> Result<Alignment, JoinError> {
    if uncertainty_ns < 0 {
        return Err(JoinError::NegativeUncertainty);
    }
    Ok(Alignment {
        run_id: run_id.to_owned(),
        session_id: ANALYZE_SOURCE.into(),
        producer_id: ANALYZE_SOURCE.into(),
        source: ANALYZE_SOURCE.into(),
        event_id: CLI_ALIGNMENT_ID.into(),
        metadata: Map::new(),
        from_clock_domain: server.to_owned(),
        to_clock_domain: client.to_owned(),
        offset_ns,
        uncertainty_ns,
        valid_from_ns: None,
        valid_to_ns: None,
        // Never compared: the operator's alignment is not among the records.
        canonical: Value::Null,
    })
}

/// Parse every `infer.clock_alignment` record and resolve this run's ones
/// (docs/server-join.md §5.2): own records de-duplicated and sorted, then foreign ones in
/// artifact order.
pub fn artifact_alignments(records: &[Value], run_id: &str) -> Result<Vec<Alignment>, JoinError> {
    let mut own = Vec::new();
    let mut foreign = Vec::new();
    for record in records {
        let Some(obj) = record.as_object() else {
            continue;
        };
        if obj.get("event_type").and_then(Value::as_str) != Some(EVENT_TYPE) {
            continue;
        }
        if let Some(alignment) = parse_alignment(obj).map_err(JoinError::InvalidAlignment)? {
            if alignment.run_id == run_id {
                own.push(alignment);
            } else {
                foreign.push(alignment);
            }
        }
    }
    let mut resolved = resolve(own)?;
    resolved.extend(foreign);
    Ok(resolved)
}

/// The correlation resolver's alignment handling: event identity first, then
/// entity identity (keeping the smaller event ID), then a stable order.
fn resolve(own: Vec<Alignment>) -> Result<Vec<Alignment>, JoinError> {
    let mut events: Vec<Alignment> = Vec::new();
    for alignment in own {
        let same_key = events.iter().position(|e| {
            e.session_id == alignment.session_id
                && e.producer_id == alignment.producer_id
                && e.event_id == alignment.event_id
        });
        match same_key {
            Some(i) if !events[i].same_event(&alignment) => {
                return Err(JoinError::InvalidAlignment(
                    "conflicting event identity".into(),
                ));
            }
            Some(i) => events[i] = alignment,
            None => events.push(alignment),
        }
    }
    let mut entities: Vec<Alignment> = Vec::new();
    for event in events {
        let same_key = entities.iter().position(|e| {
            e.session_id == event.session_id
                && e.producer_id == event.producer_id
                && e.from_clock_domain == event.from_clock_domain
                && e.to_clock_domain == event.to_clock_domain
                && e.offset_ns == event.offset_ns
                && e.uncertainty_ns == event.uncertainty_ns
                && e.valid_from_ns == event.valid_from_ns
                && e.valid_to_ns == event.valid_to_ns
        });
        match same_key {
            Some(i) if !entities[i].same_entity(&event) => {
                return Err(JoinError::InvalidAlignment(
                    "conflicting entity identity".into(),
                ));
            }
            Some(i) => {
                if event.event_id < entities[i].event_id {
                    entities[i] = event;
                }
            }
            None => entities.push(event),
        }
    }
    entities.sort_by(|a, b| {
        (&a.session_id, &a.producer_id, &a.event_id).cmp(&(
            &b.session_id,
            &b.producer_id,
            &b.event_id,
        ))
    });
    Ok(entities)
}

/// The client artifact's wall-clock domain (docs/server-join.md §5.1), from its single
/// `infer.artifact` record.
pub fn client_clock_domain(artifact: &Map<String, Value>) -> Option<String> {
    let context = artifact.get("context")?.as_object()?;
    let recorded = context.get("clock_domain").and_then(Value::as_str);
    if let Some(domain) = recorded.filter(|d| is_boot_qualified(d)) {
        return Some(domain.to_owned());
    }
    let part = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty() && !s.contains('/'))
            .map(str::to_owned)
    };
    if let Some(host) = part(context.get("host")) {
        let boot = artifact
            .get("metadata")
            .and_then(Value::as_object)
            .and_then(|m| part(m.get("boot_id")));
        return Some(wall_clock_domain(&host, boot.as_deref()));
    }
    recorded.filter(|d| !d.is_empty()).map(str::to_owned)
}

/// Which server domain the flags describe (docs/server-join.md §5.3); `None` when an offset is
/// given and several domains are remote.
pub fn flags_domain(domains: &[String], client: &str, offset_ns: Option<i64>) -> Option<String> {
    let remote: Vec<&String> = domains
        .iter()
        .filter(|d| d.as_str() != client || !is_boot_qualified(d))
        .collect();
    if offset_ns.is_some() && remote.len() > 1 {
        return None;
    }
    Some(
        remote
            .first()
            .map_or_else(|| client.to_owned(), |d| (*d).clone()),
    )
}

/// The kind of evidence a server clock rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Evidence {
    ArtifactRecord,
    OperatorSupplied,
    SameHost,
}

impl Evidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::ArtifactRecord => "artifact_record",
            Evidence::OperatorSupplied => "operator_supplied",
            Evidence::SameHost => "same_host",
        }
    }
}

/// How one server clock domain maps onto the client's.
#[derive(Debug, Clone)]
pub struct ServerClock {
    pub server_domain: String,
    pub client_domain: String,
    pub evidence: Evidence,
    pub alignments: Vec<Alignment>,
    pub same_clock_uncertainty_ns: i64,
    pub overridden: Vec<String>,
    pub ignored: Vec<String>,
}

/// Why a sample has no client time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unplaced {
    Uncovered,
    Ambiguous,
}

/// A sample on the client clock: value, its own uncertainty, and the
/// alignment (index into the clock's list) that placed it, `None` on a
/// shared clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub value_ns: i128,
    pub uncertainty_ns: i128,
    pub alignment: Option<usize>,
}

impl ServerClock {
    /// Place one server timestamp (docs/server-join.md §6.3).
    pub fn align(&self, t: i64) -> Result<Placement, Unplaced> {
        if self.evidence == Evidence::SameHost {
            return Ok(Placement {
                value_ns: i128::from(t),
                uncertainty_ns: i128::from(self.same_clock_uncertainty_ns),
                alignment: None,
            });
        }
        let mut found = None;
        for (index, alignment) in self.alignments.iter().enumerate() {
            if alignment.from_clock_domain == self.server_domain
                && alignment.to_clock_domain == self.client_domain
                && alignment.covers(t)
            {
                if found.is_some() {
                    return Err(Unplaced::Ambiguous);
                }
                found = Some(index);
            }
        }
        let index = found.ok_or(Unplaced::Uncovered)?;
        let (low, high) = self.alignments[index].offset_bounds();
        let half = (high - low + 1).div_euclid(2);
        Ok(Placement {
            value_ns: i128::from(t) + high - half,
            uncertainty_ns: half,
            alignment: Some(index),
        })
    }
}

/// Choose the evidence for one server domain, or say what is missing (docs/server-join.md §5.4).
pub fn build_server_clock(
    run_id: &str,
    server_domain: &str,
    client_domain: &str,
    recorded: &[Alignment],
    offset_ns: Option<i64>,
    uncertainty_ns: Option<i64>,
) -> Result<Result<ServerClock, &'static str>, JoinError> {
    let shared = server_domain == client_domain && is_boot_qualified(server_domain);
    if offset_ns.is_some() && uncertainty_ns.is_none() {
        return Ok(Err("clock_uncertainty_required"));
    }
    if !shared && offset_ns.is_none() && uncertainty_ns.is_some() {
        return Ok(Err("clock_offset_required"));
    }
    if shared {
        let offset = offset_ns.unwrap_or(0);
        let supplied = operator_alignment(
            run_id,
            server_domain,
            client_domain,
            offset,
            uncertainty_ns.unwrap_or(0),
        )?;
        if offset != 0 {
            return Ok(Err("clock_offset_on_shared_clock"));
        }
        return Ok(Ok(ServerClock {
            server_domain: server_domain.to_owned(),
            client_domain: client_domain.to_owned(),
            evidence: Evidence::SameHost,
            alignments: Vec::new(),
            same_clock_uncertainty_ns: supplied.uncertainty_ns,
            overridden: Vec::new(),
            ignored: Vec::new(),
        }));
    }
    let server = if server_domain == client_domain {
        if offset_ns.is_none() {
            return Ok(Err("clock_domain_unverified"));
        }
        format!("{server_domain}{UNVERIFIED_SERVER_SUFFIX}")
    } else {
        server_domain.to_owned()
    };
    let pair: Vec<&Alignment> = recorded
        .iter()
        .filter(|a| a.from_clock_domain == server && a.to_clock_domain == client_domain)
        .collect();
    let Some(offset) = offset_ns else {
        let own: Vec<Alignment> = pair
            .iter()
            .filter(|a| a.run_id == run_id)
            .map(|a| (*a).clone())
            .collect();
        if own.is_empty() {
            return Ok(Err(if pair.is_empty() {
                "clock_alignment_required"
            } else {
                "clock_alignment_from_another_run"
            }));
        }
        let ignored = pair
            .iter()
            .filter(|a| !own.iter().any(|o| o.same_event(a)))
            .map(|a| a.event_id.clone())
            .collect();
        return Ok(Ok(ServerClock {
            server_domain: server,
            client_domain: client_domain.to_owned(),
            evidence: Evidence::ArtifactRecord,
            alignments: own,
            same_clock_uncertainty_ns: 0,
            overridden: Vec::new(),
            ignored,
        }));
    };
    let operator = operator_alignment(
        run_id,
        &server,
        client_domain,
        offset,
        uncertainty_ns.unwrap_or(0),
    )?;
    Ok(Ok(ServerClock {
        server_domain: server,
        client_domain: client_domain.to_owned(),
        evidence: Evidence::OperatorSupplied,
        alignments: vec![operator],
        same_clock_uncertainty_ns: 0,
        overridden: pair.iter().map(|a| a.event_id.clone()).collect(),
        ignored: Vec::new(),
    }))
}
