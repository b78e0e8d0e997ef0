//! Findings for arms whose runs were measured by different tools
//! (docs/import.md): the metrics compared are stormlog's own definitions,
//! computed from each tool's raw times, but the tools' own figures of the
//! same name mean different things; each definition that differs between
//! the arms is named, so nobody reads one tool's TPOT against another's.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::import::Provenance;

/// How a finding about a differing definition starts.
pub const DIFFERS: &str = "definition differs: ";

/// Who measured a run: an imported tool's provenance, or stormlog itself.
fn who(p: Option<&Provenance>) -> String {
    match p {
        Some(p) => match &p.tool_version {
            Some(v) => format!("{} {v}", p.tool),
            None => p.tool.clone(),
        },
        None => "stormlog".to_owned(),
    }
}

/// The definitions a run's figures carry (stormlog's artifact: its own only).
fn definitions(p: Option<&Provenance>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(Value::Object(m)) = p.map(|p| &p.definitions) {
        for (k, v) in m {
            if let Some(s) = v.as_str() {
                out.insert(k.clone(), s.to_owned());
            }
        }
    }
    if let Some(p) = p {
        out.insert(
            "clock".into(),
            format!("{} ({})", p.clock_kind, p.clock_domain),
        );
    } else {
        out.insert("clock".into(), "unix_epoch (stormlog's artifact)".into());
    }
    out
}

/// One finding per figure whose definition differs between the first run of
/// each arm that another tool measured (or stormlog, when none did).
pub fn findings(baseline: &[Option<Provenance>], candidate: &[Option<Provenance>]) -> Vec<String> {
    let pick = |arm: &[Option<Provenance>]| arm.iter().find_map(|p| p.clone());
    let (b, c) = (pick(baseline), pick(candidate));
    if b.is_none() && c.is_none() {
        return Vec::new();
    }
    let (bd, cd) = (definitions(b.as_ref()), definitions(c.as_ref()));
    let (bw, cw) = (who(b.as_ref()), who(c.as_ref()));
    let mut out = Vec::new();
    let same_tool = b.as_ref().map(|p| &p.tool) == c.as_ref().map(|p| &p.tool);
    if !same_tool {
        out.push(format!(
            "the arms were measured by different tools (baseline {bw}, candidate {cw}): the metrics \
             compared are stormlog's client.* definitions, computed from each tool's raw times"
        ));
    }
    let keys: std::collections::BTreeSet<&String> = bd.keys().chain(cd.keys()).collect();
    for k in keys {
        if k.starts_with("client.") || k == "failures" || k == "percentiles" {
            continue; // stormlog's own: the same on both sides
        }
        let (x, y) = (bd.get(k), cd.get(k));
        if x != y {
            out.push(format!(
                "{DIFFERS}{k}: baseline ({bw}) {}; candidate ({cw}) {}",
                x.map_or("not recorded", String::as_str),
                y.map_or("not recorded", String::as_str)
            ));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn prov(tool: &str, tpot: &str) -> Provenance {
        Provenance {
            tool: tool.into(),
            tool_version: None,
            format: String::new(),
            format_version: None,
            identity: None,
            clock_kind: "unix_epoch".into(),
            clock_domain: "unix_epoch_ns".into(),
            per_request: true,
            definitions: serde_json::json!({"tool.tpot": tpot, "client.tpot": "same"}),
            notes: Value::Null,
        }
    }

    #[test]
    fn each_differing_definition_is_named() {
        let f = findings(
            &[Some(prov("aiperf", "(e2e - ttft) / (n - 1)"))],
            &[Some(prov("guidellm", "e2e / n"))],
        );
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f[0].contains("different tools"));
        assert!(
            f[1].contains("tool.tpot") && f[1].contains("e2e / n"),
            "{}",
            f[1]
        );
        // The same tool on both sides: nothing to say.
        let same = findings(&[Some(prov("aiperf", "x"))], &[Some(prov("aiperf", "x"))]);
        assert!(same.is_empty(), "{same:?}");
        assert!(findings(&[None], &[None]).is_empty());
    }
}
