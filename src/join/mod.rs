//! Server telemetry on the client's clock: loading and validating collector
//! samples, deciding whether they can be joined to a run (run ID, one server
//! or one complete declared group, a declared direct route, clock evidence),
//! placing every sample on the client clock with its own uncertainty, and
//! telling each workload case how well the server was observed during it
//! (docs/server-join.md; docs/telemetry.md §1-§4).
//!
//! Pure code: JSON values in, JSON values and text lines out. The caller
//! reads files, decodes the artifact and builds each case's request window;
//! `join` sorts the samples once per member and answers every case with
//! binary searches over them.

mod clock;
mod coverage;
mod place;
mod telemetry;
mod text;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::exit::Exit;

pub use clock::{client_clock_domain, Alignment, Evidence, ServerClock};
pub use telemetry::{
    is_boot_qualified, load_telemetry_text, load_telemetry_with_extras, parse_sample,
    wall_clock_domain, Identity, SampleWithExtra, ServerSample,
};
pub use text::{case_lines, run_lines};

/// Errors the join raises instead of reporting (docs/server-join.md §12).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JoinError {
    /// A telemetry file that cannot be read or fails validation.
    #[error("--server-telemetry {path}: {reason}")]
    TelemetryFile { path: String, reason: String },
    /// `--clock-uncertainty-ns` below zero, when it is applied to a clock.
    #[error("uncertainty_ns must be a non-negative integer")]
    NegativeUncertainty,
    /// An embedded `infer.clock_alignment` record that fails validation, or
    /// conflicting records of this run.
    #[error("{0}")]
    InvalidAlignment(String),
}

impl JoinError {
    /// The exit status the reference gives this error.
    pub fn exit(&self) -> Exit {
        match self {
            JoinError::TelemetryFile { .. } => Exit::InvalidInput,
            JoinError::NegativeUncertainty | JoinError::InvalidAlignment(_) => Exit::Unexpected,
        }
    }
}

/// One case's request window (docs/server-join.md §9.1): min start and max end over its ok
/// requests with both times numeric, truncated to integers; `None` when no
/// request qualifies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseWindow {
    pub case_key: String,
    pub window: Option<(i64, i64)>,
}

/// Everything the join reads.
pub struct JoinInputs<'a> {
    /// The decoded (context-expanded) artifact records of event type
    /// `infer.artifact` and `infer.clock_alignment`, in file order. Other
    /// records are ignored.
    pub artifact_records: &'a [Value],
    /// Every case, in sorted key order.
    pub cases: &'a [CaseWindow],
    /// All telemetry files' samples in flag order, before de-duplication.
    pub samples: Vec<ServerSample>,
    /// Whether any telemetry was given (or attached).
    pub configured: bool,
    pub direct_server: bool,
    pub clock_offset_ns: Option<i64>,
    pub clock_uncertainty_ns: Option<i64>,
}

/// The server fields of one case's `memory` object.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseMemory {
    pub server_observations: Value,
    pub server_coverage: Value,
    /// Present only when a declared group was joined.
    pub server_members: Option<Value>,
}

impl CaseMemory {
    fn not_joined() -> Self {
        let mut coverage = Map::new();
        coverage.insert("status".into(), Value::from("not_joined"));
        CaseMemory {
            server_observations: Value::Object(Map::new()),
            server_coverage: Value::Object(coverage),
            server_members: None,
        }
    }

    /// Insert these fields into a case's `memory` object.
    pub fn insert_into(&self, memory: &mut Map<String, Value>) {
        memory.insert(
            "server_observations".into(),
            self.server_observations.clone(),
        );
        memory.insert("server_coverage".into(), self.server_coverage.clone());
        if let Some(members) = &self.server_members {
            memory.insert("server_members".into(), members.clone());
        }
    }
}

/// What the join produced.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinOutcome {
    /// `telemetry.server_join`, including `case_coverage` when joined.
    pub server_join: Value,
    /// `telemetry.server_targets`.
    pub server_targets: Value,
    /// Every case's server memory fields, by case key.
    pub cases: BTreeMap<String, CaseMemory>,
    /// Run-level text lines: right after `Memory observations: client-local`
    /// and any MLX lines, before the vLLM and execution lines.
    pub run_text_lines: Vec<String>,
    /// Per-case text lines: after all of the case's other lines (interval,
    /// SLO, arrival, prompt and cache lines), before its vLLM case lines.
    pub case_text_lines: BTreeMap<String, Vec<String>>,
}

