//! What a report says about a run imported from another tool
//! (docs/import.md): where it came from, what each figure means, and, for
//! every block the tool's data cannot support, the reason, so a missing
//! figure reads as "not recorded" rather than as a zero.

use serde_json::{json, Map, Value};

use super::Report;
use crate::import::Provenance;
use crate::model::RunData;

/// The blocks an imported run cannot fill, with the reason.
pub fn unsupported(p: &Provenance, data: &RunData) -> Map<String, Value> {
    let mut out = Map::new();
    let measured: Vec<_> = data
        .requests
        .iter()
        .filter(|r| r.phase.as_ref().map(|s| s.as_str()) == Some("measured"))
        .collect();
    let tool = p.tool.as_str();
    if !p.per_request {
        out.insert(
            "requests".into(),
            json!(format!(
                "{tool} saved no per-request data (vLLM: run with --save-detailed): percentiles under \
                 stormlog's definitions, SLO re-judging and failures by request cannot be answered; \
                 the tool's own aggregates are in the imports table"
            )),
        );
    }
    if !measured.is_empty() && measured.iter().all(|r| r.intended_at_ns().is_none()) {
        out.insert(
            "client.ttft_from_intended".into(),
            json!(format!(
                "{tool} does not record intended (scheduled) send times"
            )),
        );
        out.insert(
            "client.e2e_from_intended".into(),
            json!(format!(
                "{tool} does not record intended (scheduled) send times"
            )),
        );
    }
    if !measured.is_empty()
        && measured
            .iter()
            .all(|r| r.output_token_source.as_str() != "server_usage")
    {
        out.insert(
            "client.tpot".into(),
            json!(format!(
                "{tool}'s output token counts come from its own tokenizer, not the server's usage; \
                 stormlog's client.tpot needs server-reported tokens (the tool's own TPOT is kept \
                 as tool.tpot_ms in v_import_requests)"
            )),
        );
    }
    if !measured.is_empty() && measured.iter().all(|r| r.chunk_gaps.is_empty()) {
        out.insert(
            "streaming".into(),
            json!(format!("{tool} records no per-chunk arrival times")),
        );
    }
    out.insert(
        "memory".into(),
        json!(format!("{tool} records no client memory samples")),
    );
    if p.clock_kind == "monotonic" {
        out.insert(
            "server_join".into(),
            json!(format!(
                "{tool}'s instants are on a monotonic clock with no epoch anchor ({}): server \
                 telemetry cannot be placed on them",
                p.clock_domain
            )),
        );
    }
    out
}

/// Adds the `imported` block to the JSON and its lines to the text.
pub fn annotate(rep: &mut Report, p: &Provenance, data: &RunData) {
    let missing = unsupported(p, data);
    let block = json!({
        "tool": p.tool,
        "tool_version": p.tool_version,
        "format": p.format,
        "format_version": p.format_version,
        "identity": p.identity,
        "clock_kind": p.clock_kind,
        "clock_domain": p.clock_domain,
        "per_request": p.per_request,
        "definitions": p.definitions,
        "notes": p.notes,
        "unsupported": missing,
    });
    if let Value::Object(m) = &mut rep.json {
        m.insert("imported".into(), block);
    }
    let mut lines = vec![format!(
        "Imported from {} {} ({}), clock {}",
        p.tool,
        p.tool_version
            .as_deref()
            .unwrap_or("(version not recorded)"),
        p.format,
        p.clock_domain
    )];
    for (k, v) in &missing {
        lines.push(format!(
            "  not available: {k}: {}",
            v.as_str().unwrap_or("")
        ));
    }
    for n in p.notes.as_array().into_iter().flatten() {
        lines.push(format!("  note: {}", n.as_str().unwrap_or("")));
    }
    rep.import_lines = lines;
}
