//! The text report's server lines (docs/server-join.md §14), rendered from the
//! JSON the join produced, worded exactly as the reference prints them.

use serde_json::Value;

/// Python's `str()` of a JSON scalar as the reference interpolates it.
fn py_str(value: Option<&Value>) -> String {
    value.map_or_else(|| "None".into(), crate::py::value::str_form)
}

/// Run-level lines, printed right after `Memory observations: client-local`
/// (and any MLX lines).
pub fn run_lines(join: &Value) -> Vec<String> {
    let status = join.get("status").and_then(Value::as_str);
    match status {
        Some("joined") => joined_lines(join),
        None | Some("not_configured") => Vec::new(),
        Some(_) => vec![format!(
            "Server telemetry: unjoined ({})",
            py_str(join.get("reason"))
        )],
    }
}

fn joined_lines(join: &Value) -> Vec<String> {
    let mut lines = vec![format!(
        "Server telemetry: joined to case windows (declared direct route, {} clock evidence)",
        py_str(join.get("clock_alignment_evidence"))
    )];
    if let Some(counts) = join.get("case_coverage").filter(|c| c.is_object()) {
        let count = |k: &str| {
            counts
                .get(k)
                .map_or_else(|| "0".into(), |v| py_str(Some(v)))
        };
        lines.push(format!(
            "Server coverage: {} observed, {} partial, {} empty",
            count("observed"),
            count("partial"),
            count("empty")
        ));
    }
    let group = join.get("group").filter(|g| g.is_object());
    if let Some(group) = group {
        lines.push(format!(
            "Server group: {} ({} members)",
            py_str(group.get("group_id")),
            py_str(group.get("world_size"))
        ));
    }
    let ended = |label: String, invalidation: &Value| {
        format!(
            "Server identity ended{label} ({}); case windows after the last confirmed poll are not joined",
            py_str(invalidation.get("detail"))
        )
    };
    match group {
        None => {
            if let Some(inv) = join.get("invalidation").filter(|v| v.is_object()) {
                lines.push(ended(String::new(), inv));
            }
        }
        Some(group) => {
            let members = group.get("members").and_then(Value::as_array);
            for member in members.into_iter().flatten() {
                if let Some(inv) = member.get("invalidation").filter(|v| v.is_object()) {
                    lines.push(ended(
                        format!(" for rank {}", py_str(member.get("rank"))),
                        inv,
                    ));
                }
            }
        }
    }
    lines
}

/// One case's server lines from its memory fields, printed after all of the
/// case's other lines (and before any vLLM case lines).
pub fn case_lines(memory: &Value) -> Vec<String> {
    if let Some(members) = memory.get("server_members").and_then(Value::as_array) {
        return members.iter().flat_map(member_lines).collect();
    }
    let coverage = memory.get("server_coverage");
    let status = coverage
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str);
    let reason = || py_str(coverage.and_then(|c| c.get("reason")));
    if status == Some("empty") {
        return vec![format!("  server telemetry: none ({})", reason())];
    }
    let mut lines = Vec::new();
    if status == Some("partial") {
        lines.push(format!("  server telemetry: partial ({})", reason()));
    }
    if let Some(observations) = memory.get("server_observations").and_then(Value::as_object) {
        for (metric, observation) in observations {
            lines.push(metric_line("  ", metric, observation));
        }
    }
    lines
}

fn member_lines(member: &Value) -> Vec<String> {
    let where_ = member
        .get("device_uuid")
        .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        .or_else(|| member.get("host"));
    let label = format!("  rank {} ({})", py_str(member.get("rank")), py_str(where_));
    let coverage = member.get("coverage");
    let status = coverage
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str);
    let reason = || py_str(coverage.and_then(|c| c.get("reason")));
    if status == Some("empty") {
        return vec![format!("{label}: none ({})", reason())];
    }
    let mut lines = Vec::new();
    if status == Some("partial") {
        lines.push(format!("{label}: partial ({})", reason()));
    }
    if let Some(observations) = member.get("observations").and_then(Value::as_object) {
        for (metric, observation) in observations {
            lines.push(metric_line(&format!("{label} "), metric, observation));
        }
    }
    lines
}

fn metric_line(prefix: &str, metric: &str, observation: &Value) -> String {
    let label = format!(
        "{prefix}{metric} ({})",
        py_str(observation.get("observation_scope"))
    );
    match observation.get("maximum_recorded_bytes") {
        None | Some(Value::Null) => format!(
            "{label}: no valid samples ({} missing)",
            observation
                .get("missing_samples")
                .map_or_else(|| "0".into(), |v| py_str(Some(v)))
        ),
        Some(value) => format!(
            "{label}: max recorded {} bytes, {} samples",
            py_str(Some(value)),
            py_str(observation.get("valid_samples"))
        ),
    }
}