fn unjoined(reason: &str) -> Value {
    let mut m = Map::new();
    m.insert("status".into(), Value::from("unjoined"));
    m.insert("reason".into(), Value::from(reason));
    Value::Object(m)
}

/// The joined members with their clocks, or the reason nothing is joined.
enum Decision {
    Unjoined(Value),
    Joined {
        members: Vec<place::Member>,
        clocks: Vec<ServerClock>,
    },
}

/// Compute `server_join`, `server_targets` and every case's server memory
/// (docs/server-join.md §1 steps 4-8).
pub fn join(inputs: JoinInputs) -> Result<JoinOutcome, JoinError> {
    let indexed = place::dedup(inputs.samples);
    let server_targets = place::server_targets(&indexed);
    let decision = if !inputs.configured || indexed.samples.is_empty() {
        let mut m = Map::new();
        m.insert("status".into(), Value::from("not_configured"));
        Decision::Unjoined(Value::Object(m))
    } else {
        decide(
            inputs.artifact_records,
            &indexed,
            inputs.direct_server,
            inputs.clock_offset_ns,
            inputs.clock_uncertainty_ns,
        )?
    };
    let (server_join, cases) = match decision {
        Decision::Unjoined(report) => {
            let cases = inputs
                .cases
                .iter()
                .map(|c| (c.case_key.clone(), CaseMemory::not_joined()))
                .collect();
            (report, cases)
        }
        Decision::Joined { members, clocks } => {
            let mut report = place::joined_report(&members, &clocks, &indexed.samples);
            let cases = case_memories(
                &members,
                &clocks,
                &indexed,
                inputs.cases,
                report.contains_key("group"),
            );
            let mut counts = [0u64; 3];
            for memory in cases.values() {
                match memory.server_coverage.get("status").and_then(Value::as_str) {
                    Some("observed") => counts[0] += 1,
                    Some("partial") => counts[1] += 1,
                    Some("empty") => counts[2] += 1,
                    _ => {}
                }
            }
            let mut coverage = Map::new();
            coverage.insert("observed".into(), Value::from(counts[0]));
            coverage.insert("partial".into(), Value::from(counts[1]));
            coverage.insert("empty".into(), Value::from(counts[2]));
            report.insert("case_coverage".into(), Value::Object(coverage));
            (Value::Object(report), cases)
        }
    };
    // A million samples take a fifth of a second to free: let another thread
    // do it while the report goes on.
    std::thread::spawn(move || drop(indexed));
    let run_text_lines = text::run_lines(&server_join);
    let case_text_lines = cases
        .iter()
        .map(|(key, memory)| {
            let mut m = Map::new();
            memory.insert_into(&mut m);
            (key.clone(), text::case_lines(&Value::Object(m)))
        })
        .collect();
    Ok(JoinOutcome {
        server_join,
        server_targets,
        cases,
        run_text_lines,
        case_text_lines,
    })
}

/// The join decision (docs/server-join.md §3) over de-duplicated, non-empty samples.
fn decide(
    records: &[Value],
    indexed: &place::Indexed,
    direct_server: bool,
    offset_ns: Option<i64>,
    uncertainty_ns: Option<i64>,
) -> Result<Decision, JoinError> {
    let samples = &indexed.samples;
    let artifacts: Vec<&Value> = records
        .iter()
        .filter(|r| r.get("event_type").and_then(Value::as_str) == Some("infer.artifact"))
        .collect();
    let artifact = match artifacts.as_slice() {
        [one] if one.get("context").is_some_and(Value::is_object) => one.as_object(),
        _ => None,
    };
    let Some(artifact) = artifact else {
        return Ok(Decision::Unjoined(unjoined("missing_run_identity")));
    };
    let artifact_run_id = artifact
        .get("context")
        .and_then(|c| c.get("run_id"))
        .cloned()
        .unwrap_or(Value::Null);
    let mut run_ids: Vec<&str> = samples.iter().map(|s| s.run_id.as_str()).collect();
    run_ids.sort_unstable();
    run_ids.dedup();
    if run_ids.len() != 1 || artifact_run_id.as_str() != Some(run_ids[0]) {
        let mut m = Map::new();
        m.insert("status".into(), Value::from("unjoined"));
        m.insert("reason".into(), Value::from("run_id_mismatch"));
        m.insert("artifact_run_id".into(), artifact_run_id);
        m.insert(
            "telemetry_run_ids".into(),
            Value::Array(run_ids.into_iter().map(Value::from).collect()),
        );
        return Ok(Decision::Unjoined(Value::Object(m)));
    }
    let run_id = run_ids[0].to_owned();
    if let Some(reason) = place::membership_issue(&indexed.identities) {
        return Ok(Decision::Unjoined(unjoined(reason)));
    }
    if !direct_server {
        return Ok(Decision::Unjoined(unjoined("route_not_declared")));
    }
    if !indexed.state.contains(&0) {
        return Ok(Decision::Unjoined(unjoined("no_valid_server_samples")));
    }
    let by_identity = place::members_by_rank(&indexed.identities, &indexed.ids);
    let Some(client) = client_clock_domain(artifact) else {
        return Ok(Decision::Unjoined(unjoined("missing_client_clock_domain")));
    };
    let mut domains: Vec<String> = by_identity.iter().map(|(i, _)| i.clock_domain()).collect();
    domains.sort();
    domains.dedup();
    let Some(flags_domain) = clock::flags_domain(&domains, &client, offset_ns) else {
        return Ok(Decision::Unjoined(unjoined("clock_flags_ambiguous")));
    };
    let recorded = clock::artifact_alignments(records, &run_id)?;
    let mut clocks = Vec::with_capacity(domains.len());
    for domain in &domains {
        let (offset, uncertainty) = if *domain == flags_domain {
            (offset_ns, uncertainty_ns)
        } else {
            (None, None)
        };
        match clock::build_server_clock(&run_id, domain, &client, &recorded, offset, uncertainty)? {
            Ok(c) => clocks.push(c),
            Err(reason) => return Ok(Decision::Unjoined(unjoined(reason))),
        }
    }
    let mut members = Vec::with_capacity(by_identity.len());
    for (identity, indices) in by_identity {
        let domain = identity.clock_domain();
        let clock_index = domains.binary_search(&domain).unwrap_or(0);
        members.push(place::place_member(
            identity,
            indices,
            samples,
            clock_index,
            &clocks[clock_index],
        ));
    }
    if let Some(member) = members.iter().find(|m| m.placed_count() == 0) {
        let reason = if member.ambiguous > 0 {
            "clock_alignment_ambiguous"
        } else {
            "clock_alignment_uncovered"
        };
        return Ok(Decision::Unjoined(unjoined(reason)));
    }
    Ok(Decision::Joined { members, clocks })
}

/// Every case's server memory fields for the joined members (docs/server-join.md §9, docs/server-join.md §10).
fn case_memories(
    members: &[place::Member],
    clocks: &[ServerClock],
    indexed: &place::Indexed,
    cases: &[CaseWindow],
    grouped: bool,
) -> BTreeMap<String, CaseMemory> {
    let timelines: Vec<coverage::Timeline> = members
        .iter()
        .map(|m| {
            let clock = &clocks[m.clock];
            let offsets = m
                .applied
                .iter()
                .map(|(alignment, _)| {
                    alignment
                        .and_then(|i| clock.alignments.get(i))
                        .map_or(0, |a| a.offset_ns)
                })
                .collect();
            let invalidation = place::invalidation(m, &indexed.samples);
            coverage::timeline(m, offsets, invalidation.as_ref(), indexed)
        })
        .collect();
    cases
        .iter()
        .map(|case| {
            let views: Vec<coverage::CaseView> = timelines
                .iter()
                .map(|t| t.case_view(case.window, indexed))
                .collect();
            let memory = if grouped {
                let statuses: Vec<coverage::Status> = views.iter().map(|v| v.status).collect();
                let entries = members
                    .iter()
                    .zip(views)
                    .map(|(m, view)| {
                        let id = &m.identity;
                        let mut e = Map::new();
                        e.insert("rank".into(), telemetry::opt_int(id.rank));
                        e.insert("host".into(), Value::from(id.host.clone()));
                        e.insert("pid".into(), Value::from(id.pid));
                        e.insert("device_uuid".into(), telemetry::opt_str(&id.device_uuid));
                        e.insert(
                            "gpu_instance_id".into(),
                            telemetry::opt_str(&id.gpu_instance_id),
                        );
                        e.insert("observations".into(), view.observations);
                        e.insert("coverage".into(), view.coverage);
                        Value::Object(e)
                    })
                    .collect();
                CaseMemory {
                    server_observations: Value::Object(Map::new()),
                    server_coverage: coverage::group_coverage(&statuses),
                    server_members: Some(Value::Array(entries)),
                }
            } else {
                let view = views.into_iter().next();
                match view {
                    Some(view) => CaseMemory {
                        server_observations: view.observations,
                        server_coverage: view.coverage,
                        server_members: None,
                    },
                    None => CaseMemory::not_joined(),
                }
            };
            (case.case_key.clone(), memory)
        })
        .collect()
}
